// The stages a program annotated (PyTorch's "external_annotations": a START and an END of a
// name, with a time, for each torch.profiler.record_function and the optimizer's step and
// zero_grad), placed among a device's events by their times, and the peak inside each: what
// Mosaic calls the peak by stage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "event_clock.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_reader.h"
#include "snapshot_fields.h"

namespace oomlab::snapshot {

struct SnapshotAnnotation {
    std::int64_t device = 0;
    bool start = true;  // else its END
    // The document's text, kept once however often it is named (a snapshot may name one long
    // string in every annotation): valid while the document read lives.
    const std::string* name = nullptr;
    std::int64_t time_us = 0;
};

// The root's "external_annotations" (none when absent); throws FieldRefusal naming
// external_annotations[i] for a value out of place.
std::vector<SnapshotAnnotation> read_annotations(const PickleValue& root,
                                                 const SnapshotFields& fields);

// `device`'s annotations as spans of its events: each START to the next END of its name
// (nested ones each their own), a START never ended to the trace's end; an END never started
// is dropped. Where the events carry no times, stages_problem says so instead.
void place_stages(SnapshotDevice& device, const std::vector<SnapshotAnnotation>& annotations,
                  const EventClock& clock);

// The most allocated inside each span, fed the state after each event in turn by the replay:
// the states still able to be a span's peak are kept on a stack of falling values.
class StagePeaks {
public:
    explicit StagePeaks(SnapshotDevice& device);
    // The state after `state` events (0, 1, 2, ... in turn).
    void at(std::size_t state, std::int64_t allocated, std::int64_t reserved) {
        if (m_next_span < m_device.stage_spans.size()) {  // a trace without stages pays a test
            follow(state, allocated, reserved);
        }
    }

private:
    void follow(std::size_t state, std::int64_t allocated, std::int64_t reserved);

    struct Candidate {
        std::size_t state;
        std::int64_t allocated;
        std::int64_t reserved;
    };
    SnapshotDevice& m_device;
    std::vector<Candidate> m_falling;  // states each above every state after it
    std::size_t m_next_span = 0;       // the spans end in order
};

}  // namespace oomlab::snapshot
