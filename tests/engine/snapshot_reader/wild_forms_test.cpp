// Snapshots kept in other forms than their pickle: saved as JSON (whole, or a device's trace
// alone), inside memory_viz's web page; and the forms that hold none, refused naming what they
// are and what to give instead.
#include <gtest/gtest.h>

#include <string>

#include "oomlab/common/errors.h"
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
    EXPECT_TRUE(alone.trace_problems.empty()) << alone.trace_problems.front();
    EXPECT_EQ(snapshot_end_words(alone),
              "no segments dumped (a device's trace saved alone): 20.0 MiB reserved, 8.0 MiB "
              "allocated at the end by the trace's own reckoning");
    EXPECT_TRUE(read("huge-line").devices[0].segments_dumped);
}

// export_memory_timeline's raw data (tonghuikang's .raw.json.gz files, which no licence lets us
// keep) is said to be what it is first, then what this reader takes instead.
TEST_F(WildLayout, TheMemoryTimelinesRawDataIsNamedBeforeWhatToGiveInstead) {
    try {
        read("timeline-raw");
        FAIL() << "export_memory_timeline's rows read as a trace";
    } catch (const BadInput& refusal) {
        const std::string why = refusal.what();
        EXPECT_NE(why.find(".pickle: the rows export_memory_timeline writes to a .raw.json ([time, "
                           "action, bytes, category] each), not a Chrome trace of PyTorch's "
                           "profiler: give this reader the trace itself"),
                  std::string::npos)
            << why;
        EXPECT_NE(why.find("prof.export_chrome_trace(\"trace.json\")"), std::string::npos) << why;
        EXPECT_EQ(why.find("item 1"), std::string::npos) << why;
    }
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
