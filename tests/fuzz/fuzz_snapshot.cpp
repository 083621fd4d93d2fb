// Memory snapshots and profiler traces (the seeds hold both): any bytes give a report or
// BadInput, never a crash, a hang or unbounded memory (the readers' limits: plain data only,
// 64 levels, memo references checked, work bounded by the file's size).
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        const oomlab::SnapshotReport report = oomlab::snapshot_report_from_bytes(
            std::string(reinterpret_cast<const char*>(data), size), "fuzz.pickle");
        oomlab::snapshot_report_json(report);
    } catch (const oomlab::BadInput&) {
    }
    return 0;
}
