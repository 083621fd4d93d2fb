// The layouts real programs wrote that no kept file in tests/data/wild shows, rebuilt field by
// field (tests/data/snapshots/make_wild_layouts.py).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "test_support.h"
#include "wild_layout.h"

namespace oomlab {
namespace {

using test::lines_of;
using test::WildLayout;

// torch.compile's frames carry a line of 2**64-1: read as a line not recorded, never a refusal
// of the file; its generated code is PyTorch's, so the line named is the program's own.
TEST_F(WildLayout, ALineOutsideSixtyFourBitsIsNoLineAndGeneratedCodeIsTorchs) {
    const SnapshotReport report = read("huge-line");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.peak_allocated, 12 * test::kMiB);
    using Lines = std::vector<std::pair<std::string, std::int64_t>>;
    EXPECT_EQ(lines_of(device), (Lines{{"train.py:30 (forward)", 8 * test::kMiB},
                                       {"train.py:31 (forward)", 4 * test::kMiB}}));
    EXPECT_EQ(report.alloc_conf, "") << "max_split_size -1 is the default";
}

// Lightning runs the forward inside optimizer.step(closure): the activations are the forward's,
// not the optimizer step's (their frames hold torch/optim/ beyond the model's forward), at the
// peak and at the out-of-memory, and the advice for activations is given.
TEST_F(WildLayout, AForwardInsideTheOptimizersStepIsTheForwards) {
    const SnapshotReport report = read("closure-forward");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    ASSERT_EQ(device.ooms.size(), 1u);
    ASSERT_FALSE(device.at_peak_by_kind.empty());
    EXPECT_EQ(device.at_peak_by_kind.front().where, "forward");
    EXPECT_EQ(device.at_peak_by_kind.front().bytes, 40 * test::kMiB);
    for (const SnapshotLine& kind : device.at_peak_by_kind) {
        EXPECT_NE(kind.where, "optimizer step");
    }
    bool activations = false;
    for (const SnapshotAdvice& advice : snapshot_advice(device, report.alloc_conf)) {
        activations |= advice.why.find("forward") != std::string::npos;
    }
    EXPECT_TRUE(activations);
}

// scaled_dot_product_attention fell back to its math kernel, which kept each head's weights
// for backward (its C++ frames say so): they are forward's, and named, with the fused kernels
// that keep none of them.
TEST_F(WildLayout, TheMathAttentionKernelsWeightsAreNamedWithTheFusedKernels) {
    const SnapshotReport report = read("math-attention");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.peak_allocated, 312 * test::kMiB);
    ASSERT_FALSE(device.at_peak_by_kind.empty());
    EXPECT_EQ(device.at_peak_by_kind.front().where, kMathAttentionFallbackKind);
    EXPECT_EQ(device.at_peak_by_kind.front().bytes, 256 * test::kMiB);
    std::string fused;
    for (const SnapshotAdvice& advice : snapshot_advice(device, report.alloc_conf)) {
        if (advice.what == "a fused attention kernel") {
            fused = advice.why;
        }
    }
    EXPECT_NE(fused.find("math kernel had kept 256.0 MiB (82%)"), std::string::npos) << fused;
    EXPECT_NE(fused.find("sdpa_kernel("), std::string::npos) << fused;
}

// Every tensor made through one allocate() of the program's (FlexGen's): the frames above it
// say the weights were made, and the breakdown says weights, not "other"; the lines are its
// callers'.
TEST_F(WildLayout, WeightsMadeThroughAnAllocationHelperAreWeights) {
    const SnapshotReport report = read("helper-weights");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    ASSERT_FALSE(device.at_peak_by_kind.empty());
    EXPECT_EQ(device.at_peak_by_kind.front().where, "weights");
    EXPECT_EQ(device.at_peak_by_kind.front().bytes, 12 * test::kMiB);
    for (const SnapshotLine& kind : device.at_peak_by_kind) {
        EXPECT_NE(kind.where, "other") << kind.bytes;
    }
    // The lines named are allocate()'s callers', not the helper's own.
    EXPECT_EQ(lines_of(device), (std::vector<std::pair<std::string, std::int64_t>>{
                                    {"flexgen/flex_opt.py:143 (init_weight_list)", 6 * test::kMiB},
                                    {"flexgen/flex_opt.py:144 (init_weight_list)", 6 * test::kMiB},
                                    {"flexgen/flex_opt.py:300 (forward)", 2 * test::kMiB}}));
}

// A trace of a segment freed and nothing allocated (a 29.66 GiB model's snapshot held only
// that): its peak is what was alive at the dump, and the report says so.
TEST_F(WildLayout, ATraceThatAllocatesNothingIsNotTheRunsPeak) {
    const SnapshotReport report = read("segments-only");
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].peak_allocated, 24 * test::kMiB);
    std::string notes;
    for (const std::string& note : snapshot_end_notes(report.devices[0])) {
        notes += note + "\n";
    }
    EXPECT_NE(notes.find("the trace holds no allocation (1 event, not an allocation): its peak is "
                         "what was alive when the snapshot was dumped"),
              std::string::npos)
        << notes;
    // Its peak stood before the one event: the trace's start, not "after event 0".
    EXPECT_NE(snapshot_peak_words(report.devices[0])
                  .find("at the start of the trace, before its "
                        "1 event"),
              std::string::npos)
        << snapshot_peak_words(report.devices[0]);
    const SnapshotReport allocating = read("late-history");
    for (const std::string& note : snapshot_end_notes(allocating.devices[0])) {
        EXPECT_EQ(note.find("holds no allocation"), std::string::npos) << note;
    }
}

// A process that saw 4 GPUs and held nothing on any when it dumped (SunnySood80's snapshot,
// whose licence lets us keep no copy): segments are dumped whether the history was recorded or
// not, so that is not why; its settings are quoted.
TEST_F(WildLayout, ASnapshotOfNoMemorySaysWhenSuchAOneIsTaken) {
    const SnapshotReport report = read("empty-devices");
    EXPECT_TRUE(report.devices.empty());
    EXPECT_EQ(report.devices_seen, 4u);
    const std::string words = snapshot_empty_words(report);
    EXPECT_NE(words.find("the caching allocator held no memory on any of the 4 devices this "
                         "process saw when the snapshot was taken: it was dumped before the "
                         "first CUDA allocation, after torch.cuda.empty_cache(), or by a process "
                         "(a rank) that allocated nothing"),
              std::string::npos)
        << words;
    EXPECT_NE(words.find("expandable_segments:True"), std::string::npos) << words;
    EXPECT_NE(words.find("max_split_size_mb:64"), std::string::npos) << words;
    EXPECT_EQ(words.find("history was not recorded"), std::string::npos) << words;
}

// A dump with the history off (voxelflex's, whose licence lets us keep no copy) has no trace,
// so no peak: its cached share and what holds memory are told at the dump.
TEST_F(WildLayout, WithoutATraceTheAdviceSpeaksOfTheDump) {
    const SnapshotReport report = read("no-history");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(snapshot_peak_words(device),
              "allocated at the dump: 24.0 MiB (no trace, so no peak); reserved then 100.0 MiB");
    EXPECT_STREQ(peak_moment(device), "the dump");
    std::string advice;
    for (const SnapshotAdvice& item : snapshot_advice(device, report.alloc_conf)) {
        advice += item.what + ": " + item.why + "\n";
    }
    EXPECT_NE(advice.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: at the dump, 76.0 "
                          "MiB of the 100.0 MiB reserved (76%) held no tensor"),
              std::string::npos)
        << advice;
    EXPECT_NE(advice.find("24.0 MiB of the 24.0 MiB alive at the dump (100%)"), std::string::npos)
        << advice;
    EXPECT_EQ(advice.find("at the peak"), std::string::npos) << advice;
    EXPECT_STREQ(peak_moment(read("late-history").devices[0]), "the peak");
}

// torch.cuda.memory_snapshot() returns the segments alone; here on device 1.
TEST_F(WildLayout, TheBareListOfSegmentsIsASnapshot) {
    const SnapshotReport report = read("bare-list");
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].index, 1);
    EXPECT_EQ(report.devices[0].reserved, 20 * test::kMiB);
    EXPECT_EQ(report.devices[0].allocated, 6 * test::kMiB);
    ASSERT_FALSE(report.devices[0].at_peak.empty());
    EXPECT_EQ(report.devices[0].at_peak[0].where, "train.py:12 (load)");
}

// A history begun after the model was built: the blocks alive at the end carry the frames that
// made them, so their lines are named, and no advice asks to record what the file holds.
TEST_F(WildLayout, BlocksThatCarryTheirFramesNameTheirLines) {
    const SnapshotReport report = read("late-history");
    ASSERT_EQ(report.devices.size(), 1u);
    using Lines = std::vector<std::pair<std::string, std::int64_t>>;
    EXPECT_EQ(lines_of(report.devices[0]), (Lines{{"model.py:8 (__init__)", 20 * test::kMiB},
                                                  {"model.py:7 (__init__)", 10 * test::kMiB},
                                                  {"train.py:41 (forward)", 2 * test::kMiB}}));
    for (const SnapshotAdvice& advice : snapshot_advice(report.devices[0], report.alloc_conf)) {
        EXPECT_EQ(advice.what.find("record the history"), std::string::npos) << advice.why;
    }
}

// Every segment existed before the trace: the what-if says there is no segment opening to
// check, and that no setting changes what it reserved, rather than "0 of 0 (100.0%)".
TEST_F(WildLayout, AReplayThatCannotChangeAnythingSaysWhy) {
    const SnapshotReport report = read("late-history");
    const std::string text = snapshot_whatif_text(report, snapshot_whatif(report, {}, {}));
    EXPECT_NE(text.find("the trace opens no segment"), std::string::npos) << text;
    EXPECT_NE(text.find("no setting changes what this trace reserved"), std::string::npos) << text;
    EXPECT_EQ(text.find("0 of 0"), std::string::npos) << text;
}

TEST_F(WildLayout, DevicesOtherThanZeroAndEmptyTracesAreRead) {
    const SnapshotReport report = read("many-devices");
    ASSERT_EQ(report.devices.size(), 2u);
    EXPECT_EQ(report.devices[0].index, 0);
    EXPECT_EQ(report.devices[0].allocated, 2 * test::kMiB);
    EXPECT_EQ(report.devices[1].index, 2);
    EXPECT_EQ(report.devices[1].allocated, 4 * test::kMiB);
}

// PyTorch 2.12 to 2.15's fields, as torch.cuda.memory._snapshot's documentation describes
// them: each entry's pool pair, an annotation set after the fact (added to the allocation's
// metadata, as memory_viz shows it), JSON metadata and internal metadata are read, and the
// device's figures are what its segments and trace say.
TEST_F(WildLayout, PyTorchsNewerFieldsAreReadAndAnAnnotationLabelsItsAllocation) {
    const SnapshotReport report = read("newer-fields");
    ASSERT_EQ(report.devices.size(), 2u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.index, 0);
    EXPECT_EQ(device.events, 3u);
    EXPECT_EQ(device.allocated, 10 * test::kMiB);
    EXPECT_EQ(device.peak_allocated, 10 * test::kMiB);
    using Lines = std::vector<std::pair<std::string, std::int64_t>>;
    Lines labels;
    for (const SnapshotLine& line : device.at_peak_by_metadata) {
        labels.emplace_back(line.where, line.bytes);
    }
    EXPECT_EQ(labels, (Lines{{"{\"step\":3}; {\"saved_for_backward\":true}", 8 * test::kMiB},
                             {"(no metadata set)", 2 * test::kMiB}}));
}

// Entries that name their pool (PyTorch 2.12's "pool_id") are replayed in it, though the
// pool's segment was released before the snapshot (no segment at the end says it was there).
TEST_F(WildLayout, AnEntrysPoolIdPutsItInItsPrivatePool) {
    const SnapshotReport report = read("pool-ids");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    using Pools = std::vector<std::pair<std::int64_t, std::int64_t>>;
    EXPECT_EQ(device.stream_pools, (Pools{{1, 0}, {0, 0}}));
    const std::vector<SnapshotWhatIf> replays = snapshot_whatif(report, std::nullopt, std::nullopt);
    ASSERT_EQ(replays.size(), 1u);
    const std::vector<std::string>& notes = replays[0].notes;
    EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const std::string& note) {
        // its segment's opening and release, the allocation and its free
        return note.rfind("4 of the trace's events name a private pool (pool_id)", 0) == 0;
    })) << ::testing::PrintToString(notes);
}

// Pinned host memory (record_pinned_host_memory=True: "host_segments", "host_traces") is a
// device of its own after the GPU's, named so, with its own figures and lines; the CUDA
// allocator's settings are neither replayed nor advised on it, and no GPU estimate is made of
// it: it stays on the host.
TEST_F(WildLayout, PinnedHostMemoryIsShownApartFromTheGpuAndWithoutTheGpusAdvice) {
    const SnapshotReport report = read("newer-fields");
    ASSERT_EQ(report.devices.size(), 2u);
    const SnapshotDevice& host = report.devices[1];
    EXPECT_EQ(host.index, kPinnedHostIndex);
    EXPECT_EQ(snapshot_device_name(host.index), "pinned host memory");
    EXPECT_EQ(host.segments, 1);
    EXPECT_EQ(host.reserved, 4 * test::kMiB);
    EXPECT_EQ(host.allocated, 4 * test::kMiB);
    EXPECT_EQ(host.requested, 3 * test::kMiB);
    EXPECT_EQ(host.events, 1u);
    EXPECT_EQ(host.peak_allocated, 4 * test::kMiB);
    ASSERT_FALSE(host.at_peak.empty());
    EXPECT_EQ(host.at_peak[0].where, "train.py:12 (collate)");
    EXPECT_FALSE(gpu_estimate(host, "").has_value());
    const std::vector<SnapshotAdvice> advice = snapshot_advice(host, std::nullopt);
    ASSERT_FALSE(advice.empty());
    EXPECT_EQ(advice[0].what, "pinned host memory is the machine's RAM, not the GPU's");
    for (const SnapshotAdvice& item : advice) {
        EXPECT_EQ(item.what.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos) << item.what;
    }
    for (const SnapshotWhatIf& replay :
         snapshot_whatif(report, "expandable_segments:True", std::nullopt)) {
        EXPECT_NE(replay.device, kPinnedHostIndex);
    }
    // The GPU's figures are its own: the host's 4 MiB is in none of them.
    EXPECT_EQ(report.devices[0].reserved, 20 * test::kMiB);
}

// A "host_traces" that is not a list is refused by name, as a device's trace would be.
TEST_F(WildLayout, AHostTraceThatIsNoListIsNamed) {
    try {
        read("host-trace-dict");
        FAIL() << "a host_traces of a dict was read";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("host_traces"), std::string::npos) << error.what();
    }
}

// Snapshots PyTorch 2.11 wrote on an H200 (bench/gpu/record_corpus.py; tests/data/gpu/README.md),
// each beside what the allocator itself reported (NAME.json: torch.cuda.max_memory_reserved
// over the recorded stretch, memory_reserved at the dump).
class RecordedOnAGpu : public ::testing::Test {
protected:
    static std::vector<std::string> names() {
        std::vector<std::string> found;
        for (const fs::directory_entry& entry : fs::directory_iterator(test::fixture("gpu"))) {
            const std::string name = entry.path().filename().string();
            const std::size_t suffix = name.find(".pickle.gz");
            if (suffix != std::string::npos &&
                fs::exists(test::fixture("gpu/" + name.substr(0, suffix) + ".json"))) {
                found.push_back(name.substr(0, suffix));
            }
        }
        std::sort(found.begin(), found.end());
        return found;
    }
    static SnapshotReport read(const std::string& name) {
        return read_snapshot_report(test::fixture("gpu/" + name + ".pickle.gz"));
    }
    static nlohmann::json reported(const std::string& name) {
        return nlohmann::json::parse(test::read_text(test::fixture("gpu/" + name + ".json")));
    }
    static const SnapshotDevice& device_zero(const SnapshotReport& report) {
        return *std::find_if(report.devices.begin(), report.devices.end(),
                             [](const SnapshotDevice& device) { return device.index == 0; });
    }
};

// Read as plain Python reads it; the trace's most reserved is the allocator's own figure; and
// the trace replayed through the allocator's model under its settings reaches it within 2%.
TEST_F(RecordedOnAGpu, EachReadsAsTheAllocatorReportedAndItsReplayReachesItsPeak) {
    const std::vector<std::string> recorded = names();
    ASSERT_GE(recorded.size(), 12u);
    for (const std::string& name : recorded) {
        const std::string path = test::fixture("gpu/" + name + ".pickle.gz");
        const nlohmann::json python = independent_reading(path);
        if (python.is_null()) {
            GTEST_SKIP() << "no python3 to read the snapshots independently";
        }
        const SnapshotReport report = read(name);
        expect_as_python_reads(report, python);
        const nlohmann::json allocator = reported(name);
        const SnapshotDevice& device = device_zero(report);
        const auto most_reserved = allocator["max_memory_reserved"].get<std::int64_t>();
        EXPECT_EQ(device.peak_reserved, most_reserved) << name;
        if (allocator.contains("memory_reserved")) {
            EXPECT_EQ(device.reserved, allocator["memory_reserved"].get<std::int64_t>()) << name;
        }
        // PyTorch 2.11's entries name no pool: the MemPool's 40 MiB segment, released before
        // the dump, is replayed as the default pool's and serves two requests the real
        // allocator opened segments for (962 MiB against 984).
        const double tolerance = name == "mem-pool" ? 0.025 : 0.02;
        for (const SnapshotWhatIf& replay : snapshot_whatif(report, {}, {})) {
            if (replay.device == 0) {
                EXPECT_NEAR(double(replay.replayed.peak_reserved), double(most_reserved),
                            tolerance * double(most_reserved))
                    << name;
            }
        }
    }
}

// What each program marked is read: record_function's annotations as stages, the memory
// metadata by what it tags, the out-of-memory error with the line that held the memory.
TEST_F(RecordedOnAGpu, AnnotationsMetadataAndTheOutOfMemoryAreRead) {
    const SnapshotDevice annotated = device_zero(read("record-function"));
    std::vector<std::string> stages;
    for (const SnapshotAnnotatedStage& stage : stages_by_peak(annotated)) {
        stages.push_back(stage.name);
    }
    EXPECT_NE(std::find(stages.begin(), stages.end(), "## forward ##"), stages.end());
    EXPECT_NE(std::find(stages.begin(), stages.end(), "## backward ##"), stages.end());

    const SnapshotDevice tagged = device_zero(read("memory-metadata"));
    ASSERT_FALSE(tagged.at_peak_by_metadata.empty());
    EXPECT_EQ(tagged.at_peak_by_metadata.front().where, "forward");

    const SnapshotDevice failed = device_zero(read("oom-stacks"));
    ASSERT_EQ(failed.ooms.size(), 1u);
    ASSERT_FALSE(failed.at_peak.empty());
    EXPECT_EQ(failed.at_peak.front().where, "bench/gpu/record_corpus.py:62 (text_steps)");
}

// A program whose free memory was in pieces (bench/gpu/fragmented_oom.py) ran out of memory;
// run again with expandable_segments:True (oomlab-cli record --try) it completed at 940 MiB.
// The what-if of the first run said both: the error does not happen, and 940 MiB.
TEST_F(RecordedOnAGpu, TheWhatIfOfAFragmentedOutOfMemoryIsWhatItsTryReached) {
    const SnapshotReport first = read("fragmented-oom");
    const SnapshotReport tried = read("fragmented-oom-try-expandable");
    const SnapshotDevice& reached = device_zero(tried);
    EXPECT_TRUE(reached.ooms.empty());
    EXPECT_EQ(reached.peak_reserved, 940 * test::kMiB);
    const std::vector<SnapshotWhatIf> whatif =
        snapshot_whatif(first, "expandable_segments:True", {});
    ASSERT_EQ(whatif.size(), 1u);
    EXPECT_EQ(whatif[0].replayed.peak_reserved, reached.peak_reserved);
    ASSERT_EQ(whatif[0].recorded.ooms.size(), 1u);
    EXPECT_TRUE(whatif[0].recorded.ooms[0].happens);
    ASSERT_EQ(whatif[0].replayed.ooms.size(), 1u);
    EXPECT_FALSE(whatif[0].replayed.ooms[0].happens);
}

}  // namespace
}  // namespace oomlab
