// Snapshots kept in other forms than their pickle: saved as JSON (whole, or a device's trace
// alone), inside memory_viz's web page; and the forms that hold none, refused naming what they
// are and what to give instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "test_support.h"
#include "wild_layout.h"

namespace oomlab {
namespace {

using test::lines_of;
using test::WildLayout;

// The same snapshot saved as JSON, or inside memory_viz's web page, reads as its pickle does,
// its line past 2**63 included; export_memory_timeline's page, a picture, is refused so.
TEST_F(WildLayout, ASnapshotSavedAsJsonOrInMemoryVizsPageReadsAsItsPickle) {
    const SnapshotReport pickle = read("huge-line");
    for (const char* form : {"huge-line-json", "huge-line-page"}) {
        const SnapshotReport other = read(form);
        ASSERT_EQ(other.devices.size(), 1u) << form;
        EXPECT_EQ(other.devices[0].peak_allocated, pickle.devices[0].peak_allocated) << form;
        EXPECT_EQ(other.devices[0].reserved, pickle.devices[0].reserved) << form;
        EXPECT_EQ(other.devices[0].events, pickle.devices[0].events) << form;
        EXPECT_EQ(lines_of(other.devices[0]), lines_of(pickle.devices[0])) << form;
        EXPECT_EQ(other.alloc_conf, pickle.alloc_conf) << form;
    }
    try {
        read("timeline-picture");
        ADD_FAILURE() << "a picture read as a snapshot";
    } catch (const BadInput& refusal) {
        EXPECT_NE(std::string(refusal.what()).find("export_memory_timeline page, a picture"),
                  std::string::npos)
            << refusal.what();
    }
}

// A device's trace saved alone as a JSON list of its events (tomi's elements.json, which no
// licence lets us keep) reads as that device's trace: the same events, peak and lines, and no
// segments of a dump.
TEST_F(WildLayout, ADevicesTraceSavedAloneAsAJsonListReadsAsItsTrace) {
    const SnapshotReport pickle = read("huge-line");
    const SnapshotReport events = read("huge-line-events-json");
    ASSERT_EQ(events.devices.size(), 1u);
    EXPECT_EQ(events.devices[0].events, pickle.devices[0].events);
    EXPECT_EQ(events.devices[0].peak_allocated, pickle.devices[0].peak_allocated);
    EXPECT_EQ(lines_of(events.devices[0]), lines_of(pickle.devices[0]));
    // Its end is the trace's own, said so: no "segments dumped at the end" to fall short of.
    const SnapshotDevice& alone = events.devices[0];
    EXPECT_FALSE(alone.segments_dumped);
    EXPECT_EQ(alone.segments, 0);
    EXPECT_EQ(alone.allocated, 8 * test::kMiB);
    EXPECT_EQ(alone.reserved, 20 * test::kMiB);
    EXPECT_EQ(alone.cached_free, 12 * test::kMiB);
    EXPECT_TRUE(alone.trace_problems.empty()) << alone.trace_problems.front();
    EXPECT_EQ(snapshot_end_words(alone),
              "no segments dumped (a device's trace saved alone): 20.0 MiB reserved, 8.0 MiB "
              "allocated at the end by the trace's own reckoning");
    EXPECT_TRUE(read("huge-line").devices[0].segments_dumped);
}

// export_memory_timeline's rows (tonghuikang's .raw.json.gz files, which no licence lets us
// keep) read as one device's trace by PyTorch's categories: the peak and what each category
// held then are the rows' running sums; a version that changes category moves its bytes.
TEST_F(WildLayout, TheMemoryTimelinesRowsReadByPyTorchsCategories) {
    const SnapshotReport report = read("timeline-raw");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.index, 0);
    EXPECT_EQ(device.peak_allocated, 37632 + 602112 + 6 * test::kMiB);
    EXPECT_EQ(device.allocated, 37632 + 602112);
    std::int64_t summed = 0;
    for (const SnapshotLine& kind : device.at_peak_by_kind) {
        summed += kind.bytes;
    }
    EXPECT_EQ(summed, device.peak_allocated);
    const auto held = [&](const std::string& kind) {
        for (const SnapshotLine& line : device.at_peak_by_kind) {
            if (line.where == kind) {
                return line.bytes;
            }
        }
        return std::int64_t{-1};
    };
    EXPECT_EQ(held("parameter"), 37632);
    EXPECT_EQ(held("input"), 602112);
    // The 4 MiB tensor is an activation, then a gradient: one of them at the peak.
    EXPECT_EQ(std::max(held("activation"), held("gradient")), 4 * test::kMiB);
    EXPECT_EQ(std::min(held("activation"), held("gradient")), -1);
    EXPECT_EQ(held("other"), 2 * test::kMiB);  // PyTorch's category unknown
    std::string notes;
    for (const std::string& note : snapshot_end_notes(device)) {
        notes += note + "\n";
    }
    EXPECT_NE(notes.find("made from export_memory_timeline's rows"), std::string::npos) << notes;
    EXPECT_FALSE(device.reserved_recorded);
    // The rows do not say which device was theirs: no estimate of it as on a GPU.
    EXPECT_FALSE(gpu_estimate(device).has_value());
}

// A JSON snapshot cut short, and a memory_viz page whose snapshot is not base64, are refused
// naming the file, where, and what to give instead.
TEST(WildCorpus, ASnapshotInAnotherFormThatIsBrokenIsRefusedSayingWhere) {
    const auto refusal = [](const std::string& bytes, const std::string& file) {
        try {
            snapshot_report_from_bytes(bytes, file);
        } catch (const BadInput& error) {
            return std::string(error.what());
        }
        return std::string("read");
    };
    EXPECT_EQ(refusal("[[1722000000000, 2, 4194304]]", "rows.json"),
              "rows.json: row 1 of what export_memory_timeline writes holds 3 numbers, not [time, "
              "action, bytes, category] (four whole numbers)");
    EXPECT_EQ(refusal("{\"segments\": [1, ", "cut.json"),
              "cut.json: a memory snapshot saved as JSON, but not JSON at byte 17 (Invalid "
              "value.); save it again with json.dump, or give the pickle");
    const std::string page =
        "<!DOCTYPE html>\n<script>add_local_files([{\"name\": "
        "\"snapshot.pickle\", \"base64\": \"gASV!\"}])</script>";
    EXPECT_NE(refusal(page, "page.html")
                  .find("page.html: the snapshot in this memory_viz page is "
                        "cut or changed: \"!\" at byte"),
              std::string::npos)
        << refusal(page, "page.html");
    // A clone without Git LFS holds the pointer (kbjiang's memory_256.pickle); the first
    // memory_viz pages held their trace as JavaScript (zdevito's trace.html).
    const std::string pointer =
        refusal("version https://git-lfs.github.com/spec/v1\noid sha256:" + std::string(64, 'a') +
                    "\nsize 4494887\n",
                "memory_256.pickle");
    EXPECT_NE(pointer.find("memory_256.pickle: a Git LFS pointer, not the file it stands for"),
              std::string::npos)
        << pointer;
    EXPECT_NE(pointer.find("git lfs pull"), std::string::npos) << pointer;
    const std::string early = refusal(
        "<!DOCTYPE html>\n<script>\nlet alloc_data = {\"actions\": [0, 1], "
        "\"elements_size\": [512, 512]};\n</script>",
        "trace.html");
    EXPECT_NE(early.find("trace.html: an early memory_viz page"), std::string::npos) << early;
    EXPECT_EQ(early.find("without a snapshot in it"), std::string::npos) << early;
}

}  // namespace
}  // namespace oomlab
