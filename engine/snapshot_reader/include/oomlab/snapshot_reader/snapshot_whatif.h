// A snapshot's trace replayed through the model of PyTorch's caching allocator: how closely the
// model follows what the real allocator did (fidelity), and what the same requests would have
// reserved under other PYTORCH_CUDA_ALLOC_CONF settings (`oomlab-cli snapshot whatif`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

struct SnapshotWhatIf {
    int device = 0;
    std::string recorded_conf;  // what the program ran with ("" for the defaults)
    // Whether the file records those settings (a snapshot's allocator_settings): a profiler's
    // trace does not, and its replay "as recorded" then takes PyTorch's defaults.
    bool settings_recorded = true;
    std::string conf;             // what was replayed
    std::string capacity_source;  // where capacity came from, in words
    bool capacity_given = false;  // by the caller (device_memory), not read from the trace
    allocator::Fidelity fidelity;
    // A profiler's trace records its totals, not its segments: nothing to check the model's
    // segments against one by one (fidelity's misses are then left empty).
    bool segments_recorded = true;
    // What the replay could not take as the program had it: recorded settings that are not
    // valid, settings that change PyTorch's allocation but not the model's (in words).
    std::vector<std::string> notes;
    allocator::WhatIf recorded;  // the requests replayed under the recorded settings
    allocator::WhatIf replayed;  // under `conf`
    // What the program itself reserved at most (the snapshot's figure), and whether the replay
    // under the recorded settings comes within 2% of it: where it does not (a trace that began
    // late without what the replay needs to start where the program was, a run of the model
    // that went its own way), the what-if is told against the model's own baseline.
    std::int64_t program_peak_reserved = 0;
    std::size_t program_peak_reserved_event = 0;
    bool baseline_is_the_programs = true;
    // Whether the file records what the program reserved: a profiler's trace before PyTorch
    // 1.10 wrote no totals, so there is no figure of the program's to compare the replay with.
    bool program_reserved_recorded = true;
};

// The trace of `device` as the model reads it: its events in order and, when it began after
// the program started, the segments and allocated blocks before its first event.
allocator::AllocatorTrace allocator_trace(const SnapshotDevice& device,
                                          const allocator::AllocatorSettings& settings);

// For each device with a trace. `conf` (PYTORCH_CUDA_ALLOC_CONF's syntax; BadInput when it is
// not) defaults to the recorded settings; `device_memory` (bytes) to what the program reserved
// at most when the trace ran out of memory, else none.
std::vector<SnapshotWhatIf> snapshot_whatif(const SnapshotReport& report,
                                            const std::optional<std::string>& conf,
                                            std::optional<std::int64_t> device_memory);

// Why the settings a program ran with are not known: "a profiler's trace does not record the
// allocator's settings", or a snapshot's that carries no allocator_settings.
std::string unrecorded_settings_words(bool from_trace);

// A device's memory as a person writes it ("80GiB", "80 GiB", "80G", or bytes); BadInput
// naming `control` (the option or field it was typed in) when it is not one, or is less than
// 1 MiB or more than 1 PiB.
std::int64_t device_memory_bytes(const std::string& text, const std::string& control);

std::string snapshot_whatif_json(const SnapshotReport& report,
                                 const std::vector<SnapshotWhatIf>& results);

// The controls the text names, in the words of the front end that shows it.
struct WhatIfControls {
    std::string device_memory = "--device-memory";  // what sets the device's memory
    std::string all_misses = "--json";              // what lists every miss of the model
    std::size_t misses_shown = 5;                   // listed in the text; the rest counted
};
std::string snapshot_whatif_text(const SnapshotReport& report,
                                 const std::vector<SnapshotWhatIf>& results,
                                 const WhatIfControls& controls = {});

}  // namespace oomlab
