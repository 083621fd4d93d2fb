// What each real file the wild showed a reader getting wrong says now, on the file itself
// (tests/data/wild, with its provenance): a line named, a figure, a piece of advice.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_headroom.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "test_support.h"

namespace oomlab {
namespace {

// The first device of a kept file (`folder/name` under tests/data/wild).
SnapshotDevice first_device(const std::string& file) {
    return read_snapshot_report(test::fixture(file)).devices.at(0);
}

// verl's snapshot has no trace (its history kept stacks on blocks only): what no frame names was
// allocated while the history was off, not "before the trace began"; the advice says so too.
TEST(WildCorpus, WithoutATraceWhatNoFrameNamesWasAllocatedWhileTheHistoryWasOff) {
    const SnapshotDevice device = first_device("wild/snapshots/volcengine__verl__mem.pickle");
    ASSERT_EQ(device.events, 0u);
    std::int64_t unnamed = -1;
    for (const SnapshotLine& line : device.at_peak) {
        EXPECT_NE(line.where, kAllocatedBeforeTrace);
        if (line.where == kAllocatedWhileHistoryOff) {
            unnamed = line.bytes;
        }
    }
    std::int64_t named = 0;
    for (const SnapshotLine& kind : device.at_peak_by_kind) {
        named += kind.where == kAllocatedWhileHistoryOff ? 0 : kind.bytes;
    }
    EXPECT_EQ(unnamed, device.peak_allocated - named);
    EXPECT_EQ(unnamed, 318254592);  // 303.5 MiB, as plain Python sums the frameless blocks

    SnapshotDevice mostly_unnamed = device;  // the advice's words, where it is most of the peak
    mostly_unnamed.at_peak = {{kAllocatedWhileHistoryOff, device.peak_allocated / 2, 0}};
    const std::vector<SnapshotAdvice> advice = snapshot_advice(mostly_unnamed, std::nullopt);
    ASSERT_FALSE(advice.empty());
    EXPECT_EQ(advice[0].what, "record the history from the start");
    EXPECT_NE(advice[0].why.find("(50%) was allocated while the history was off"),
              std::string::npos)
        << advice[0].why;
}

// TraceLens's test of normalization layers trains a small net on a GPU: forward keeps 84% of its
// 7.8 MiB peak, too little for mixed precision or checkpointing to free room for anything;
// the lines that hold the most are still named.
TEST(WildCorpus, ASmallProfileIsNotToldToShrinkItsActivations) {
    const SnapshotDevice device =
        first_device("wild/traces/AMD-AGI__TraceLens__normalization_layer_test.json.gz");
    ASSERT_EQ(device.index, 0);
    EXPECT_EQ(device.peak_allocated, 8154624);
    std::vector<std::string> offered;
    for (const SnapshotAdvice& item : snapshot_advice(device, std::nullopt)) {
        offered.push_back(item.what);
    }
    // The lines that allocated, innermost outside torch (the net's forward), not the loop.
    EXPECT_EQ(offered, (std::vector<std::string>{
                           "start with test_perf_model.py:35 (forward)",
                           "start with test_perf_model.py:64 (create_normalization_layer_trace)"}));

    SnapshotDevice larger = device;  // the same shares, a thousand times the memory
    for (SnapshotTraceChange& change : larger.changes) {
        change.size *= 1000;
    }
    larger.peak_allocated *= 1000;
    for (SnapshotLine& kind : larger.at_peak_by_kind) {
        kind.bytes *= 1000;
    }
    bool shrinks = false;
    for (const SnapshotAdvice& item : snapshot_advice(larger, std::nullopt)) {
        shrinks |= item.what == "mixed precision or activation checkpointing";
    }
    EXPECT_TRUE(shrinks);
}

// A tutorial's trace with a schedule and record_function ranges: its memory is named by the
// forward that allocated it (torch_prof.py:36), not by the loop that calls prof.step() (line
// 99), whose annotations are the stages.
TEST(WildCorpus, ATracesLineIsTheInnermostFrameOutsideTorch) {
    const SnapshotReport report = read_snapshot_report(test::fixture(
        "wild/traces/"
        "sidnb13__torch-profiling-tutorial__dc3b0e7228dd_851.1752215573993169006.pt.trace.json"));
    const SnapshotDevice& gpu = report.devices.at(0);
    ASSERT_EQ(gpu.index, 0);
    bool forward = false;
    for (const SnapshotLine& line : gpu.at_peak) {
        EXPECT_EQ(line.where.find("torch_prof.py:99"), std::string::npos) << line.where;
        forward |= line.where == "torch_prof.py:36 (forward)";
    }
    EXPECT_TRUE(forward);
}

// ResNet-18 trained with DDP on MI300X GPUs, its trace holding the GPUs' kernels but the host's
// memory alone: no estimate puts that memory on a GPU, no advice for 8 bytes, and it is said
// that the GPU's memory was not recorded.
TEST(WildCorpus, TheHostOfAGpuRunIsNotEstimatedOnAGpu) {
    const SnapshotReport report = read_snapshot_report(
        test::fixture("wild/traces/AMD-AGI__TraceLens__train_resnet18.json.gz"));
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& host = report.devices[0];
    EXPECT_EQ(host.index, -1);
    EXPECT_TRUE(host_of_a_gpu_run(host));
    EXPECT_GT(host.gpu_kernels, 2000u);
    EXPECT_FALSE(gpu_estimate(host));
    EXPECT_TRUE(snapshot_advice(host, std::nullopt).empty());
    bool said = false;
    for (const std::string& note : snapshot_end_notes(host)) {
        said |= note.find("the trace recorded none of the GPU's") != std::string::npos;
    }
    EXPECT_TRUE(said);
}

// Qwen on an H100, its trace begun after 939.1 MiB was allocated: the expandable segments'
// replay covers the trace's own requests, and the advice says its figures are not the
// program's 2.45 GiB, as `snapshot whatif` does.
TEST(WildCorpus, AReplayOfALateTraceIsNotGivenAsTheProgramsFigures) {
    const SnapshotDevice device = first_device(
        "wild/traces/AMD-AGI__TraceLens__h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    std::string why;
    for (const SnapshotAdvice& item : snapshot_advice(device, std::nullopt)) {
        why += item.what.find("expandable_segments") != std::string::npos ? item.why : "";
    }
    EXPECT_NE(why.find("replayed with it, peak reserved 1.44 GiB -> 1.10 GiB (the replay's own "
                       "figures, not the program's 2.45 GiB"),
              std::string::npos)
        << why;
}

// The same trace's headroom on an 80 GiB device: the replays' rows count what the program
// reserved that the trace does not show (2.45 GiB - 1.44 GiB), as the row as it ran does.
TEST(WildCorpus, AReplayOfALateTracesHeadroomKeepsWhatTheTraceDoesNotShow) {
    const SnapshotReport report = read_snapshot_report(test::fixture(
        "wild/traces/AMD-AGI__TraceLens__h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"));
    const std::vector<SnapshotHeadroom> headroom =
        snapshot_headroom(report, std::int64_t(80) << 30);
    ASSERT_EQ(headroom.size(), 1u);
    const std::vector<HeadroomRow>& rows = headroom[0].rows;
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[1].most_reserved, rows[0].most_reserved) << rows[1].how;
    EXPECT_NE(rows[1].how.find("the program reserved that its trace does not show"),
              std::string::npos)
        << rows[1].how;
    EXPECT_LT(rows[2].most_reserved, rows[1].most_reserved) << rows[2].how;
    EXPECT_GT(rows[2].most_reserved, std::int64_t(2) << 30) << rows[2].how;
}

// A profiler's trace records its totals, not its segments: the what-if checks no segment of
// the model against it (each of BERT's 117 allocations said "recorded none") and tells its
// figures against the trace's.
TEST(WildCorpus, AWhatIfOfATraceChecksNoSegmentsItDoesNotRecord) {
    const SnapshotReport report = read_snapshot_report(test::fixture(
        "wild/traces/AMD-AGI__TraceLens__mi300_gaunernst_bert-small-uncased__1016001.json.gz"));
    const std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].segments_recorded);
    EXPECT_TRUE(results[0].fidelity.misses.empty());
    const std::string text = snapshot_whatif_text(report, results, {});
    EXPECT_NE(text.find("records its totals, not its segments"), std::string::npos) << text;
    EXPECT_EQ(text.find("recorded none"), std::string::npos) << text;
    EXPECT_EQ(text.find("the snapshot's figure"), std::string::npos) << text;
}

// A profiler's trace records no allocator settings (TraceLens's ViT on an H100): its what-if
// says they are not known and that it replays PyTorch's defaults, not that the program ran
// with them; the advice to turn expandable segments on (Qwen's trace) allows it was on.
TEST(WildCorpus, ATracesSettingsAreNotKnownNotPyTorchsDefaults) {
    const SnapshotReport report = read_snapshot_report(test::fixture(
        "wild/traces/AMD-AGI__TraceLens__h100_Falconsai_nsfw_image_detection__1016002.json.gz"));
    const std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].settings_recorded);
    const std::string text = snapshot_whatif_text(report, results, {});
    EXPECT_EQ(text.rfind("device 0, recorded with settings not known (a profiler's trace does "
                         "not record the allocator's settings): replayed with PyTorch's defaults\n",
                         0),
              0u)
        << text;
    EXPECT_NE(text.find("  replayed under PyTorch's defaults: peak reserved"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("recorded (PyTorch's defaults)"), std::string::npos) << text;
    EXPECT_NE(snapshot_whatif_json(report, results).find("\"recorded_alloc_conf\":null"),
              std::string::npos);
    const std::vector<SnapshotHeadroom> headroom =
        snapshot_headroom(report, std::int64_t(80) << 30);
    ASSERT_EQ(headroom.size(), 1u);
    for (const HeadroomRow& row : headroom[0].rows) {
        EXPECT_EQ(row.how.find("recorded settings (PyTorch's defaults"), std::string::npos)
            << row.how;
    }

    const SnapshotDevice qwen = first_device(
        "wild/traces/AMD-AGI__TraceLens__h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    std::string offered;
    for (const SnapshotAdvice& item : snapshot_advice(qwen, std::nullopt)) {
        offered += item.what + "\n";
    }
    EXPECT_NE(offered.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, if it was not on "
                           "already (a profiler's trace does not record the allocator's "
                           "settings)\n"),
              std::string::npos)
        << offered;
}

// CS336's small model's forward (PyTorch 2.9): every request fits the 584.0 MiB reserved before
// its trace, flat to the end. What of the peak reserved held no tensor is told where the most
// was allocated (show's peak, after event 293), not at the first event, where 81.8 MiB did.
TEST(WildCorpus, AFlatReservedPeakIsToldWhereTheMostWasAllocated) {
    const SnapshotReport report = read_snapshot_report(
        test::fixture("wild/snapshots/Okazaki-Yumemi__CS336__memory_small_forward_128.pickle"));
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].peak_event, 293u);
    const std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    const allocator::WhatIf& replay = results[0].recorded;
    EXPECT_EQ(replay.peak_reserved, 584LL << 20);
    EXPECT_EQ(replay.peak_event + 1, 293u);
    EXPECT_LT(replay.peak_reserved - replay.allocated_at_peak, 60LL << 20);
    const std::string text = snapshot_whatif_text(report, results, {});
    EXPECT_NE(text.find("peak reserved 584.0 MiB (after event 293: "), std::string::npos) << text;
    // On a device of 1 GiB, the headroom is told at the same event (it was one before).
    const std::string on_device = snapshot_whatif_text(
        report, snapshot_whatif(report, std::nullopt, std::int64_t(1) << 30), {});
    EXPECT_NE(on_device.find("on the device: 440.0 MiB left at the closest, after event 293 with "
                             "584.0 MiB reserved"),
              std::string::npos)
        << on_device;
}

// A cross-entropy seminar's snapshot, every segment opened inside its trace: nothing was
// allocated before it, and the 510 B its blocks hold beyond the trace's sizes (a 2 B request is
// a block of 512 B) is rounding, not "allocated before the trace began".
TEST(WildCorpus, ATraceThatOpensEverySegmentStartsFromNothing) {
    const SnapshotDevice device =
        first_device("wild/snapshots/mryab__efficient-dl-systems__vanilla_ce_snapshot.pickle");
    EXPECT_EQ(device.timeline.front().allocated, 0);
    EXPECT_EQ(device.timeline.front().reserved, 0);
    for (const SnapshotLine& line : device.at_peak) {
        EXPECT_FALSE(allocated_unrecorded(line.where)) << line.where << " " << line.bytes;
    }
}

// The same snapshot's line that asked for 2 B (a scalar) holds a block of 512 B: its figure is
// the block's, with what was asked beside it, as Wuyh11's "4 B ... (1 block)" was not; a line
// whose rounding does not show in print says nothing more.
TEST(WildCorpus, ALinesFigureIsItsBlocksWithWhatWasAskedWhereThatDiffers) {
    const SnapshotDevice device =
        first_device("wild/snapshots/mryab__efficient-dl-systems__vanilla_ce_snapshot.pickle");
    const SnapshotLine* scalar = nullptr;
    const SnapshotLine* logits = nullptr;
    for (const SnapshotLine& line : device.at_peak) {
        if (line.where.find("profile_vanilla_ce.py:11 ") != std::string::npos) {
            scalar = &line;
        } else if (line.where.find("profile_vanilla_ce.py:10 ") != std::string::npos) {
            logits = &line;
        }
    }
    ASSERT_NE(scalar, nullptr);
    EXPECT_EQ(scalar->bytes, 2);
    EXPECT_EQ(line_bytes_held(*scalar), 512);
    EXPECT_EQ(line_blocks_words(*scalar), "1 block; 2 B asked for");
    ASSERT_NE(logits, nullptr);
    EXPECT_EQ(logits->bytes, 262144002);
    EXPECT_EQ(line_bytes_held(*logits), 262144512);
    EXPECT_EQ(line_blocks_words(*logits), "2 blocks");
}

// A test fixture cut to the first 50 events of a run: the trace leaves 384.1 MiB allocated
// that the dumped segments hold free, said as frees missing after its end (not a start raised).
TEST(WildCorpus, ATraceCutShortIsSaidToMissItsLastFrees) {
    const SnapshotDevice device =
        first_device("wild/snapshots/drisspg__transformer_nuggets__mini_snapshot.pickle");
    EXPECT_EQ(device.peak_allocated, 402752512);
    ASSERT_EQ(device.trace_problems.size(), 1u);
    EXPECT_EQ(device.trace_problems[0].rfind("the trace leaves 384.1 MiB more allocated than the "
                                             "segments dumped at the end hold: frees after its "
                                             "last event are missing",
                                             0),
              0u)
        << device.trace_problems[0];
}

// A PyTorch 1.10 course trace freeing 20 scalars made before the profiler started: said in the
// profiler's words, not a snapshot's ring buffer.
TEST(WildCorpus, AProfilersEarlyFreesAreSaidInItsOwnWords) {
    const SnapshotDevice host = first_device("wild/traces/RasmusJuul__dtu_mlops__trace.json");
    ASSERT_FALSE(host.trace_problems.empty());
    EXPECT_NE(host.trace_problems[0].find("the profiler started after it was allocated"),
              std::string::npos)
        << host.trace_problems[0];
    EXPECT_EQ(host.trace_problems[0].find("max_entries"), std::string::npos);
}

// Kineto's 2021 sample (ResNet-50 on a V100, before PyTorch 1.10): its host memory is the
// events' sum, not "the profiler's totals", and is said to be the host's beside the GPU's; its
// advice is that alone (it named a host line as where to start, as if it were the GPU's).
TEST(WildCorpus, AnOldTracesHostIsItsEventsSumBesideItsGpu) {
    const SnapshotReport report = read_snapshot_report(
        test::fixture("wild/traces/pytorch__kineto__worker0.1623143089861.pt.trace.json.gz"));
    const SnapshotDevice& host = report.devices.back();
    ASSERT_EQ(host.index, -1);
    EXPECT_NE(snapshot_end_words(host).find("the events' net sum over the trace"),
              std::string::npos)
        << snapshot_end_words(host);
    EXPECT_FALSE(gpu_estimate(host));
    bool said = false;
    for (const std::string& note : snapshot_end_notes(host)) {
        said |= note.find("this is the host's memory, not the GPU's") != std::string::npos;
    }
    EXPECT_TRUE(said);
    const std::vector<SnapshotAdvice> advice = snapshot_advice(host, std::nullopt);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_EQ(advice[0].what, "the host's memory is the machine's RAM, not the GPU's");
    EXPECT_EQ(advice[0].why.rfind("55.1 MiB of it was allocated at the peak: holding less", 0), 0u)
        << advice[0].why;
    EXPECT_NE(advice[0].why.find("The GPU's memory is its device's section"), std::string::npos);
}

// Its GPU, likewise without totals: the 0 B at the end and the 2.60 GiB peak are the events'
// own sums, counted from the trace's start; what was allocated before it began (ResNet-50's
// weights, the optimizer's state) is not known, and the words say so.
TEST(WildCorpus, AnOldTracesGpuFiguresAreCountedFromTheTracesStart) {
    const SnapshotReport report = read_snapshot_report(
        test::fixture("wild/traces/pytorch__kineto__worker0.1623143089861.pt.trace.json.gz"));
    const SnapshotDevice& gpu = report.devices.front();
    ASSERT_EQ(gpu.index, 0);
    EXPECT_EQ(snapshot_end_words(gpu),
              "0 B allocated at the end, the events' net sum over the trace (the profiler wrote "
              "no totals before PyTorch 1.10: what was allocated before the trace began is not "
              "known, and what was reserved is not recorded)");
    EXPECT_EQ(snapshot_peak_words(gpu),
              "peak allocated: 2.60 GiB above what was allocated when the trace began, after "
              "event 434 of 8220");
    const SnapshotDevice& host = report.devices.back();
    EXPECT_NE(snapshot_peak_words(host).find("above what was allocated when the trace began"),
              std::string::npos)
        << snapshot_peak_words(host);
}

// The same sample's what-if: its trace records no reserved figure, so its replay is not told
// against a program that "reserved at most 0 B", nor its headroom against 0 B as it ran.
TEST(WildCorpus, AWhatIfOfATraceWithoutTotalsIsComparedWithNothingOfTheProgram) {
    const SnapshotReport report = read_snapshot_report(
        test::fixture("wild/traces/pytorch__kineto__worker0.1623143089861.pt.trace.json.gz"));
    const std::vector<SnapshotWhatIf> results = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].program_reserved_recorded);
    const std::string text = snapshot_whatif_text(report, results, {});
    EXPECT_NE(text.find("not comparable with the program: the trace records no reserved figure"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("at most 0 B"), std::string::npos) << text;
    EXPECT_EQ(text.find("records its totals"), std::string::npos) << text;
    EXPECT_EQ(text.find("differs by more than 2%"), std::string::npos) << text;
    EXPECT_NE(snapshot_whatif_json(report, results).find("\"program_peak_reserved\":null"),
              std::string::npos);
    const std::vector<SnapshotHeadroom> headroom =
        snapshot_headroom(report, std::int64_t(16) << 30);
    ASSERT_EQ(headroom.size(), 1u);
    for (const HeadroomRow& row : headroom[0].rows) {
        EXPECT_NE(row.how.rfind("as it ran", 0), 0u) << row.how;
    }
}

// BERT on an MI300X (ROCm 6.4, its trace's hip_runtime_version): the cache the advice would
// shrink is set by HIP's variable, and expandable segments came to ROCm's builds in 2.11 only.
// Its H100 twin is advised CUDA's.
TEST(WildCorpus, ATraceRecordedOnRocmIsAdvisedHipsSettings) {
    const auto advice_of = [](const std::string& file) {
        const SnapshotDevice device = first_device("wild/traces/" + file);
        std::string all;
        for (const SnapshotAdvice& item : snapshot_advice(device, std::nullopt)) {
            all += item.what + "\n";
        }
        return std::make_pair(device.rocm, all);
    };
    const auto [rocm, on_mi300] =
        advice_of("AMD-AGI__TraceLens__mi300_gaunernst_bert-small-uncased__1016001.json.gz");
    EXPECT_TRUE(rocm);
    EXPECT_NE(on_mi300.find("PYTORCH_HIP_ALLOC_CONF=expandable_segments:True (ROCm builds of "
                            "PyTorch 2.11 and later, with ROCm 7)"),
              std::string::npos)
        << on_mi300;
    EXPECT_EQ(on_mi300.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos) << on_mi300;
    const auto [cuda_rocm, on_h100] =
        advice_of("AMD-AGI__TraceLens__h100_gaunernst_bert-small-uncased__1016001.json.gz");
    EXPECT_FALSE(cuda_rocm);
    EXPECT_EQ(on_h100.find("PYTORCH_HIP_ALLOC_CONF"), std::string::npos) << on_h100;
}

}  // namespace
}  // namespace oomlab
