// The model against what real GPUs did: replaying each snapshot's trace, the same requests must
// open segments of the same sizes as the recorded allocator opened. The snapshots were recorded
// by PyTorch 2.11 on an H200 (bench/results/gpu-2026-11-26/snapshots, one per allocator
// setting) and by another program on another GPU (the shared data's, skipped when absent).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_headroom.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "test_support.h"

namespace oomlab {
namespace {

struct RealTrace {
    const char* name;
    std::int64_t segment_allocs;  // recorded there
};

class RealTraces : public ::testing::TestWithParam<RealTrace> {};

std::string recorded(const std::string& name) {
    return std::string(test::source_root()) + "/bench/results/gpu-2026-11-26/snapshots/" + name;
}

void expect_faithful(const std::string& path, std::int64_t segment_allocs) {
    const std::vector<SnapshotWhatIf> results =
        snapshot_whatif(read_snapshot_report(path), std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    const allocator::Fidelity& fidelity = results[0].fidelity;
    EXPECT_EQ(fidelity.segment_allocs_recorded, segment_allocs);
    EXPECT_GE(fidelity.agreed * 100, fidelity.segment_allocs_recorded * 99) << path;
    EXPECT_EQ(fidelity.not_placed, 0) << path;
}

TEST_P(RealTraces, TheModelOpensTheSegmentsTheAllocatorOpened) {
    expect_faithful(recorded(GetParam().name), GetParam().segment_allocs);
}

INSTANTIATE_TEST_SUITE_P(H200, RealTraces,
                         ::testing::Values(RealTrace{"train-default.pickle.gz", 147},
                                           RealTrace{"train-expandable.pickle.gz", 97},
                                           RealTrace{"train-max-split-64.pickle.gz", 336},
                                           RealTrace{"train-roundup-4.pickle.gz", 117},
                                           RealTrace{"train-gc-0.6.pickle.gz", 95},
                                           RealTrace{"train-side-stream.pickle.gz", 148},
                                           RealTrace{"oom-default.pickle.gz", 74},
                                           RealTrace{"oom-expandable.pickle.gz", 60},
                                           RealTrace{"record-oom.pickle.gz", 28}),
                         [](const ::testing::TestParamInfo<RealTrace>& trace) {
                             std::string name = trace.param.name;
                             name = name.substr(0, name.find('.'));
                             for (char& c : name) {
                                 c = c == '-' ? '_' : c;
                             }
                             return name;
                         });

TEST(RealTraces, ASnapshotWhoseTraceBeganLateStartsFromItsSegments) {
    const std::string path = test::shared_data_dir() + "/snapshots/gpt2_generate_2648MiB.pickle";
    if (!std::filesystem::exists(path)) {
        GTEST_SKIP() << "no " << path;
    }
    expect_faithful(path, 13);
}

// Replayed under the settings it was recorded with, the model reserves what the GPU reserved.
TEST(RealTraces, ReplayedAsRecordedTheModelReservesWhatTheGpuReserved) {
    const SnapshotReport report = read_snapshot_report(recorded("train-max-split-64.pickle.gz"));
    const std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].recorded_conf, "max_split_size_mb:64");
    EXPECT_EQ(results[0].recorded.peak_reserved, report.devices[0].peak_reserved);
    EXPECT_EQ(results[0].recorded.failed_allocations, 0);
    // The same requests with expandable segments: what the H200 run with them reserved, 2.89
    // GiB, within 3%.
    const std::vector<SnapshotWhatIf> expandable =
        snapshot_whatif(report, std::string("expandable_segments:True"), std::nullopt);
    EXPECT_NEAR(double(expandable[0].replayed.peak_reserved), 2.89 * double(1 << 30),
                0.03 * 2.89 * double(1 << 30));
}

TEST(RealTraces, AnOomFromFragmentationIsReplayedUnderTheRecordedCap) {
    const SnapshotReport report = read_snapshot_report(recorded("oom-default.pickle.gz"));
    const std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].recorded.capacity, report.devices[0].peak_reserved);
    ASSERT_EQ(results[0].recorded.ooms.size(), 1u);
    EXPECT_TRUE(results[0].recorded.ooms[0].happens);
    // A device with 1 GiB more holds the request.
    const std::vector<SnapshotWhatIf> larger = snapshot_whatif(
        report, std::nullopt, report.devices[0].peak_reserved + (std::int64_t(1) << 30));
    ASSERT_EQ(larger[0].replayed.ooms.size(), 1u);
    EXPECT_FALSE(larger[0].replayed.ooms[0].happens);
}

// The snapshot a program writes when it turns its memory history on late: the same segments
// at the end, the trace without its first `share` of events (written by python3, as PyTorch
// writes pickles). Empty when there is no python3.
std::string begun_late(const std::string& source, double share, const test::TempDir& dir) {
    const std::string out = dir.file("late.pickle");
    const test::CommandResult cut = test::run_command(
        "python3 -c 'import gzip, pickle, sys; s = pickle.load(gzip.open(sys.argv[1])); "
        "t = s[\"device_traces\"][0]; s[\"device_traces\"][0] = t[int(len(t) * "
        "float(sys.argv[2])):]; "
        "pickle.dump(s, open(sys.argv[3], \"wb\"))' " +
        test::shell_quote(source) + " " + std::to_string(share) + " " + test::shell_quote(out) +
        " 2>&1");
    return cut.exit_code == 0 ? out : std::string();
}

// A trace begun late, replayed as recorded from the state the snapshot knows at its start,
// reserves at most what the program did, within 2%: every H200 trace without its first 20%,
// 40%, 60% and 80% of events. Expandable segments' pages mapped before the trace were left
// out (+9% to +17%); pages mapped past a hole opened a second segment (-26%).
TEST_P(RealTraces, ReplayedFromWhereALateTraceBeganItReservesWhatTheProgramDid) {
    if (test::run_command("command -v python3 >/dev/null 2>&1").exit_code != 0) {
        GTEST_SKIP() << "no python3 to write the snapshots";
    }
    const test::TempDir dir;
    for (const double share : {0.2, 0.4, 0.6, 0.8}) {
        const std::string path = begun_late(recorded(GetParam().name), share, dir);
        ASSERT_FALSE(path.empty());
        const SnapshotReport report = read_snapshot_report(path);
        const std::vector<SnapshotWhatIf> results =
            snapshot_whatif(report, std::nullopt, std::nullopt);
        ASSERT_EQ(results.size(), 1u);
        const double program = double(report.devices[0].peak_reserved);
        EXPECT_NEAR(double(results[0].recorded.peak_reserved), program, 0.02 * program)
            << GetParam().name << " begun after " << share * 100 << "% of its events";
    }
}

// Where the replay as recorded is not what the program reserved, the what-if says so, in the
// text and the JSON, rather than pass the model's baseline off as the program's.
TEST(RealTraces, AReplayThatIsNotTheProgramsIsCalledSo) {
    SnapshotReport report = read_snapshot_report(recorded("train-default.pickle.gz"));
    std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].baseline_is_the_programs);
    EXPECT_EQ(snapshot_whatif_text(report, results).find("not the program's"), std::string::npos);
    report.devices[0].peak_reserved += report.devices[0].peak_reserved / 10;  // 10% more
    results = snapshot_whatif(report, std::nullopt, std::nullopt);
    EXPECT_FALSE(results[0].baseline_is_the_programs);
    EXPECT_NE(snapshot_whatif_text(report, results)
                  .find("not the program's: it reserved at most 6.74 GiB (the snapshot's figure)"),
              std::string::npos)
        << snapshot_whatif_text(report, results);
    EXPECT_NE(snapshot_whatif_json(report, results).find("\"baseline_is_the_programs\":false"),
              std::string::npos);
}

// How close the H200's run (6.12 GiB reserved at most) comes to running out on smaller
// devices: on 8 GiB, 1.88 GiB to spare as it ran; on 3 GiB the default allocator's replay runs
// out of memory, where expandable segments keep 66 MiB to spare.
TEST(RealTraces, HeadroomOnADeviceOfAGivenSize) {
    const SnapshotReport report = read_snapshot_report(recorded("train-default.pickle.gz"));
    const std::int64_t peak = report.devices[0].peak_reserved;
    const std::vector<SnapshotHeadroom> roomy = snapshot_headroom(report, std::int64_t(8) << 30);
    ASSERT_EQ(roomy.size(), 1u);
    ASSERT_EQ(roomy[0].rows.size(), 3u);
    EXPECT_EQ(roomy[0].rows[0].how, "as it ran, on its own device");
    EXPECT_EQ(roomy[0].rows[0].left, (std::int64_t(8) << 30) - peak);
    EXPECT_EQ(roomy[0].rows[0].event, report.devices[0].peak_reserved_event);
    EXPECT_GT(report.devices[0].peak_reserved_event, 0u);
    EXPECT_EQ(roomy[0].rows[1].most_reserved, peak);  // the model replays what the GPU did
    const std::vector<SnapshotHeadroom> small = snapshot_headroom(report, std::int64_t(3) << 30);
    const std::vector<HeadroomRow>& rows = small[0].rows;
    EXPECT_LT(rows[0].left, 0);
    ASSERT_TRUE(rows[1].first_failure.has_value());
    EXPECT_EQ(rows[2].how, "replayed under expandable_segments:True");
    EXPECT_FALSE(rows[2].first_failure.has_value());
    EXPECT_NEAR(double(rows[2].left), 66.0 * (1 << 20), 1 << 20);
    const std::string text = snapshot_headroom_text(small);
    EXPECT_NE(text.find("replayed under the recorded settings (PyTorch's defaults): runs out of "
                        "memory: the first allocation the device could not hold is at event " +
                        std::to_string(*rows[1].first_failure + 1) + " "),  // an index, numbered
              std::string::npos)
        << text;
}

std::string advice_text(const std::string& name) {
    const SnapshotReport report = read_snapshot_report(recorded(name));
    std::string text;
    for (const SnapshotAdvice& item : snapshot_advice(report.devices.at(0), report.alloc_conf)) {
        text += item.what + ": " + item.why + "\n";
    }
    return text;
}

// `snapshot show` advises an allocator setting only after replaying the trace with it. The
// H200's fragmented OOM is not saved by expandable segments in the replay, under the cap it
// ran out of memory at; the same run with them on did run out of memory there too.
TEST(RealTraces, AllocatorSettingsAreAdvisedOnlyWhereTheReplayShowsThemHelp) {
    const std::string fragmented = advice_text("oom-default.pickle.gz");
    EXPECT_EQ(fragmented.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos) << fragmented;
    EXPECT_NE(fragmented.find("Expandable segments would not save it: replayed with it"),
              std::string::npos)
        << fragmented;
    const std::string cached = advice_text("train-default.pickle.gz");
    EXPECT_NE(cached.find("expandable_segments:True: at the peak"), std::string::npos) << cached;
    EXPECT_NE(cached.find("replayed with it, peak reserved 6.12 GiB -> 2."), std::string::npos)
        << cached;
    const std::string already_on = advice_text("train-expandable.pickle.gz");
    EXPECT_EQ(already_on.find("expandable_segments"), std::string::npos) << already_on;
}

// Dumped by an out-of-memory observer, the segments are the allocator's at the failure. The
// verdict counts the free blocks of the pool that serves the request: PyTorch's messages say
// 333.19 and 73.72 MiB "reserved but unallocated", both pools; 3.54 MiB of each is in the
// small pool's segments, which never serve a 284 MiB request.
TEST(RealTraces, AnOutOfMemoryIsJudgedOnTheRequestsPoolAsTheFailureLeftIt) {
    const std::string fragmented = advice_text("oom-default.pickle.gz");
    EXPECT_NE(fragmented.find("329.6 MiB was reserved but held no tensor in the large pool that "
                              "serves it (17 blocks, the largest 213.1 MiB), more than the "
                              "283.8 MiB asked for"),
              std::string::npos)
        << fragmented;
    const std::string in_use = advice_text("oom-expandable.pickle.gz");
    EXPECT_NE(
        in_use.find("hold less at the peak: at the out-of-memory (event 4757), 283.8 MiB was "
                    "asked with 136.34 GiB free on the device and only 70.2 MiB cached but "
                    "free in the large pool that serves it (12 blocks, the largest 14.9 MiB)"),
        std::string::npos)
        << in_use;
}

}  // namespace
}  // namespace oomlab
