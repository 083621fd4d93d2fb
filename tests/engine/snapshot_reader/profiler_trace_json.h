// A profiler's Chrome trace written as torch.profiler's export_chrome_trace writes one
// (PyTorch 2.x), for the tests of its reader: a span and a memory event of one thread, and the
// device such a trace reads as.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::test {

using Json = nlohmann::json;

inline Json span(const char* name, const char* category, double start, double duration) {
    return {{"ph", "X"}, {"cat", category}, {"name", name},   {"pid", 7},
            {"tid", 7},  {"ts", start},     {"dur", duration}};
}

// Bytes > 0 allocated, < 0 freed; the totals after the event, as the profiler writes them.
inline Json memory(double time, std::int64_t address, std::int64_t bytes, std::int64_t total) {
    return {{"ph", "i"},
            {"cat", "cpu_instant_event"},
            {"name", "[memory]"},
            {"pid", 7},
            {"tid", 7},
            {"ts", time},
            {"args",
             {{"Total Reserved", 0},
              {"Total Allocated", total},
              {"Bytes", bytes},
              {"Device Id", -1},
              {"Device Type", 0},
              {"Addr", address}}}};
}

// The first device a trace of `events` reads as.
inline SnapshotDevice device_of(const Json& events) {
    return snapshot_report_from_bytes(Json{{"traceEvents", events}}.dump(), "t.json").devices[0];
}

}  // namespace oomlab::test
