// How a device's changes become its report, whatever recorded them: a snapshot's trace
// (snapshot_report.cpp) or the memory events of PyTorch's profiler (profiler_trace.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_reader.h"

namespace oomlab::snapshot {

// Gives each source line or kind one number in a device's `names`, and each pair of them one
// number in its `stacks`.
class NameTable {
public:
    explicit NameTable(SnapshotDevice& device);
    std::uint32_t id(std::string name);
    std::uint32_t stack(std::string line, std::string kind, const std::string& metadata = {});

private:
    std::vector<std::string>& m_names;
    std::vector<SnapshotStack>& m_stacks;
    std::unordered_map<std::string, std::uint32_t> m_ids;
    std::unordered_map<std::uint64_t, std::uint32_t> m_stack_ids;  // line, kind: no metadata
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::uint32_t>
        m_labelled_stack_ids;  // line, kind, metadata
};

// From a device's state at the end (allocated, reserved), its `events`, `changes` and
// out-of-memory events: the state at the start, the timeline, the peak and what was alive
// then.
void replay_changes(SnapshotDevice& device, const SnapshotProgress& progress = {});

// Tells `progress` (when set) how far `phase` has come, every 65,536 of `total`.
inline void report_stage(const SnapshotProgress& progress, const char* phase, std::size_t done,
                         std::size_t total) {
    if (progress && done % 65536 == 0) {
        progress({phase, done, total});
    }
}

// A Chrome trace exported by torch.profiler.profile(profile_memory=True), read from `input` as
// it comes, as a report: its "[memory]" events, one device per device they name. Throws
// BadInput naming `source`.
SnapshotReport profiler_trace_report(PickleInput& input, const std::string& source,
                                     const std::function<void()>& after_chunk = {});

}  // namespace oomlab::snapshot
