// The stages a program annotated (PyTorch's "external_annotations"), placed among a device's
// events by their times, and the peak allocated inside each, on snapshots built as PyTorch
// writes them.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_bytes.h"
#include "snapshot_reader/event_clock.h"

namespace oomlab::snapshot {
namespace {

// Six events: A (100 B) and B (200 B) allocated, A freed 100 ms later, C (1,000 B) allocated,
// B and C freed: allocated after each is 100, 300, 200, 1200, 1000, 0.
std::string trace(bool timed) {
    return trace_event("alloc", 0x1000, 100, timed, 10) +
           trace_event("alloc", 0x2000, 200, timed, 20) +
           trace_event("free_completed", 0x1000, 100, timed, 100000) +
           trace_event("alloc", 0x3000, 1000, timed, 100010) +
           trace_event("free_completed", 0x2000, 200, timed, 100020) +
           trace_event("free_completed", 0x3000, 1000, timed, 100030);
}

std::string snapshot(bool timed, const std::string& annotations) {
    return annotated_snapshot(trace(timed), annotations);
}

const std::string kAnnotations =
    stage_annotation("START", "forward", 0, 5) + stage_annotation("END", "forward", 0, 25) +
    stage_annotation("END", "never started", 0, 50) + stage_annotation("START", "step", 0, 100005) +
    stage_annotation("START", "forward", 0, 100015) + stage_annotation("END", "step", 0, 100025) +
    stage_annotation("START", "another device's", 1, 0);

TEST(SnapshotStages, EachStagesPeakIsTheMostAllocatedWhileItRan) {
    const SnapshotReport report = snapshot_report_from_bytes(snapshot(true, kAnnotations), "s");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.peak_allocated, 1200);
    EXPECT_TRUE(device.stages_problem.empty()) << device.stages_problem;
    ASSERT_EQ(device.stages.size(), 2u) << "an END never started names no stage";
    const std::vector<SnapshotAnnotatedStage> stages = stages_by_peak(device);
    // "forward" ran from before the first event to the state after 2 (300 B), and again from
    // the state after 4 to the trace's end, never ended (1,200 B then).
    EXPECT_EQ(stages[0].name, "forward");
    EXPECT_EQ(stages[0].spans, 2u);
    EXPECT_EQ(stages[0].peak_allocated, 1200);
    EXPECT_EQ(stages[0].peak_event, 4u);
    EXPECT_EQ(stages[0].events, 4u);
    // "step": states 3 to 5 (200, 1,200, 1,000).
    EXPECT_EQ(stages[1].name, "step");
    EXPECT_EQ(stages[1].spans, 1u);
    EXPECT_EQ(stages[1].peak_allocated, 1200);
    EXPECT_EQ(stages[1].events, 2u);
    EXPECT_EQ(stages_at(device, device.peak_event), (std::vector<std::string>{"forward", "step"}));
    EXPECT_EQ(stages_at(device, 1), (std::vector<std::string>{"forward"}));
    EXPECT_TRUE(stages_at(device, 3).size() == 1 && stages_at(device, 3)[0] == "step");
}

// A stage shorter than the time between two events (an optimizer's zero_grad of 100 us, as
// a real snapshot has it): it ran between them, allocating nothing; what was allocated then is
// its figure, and its span has no width.
TEST(SnapshotStages, AStageBetweenTwoEventsAllocatedNothingAndIsPlacedBetweenThem) {
    const SnapshotReport report = snapshot_report_from_bytes(
        snapshot(true, stage_annotation("START", "zero_grad", 0, 30) +
                           stage_annotation("END", "zero_grad", 0, 130) +
                           stage_annotation("START", "zero_grad", 0, 100012) +
                           stage_annotation("END", "zero_grad", 0, 100014)),
        "s");
    const SnapshotDevice& device = report.devices.at(0);
    ASSERT_EQ(device.stages.size(), 1u);
    EXPECT_EQ(device.stages[0].spans, 2u);
    EXPECT_EQ(device.stages[0].events, 0u);
    EXPECT_EQ(device.stages[0].peak_allocated, 1200);  // after the 4th event, the second time
    EXPECT_EQ(device.stages[0].peak_event, 4u);
    ASSERT_EQ(device.stage_spans.size(), 2u);
    EXPECT_EQ(device.stage_spans[0].first, 2u);
    EXPECT_EQ(device.stage_spans[0].end, 2u);
}

TEST(SnapshotStages, AnnotationsOfATraceWithoutTimesAreSaidToBeUnplaced) {
    const SnapshotReport report = snapshot_report_from_bytes(snapshot(false, kAnnotations), "s");
    const SnapshotDevice& device = report.devices.at(0);
    EXPECT_TRUE(device.stages.empty());
    EXPECT_NE(device.stages_problem.find("6 annotations of stages, but the trace's events carry "
                                         "no times"),
              std::string::npos)
        << device.stages_problem;
}

TEST(SnapshotStages, AnAnnotationOutOfPlaceIsRefusedNamingIt) {
    try {
        snapshot_report_from_bytes(snapshot(true, stage_annotation("MIDDLE", "x", 0, 1)),
                                   "odd.pickle");
        ADD_FAILURE() << "a stage of MIDDLE was read";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what())
                      .find("external_annotations[0]: \"stage\" is \"MIDDLE\", not START or END"),
                  std::string::npos)
            << error.what();
    }
}

// The metadata a program sets for its allocations (torch.cuda.memory._set_memory_metadata, a
// trace entry's "user_metadata"): what was alive at the peak grouped by it, those without it
// apart; "" is none set.
TEST(SnapshotStages, WhatWasAliveIsGroupedByTheMetadataTheProgramSet) {
    const auto alloc = [](std::int64_t address, std::int64_t size, const char* metadata) {
        return "}(" + text("action") + text("alloc") + text("addr") + long8(address) +
               text("size") + long8(size) + text("user_metadata") + text(metadata) + "u";
    };
    const std::string pickle = kProto2 + "}(" + text("segments") + "]" + text("device_traces") +
                               "]](" + alloc(0x1000, 100, "warmup") + alloc(0x2000, 300, "step 1") +
                               alloc(0x3000, 200, "step 1") + alloc(0x4000, 50, "") + "eau.";
    const SnapshotReport report = snapshot_report_from_bytes(pickle, "s");
    const SnapshotDevice& device = report.devices.at(0);
    ASSERT_EQ(device.at_peak_by_metadata.size(), 3u);
    EXPECT_EQ(device.at_peak_by_metadata[0].where, "step 1");
    EXPECT_EQ(device.at_peak_by_metadata[0].bytes, 500);
    EXPECT_EQ(device.at_peak_by_metadata[0].blocks, 2);
    EXPECT_EQ(device.at_peak_by_metadata[1].where, "warmup");
    EXPECT_EQ(device.at_peak_by_metadata[2].where, "(no metadata set)");
    EXPECT_EQ(device.at_peak_by_metadata[2].bytes, 50);
    // A trace that sets none has no such grouping.
    EXPECT_TRUE(snapshot_report_from_bytes(snapshot(true, kAnnotations), "s")
                    .devices.at(0)
                    .at_peak_by_metadata.empty());
}

std::int64_t peak_resident_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return std::int64_t(usage.ru_maxrss) / 1024;
}

// A long string written once and named by its memo number again and again (20,000 names of one
// 1 MB string made 7.8 GB): each distinct text is copied once, as Python's pickle.load keeps it.
TEST(SnapshotStages, AnnotationsNamingOneLongStringAgainAndAgainCostItOnce) {
    const std::string name(std::size_t(1) << 20, 'x');
    std::string annotations = "}(" + text("stage") + text("START") + text("name") + "X" +
                              le32(std::uint32_t(name.size())) + name + "q" + bytes({0}) +
                              text("device") + "K" + bytes({0}) + text("time_us") + long8(5) + "u";
    for (int i = 0; i < 2000; ++i) {
        annotations += "}(" + text("stage") + text(i % 2 ? "START" : "END") + text("name") + "h" +
                       bytes({0}) + text("device") + "K" + bytes({0}) + text("time_us") +
                       long8(10 + i) + "u";
    }
    const std::int64_t before = peak_resident_mib();
    const SnapshotReport report = snapshot_report_from_bytes(snapshot(true, annotations), "s");
    EXPECT_LT(peak_resident_mib() - before, 256) << "2,000 copies of a 1 MiB name are 2 GiB";
    const SnapshotDevice& device = report.devices.at(0);
    ASSERT_EQ(device.stages.size(), 1u);
    EXPECT_EQ(device.stages[0].name, name);
    EXPECT_EQ(device.stages[0].spans, 1001u) << "1,001 STARTs, the last never ended";
}

// PyTorch 2.15's "annotate" entries, each adding a label to a live allocation: one allocation
// labelled again and again keeps a label a person can read, not every label joined (200 of 100
// KiB were 2 GB of ever longer names).
TEST(SnapshotStages, AnAllocationLabelledAgainAndAgainKeepsALabelOfReadableLength) {
    const std::string label(100 << 10, 'y');
    std::string trace = "}(" + text("action") + text("alloc") + text("addr") + long8(0x1000) +
                        text("size") + long8(512) + text("user_metadata") + "X" +
                        le32(std::uint32_t(label.size())) + label + "q" + bytes({0}) + "u";
    for (int i = 0; i < 200; ++i) {
        trace += "}(" + text("action") + text("annotate") + text("addr") + long8(0x1000) +
                 text("size") + long8(0) + text("user_metadata") + "h" + bytes({0}) + "u";
    }
    const std::string pickle =
        kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "]](" + trace + "eau.";
    const std::int64_t before = peak_resident_mib();
    const SnapshotReport report = snapshot_report_from_bytes(pickle, "s");
    EXPECT_LT(peak_resident_mib() - before, 256);
    const SnapshotDevice& device = report.devices.at(0);
    ASSERT_EQ(device.at_peak_by_metadata.size(), 1u);
    const std::string& shown = device.at_peak_by_metadata[0].where;
    EXPECT_EQ(shown.size(), 1024u);
    EXPECT_EQ(shown.substr(0, 4), "yyyy");
    EXPECT_EQ(shown.substr(shown.size() - 3), "...");
    EXPECT_EQ(device.at_peak_by_metadata[0].bytes, 512);
}

// Two bytes an event: a step back in time, or one of over 65 ms, is kept aside, and an
// annotation still finds the first event at or after it.
TEST(EventClock, StepsBackAndLeapsFindTheirEvents) {
    EventClock clock;
    const std::int64_t times[] = {1000, 1010, 900, 500000, 500001};
    for (std::size_t i = 0; i < 5; ++i) {
        clock.add(i, &times[i]);
    }
    ASSERT_TRUE(clock.has_times());
    EXPECT_EQ(clock.first_events_at({0, 1005, 1010, 1011, 500000, 600000}),
              (std::vector<std::size_t>{0, 1, 1, 3, 3, 5}));
    clock.add(5, nullptr);
    EXPECT_FALSE(clock.has_times()) << "one event without a time leaves the trace without";
}

}  // namespace
}  // namespace oomlab::snapshot
