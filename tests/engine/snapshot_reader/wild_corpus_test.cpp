// The memory snapshots and profiler traces that other people's programs wrote, kept with their
// provenance in tests/data/wild (PROVENANCE.tsv says where each came from and its licence):
// every one is read, and its figures are those a plain-Python reading of the same file gives
// (tests/data/wild/read_independently.py: pickle, json and gzip alone). A trace without memory
// events is refused as such, and only where Python finds none either.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "test_support.h"

namespace oomlab {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus(const std::string& folder) {
    std::vector<std::string> files;
    for (const fs::directory_entry& entry :
         fs::directory_iterator(test::fixture("wild/" + folder))) {
        if (entry.path().extension() != ".tsv") {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

// What plain Python reads of `path`; null when there is no python3.
nlohmann::json independent_reading(const std::string& path) {
    if (test::run_command("command -v python3 >/dev/null 2>&1").exit_code != 0) {
        return nullptr;
    }
    const test::CommandResult read = test::run_command(
        "python3 " + test::shell_quote(test::fixture("wild/read_independently.py")) + " " +
        test::shell_quote(path) + " 2>&1");
    EXPECT_EQ(read.exit_code, 0) << path << ": " << read.out;
    return nlohmann::json::parse(read.out, nullptr, false);
}

bool names_a_line(const SnapshotDevice& device) {
    return std::any_of(device.at_peak.begin(), device.at_peak.end(), [](const SnapshotLine& line) {
        return !allocated_unrecorded(line.where) && line.where.rfind(kNoPythonFrame, 0) != 0;
    });
}

// Each device as Python reads it: the end state, the events and the peak; and where an
// allocation carries a Python frame, a line named at the peak.
void expect_as_python_reads(const SnapshotReport& report, const nlohmann::json& python) {
    ASSERT_EQ(report.devices.size(), python["devices"].size()) << report.source;
    for (const SnapshotDevice& device : report.devices) {
        const std::string key = std::to_string(device.index);
        ASSERT_TRUE(python["devices"].contains(key)) << report.source << ": device " << key;
        const nlohmann::json& figures = python["devices"][key];
        const std::string where = report.source + ", device " + key;
        EXPECT_EQ(device.events, figures["events"].get<std::size_t>()) << where;
        EXPECT_EQ(device.peak_allocated, figures["peak_allocated"].get<std::int64_t>()) << where;
        EXPECT_EQ(device.allocated, figures["allocated"].get<std::int64_t>()) << where;
        if (python["kind"] == "snapshot") {
            EXPECT_EQ(device.segments, figures["segments"].get<std::int64_t>()) << where;
            EXPECT_EQ(device.reserved, figures["reserved"].get<std::int64_t>()) << where;
            EXPECT_EQ(device.cached_free, figures["cached_free"].get<std::int64_t>()) << where;
            EXPECT_EQ(device.pending_free, figures["pending_free"].get<std::int64_t>()) << where;
            if (figures["lines"].get<bool>()) {
                EXPECT_TRUE(names_a_line(device)) << where << ": its allocations carry frames";
            }
            continue;
        }
        // A trace: reserved as its totals say, or not recorded (before PyTorch 1.10); what was
        // cached is their difference, never a sum over blocks it does not have.
        EXPECT_TRUE(device.from_trace) << where;
        EXPECT_EQ(device.reserved_recorded, !figures["reserved"].is_null()) << where;
        if (!figures["reserved"].is_null()) {
            EXPECT_EQ(device.reserved, figures["reserved"].get<std::int64_t>()) << where;
            EXPECT_EQ(device.cached_free, figures["cached_free"].get<std::int64_t>()) << where;
        } else {
            EXPECT_NE(snapshot_end_words(device).find("reserved is not recorded"),
                      std::string::npos)
                << where;
            EXPECT_EQ(snapshot_free_words(device), "") << where;
        }
    }
}

TEST(WildCorpus, EverySnapshotReadsAsPlainPythonReadsIt) {
    const std::vector<std::string> files = corpus("snapshots");
    ASSERT_GE(files.size(), 10u);
    for (const std::string& path : files) {
        const nlohmann::json python = independent_reading(path);
        if (python.is_null()) {
            GTEST_SKIP() << "no python3 to read the corpus independently";
        }
        const SnapshotReport report = read_snapshot_report(path);
        expect_as_python_reads(report, python);
    }
}

TEST(WildCorpus, EveryTraceReadsAsPlainPythonReadsItOrHasNoMemoryEvents) {
    const std::vector<std::string> files = corpus("traces");
    ASSERT_GE(files.size(), 10u);
    std::size_t with_memory = 0;
    for (const std::string& path : files) {
        const nlohmann::json python = independent_reading(path);
        if (python.is_null()) {
            GTEST_SKIP() << "no python3 to read the corpus independently";
        }
        if (python["devices"].empty()) {
            try {
                read_snapshot_report(path);
                ADD_FAILURE() << path << ": read, though it holds no memory event";
            } catch (const BadInput& refusal) {
                const std::string why = refusal.what();
                if (python["kind"] == "archive") {  // its files named, to extract one
                    const std::string first = python["members"][0];
                    EXPECT_NE(
                        why.find("a gzip'd tar archive of " +
                                 std::to_string(python["members"].size()) + " files (" + first),
                        std::string::npos)
                        << why;
                    EXPECT_NE(why.find("tar xzf"), std::string::npos) << why;
                    continue;
                }
                EXPECT_NE(why.find("without memory events"), std::string::npos) << why;
                // A trace whose header says it was recorded with profile_memory (vLLM's CUDA
                // graph replays, which allocate nothing) is not told to turn it on.
                if (path.find("vllm_prefilldecode_piecewise") != std::string::npos) {
                    EXPECT_NE(why.find("though recorded with profile_memory"), std::string::npos)
                        << why;
                }
            }
            continue;
        }
        ++with_memory;
        const SnapshotReport report = read_snapshot_report(path);
        expect_as_python_reads(report, python);
        // A GPU that held memory leads; the CPU's section comes after it.
        if (std::any_of(report.devices.begin(), report.devices.end(), [](const auto& device) {
                return device.index >= 0 && !holds_little(device);
            })) {
            EXPECT_GE(report.devices.front().index, 0) << path;
        }
    }
    EXPECT_GE(with_memory, 3u);
}

// Recorded with stacks="all": what backward allocated in autograd's own thread has C++ frames
// alone, and is named by its op and autograd node rather than as a block with no frame.
TEST(WildCorpus, CppFramesOfBackwardNameTheirOpAndNode) {
    const SnapshotReport report = read_snapshot_report(test::fixture(
        "wild/snapshots/"
        "NiuHuangxiaozi__assignment2-systems__forward_and_backward_memory_snapshot_200.pickle"));
    ASSERT_EQ(report.devices.size(), 1u);
    const std::vector<SnapshotLine>& lines = report.devices[0].at_peak;
    const auto line = std::find_if(lines.begin(), lines.end(), [](const SnapshotLine& l) {
        return l.where == std::string(kNoPythonFrame) + " aten::slice_backward in SliceBackward0";
    });
    ASSERT_NE(line, lines.end());
    EXPECT_EQ(line->blocks, 1u);
    for (const SnapshotLine& each : lines) {
        EXPECT_NE(each.where, kNoPythonFrame) << "every block of this file carries frames";
    }
}

// vLLM's cache under verl: blocks freed but waiting on another stream are said, beside what is
// allocated and what is cached free, so that the three add up to what was reserved.
TEST(WildCorpus, BlocksWaitingOnAnotherStreamAreSaid) {
    const SnapshotReport report =
        read_snapshot_report(test::fixture("wild/snapshots/volcengine__verl__mem.pickle"));
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.allocated + device.cached_free + device.pending_free, device.reserved);
    bool said = false;
    for (const std::string& note : snapshot_end_notes(device)) {
        said |= note.find("freed by the program but not yet reusable") != std::string::npos;
    }
    EXPECT_TRUE(said);
}

}  // namespace
}  // namespace oomlab
