// Reading memory snapshots: the strict pickle reader on hand-made pickles (every opcode of
// plain data, and a corpus of hostile ones), and what a real snapshot PyTorch recorded says.
#include "snapshot/pickle_reader.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot/snapshot_advice.h"
#include "oomlab/snapshot/snapshot_report.h"
#include "test_support.h"

namespace oomlab::snapshot {
namespace {

// A short unicode string, as protocol 4 writes it.
std::string text(const std::string& value) {
    return "\x8c" + std::string(1, char(value.size())) + value;
}

std::string refusal(const std::string& pickle) {
    try {
        read_pickle(pickle, "hostile.pickle");
    } catch (const BadInput& error) {
        return error.what();
    }
    return {};
}

// Bytes written out one by one: no escape can run into the next character, and zero bytes
// stay.
std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (const int value : values) {
        out += static_cast<char>(value);
    }
    return out;
}

const std::string kProto2 = bytes({0x80, 2});

TEST(PickleReader, ReadsEveryKindOfPlainData) {
    // {"a": [1, -2, 300, 70000, 2**40, -1, 0.5, None, True, False], "b": ("x", "y"),
    //  "c": <the list again, by memo>}, protocol 4 with FRAME and MEMOIZE.
    const std::string pickle =
        bytes({0x80, 4, 0x95, 0, 0, 0, 0, 0, 0, 0, 0}) + "}" + bytes({0x94}) + "(" + text("a") +
        bytes({0x94}) + "]" + bytes({0x94}) + "(" + "K" + bytes({1}) + "J" +
        bytes({0xfe, 0xff, 0xff, 0xff}) + "M" + bytes({0x2c, 0x01}) + "J" +
        bytes({0x70, 0x11, 0x01, 0x00}) + bytes({0x8a, 6, 0, 0, 0, 0, 0, 1}) +
        bytes({0x8a, 1, 0xff}) + "G" + bytes({0x3f, 0xe0, 0, 0, 0, 0, 0, 0}) + "N" +
        bytes({0x88, 0x89}) + "e" + text("b") + text("x") + text("y") + bytes({0x86}) + text("c") +
        "h" + bytes({2}) + "u.";
    const PickleDocument document = read_pickle(pickle, "plain.pickle");
    const PickleValue& root = document.root();
    ASSERT_TRUE(root.dict());
    const PickleContainer* a = root.at("a")->list();
    ASSERT_TRUE(a);
    ASSERT_EQ(a->size(), 10u);
    EXPECT_EQ(a->items[0].integer(), 1);
    EXPECT_EQ(a->items[1].integer(), -2);
    EXPECT_EQ(a->items[2].integer(), 300);
    EXPECT_EQ(a->items[3].integer(), 70000);
    EXPECT_EQ(a->items[4].integer(), std::int64_t(1) << 40);
    EXPECT_EQ(a->items[5].integer(), -1) << "LONG1 is two's complement";
    EXPECT_TRUE(a->items[6].is_float());
    EXPECT_EQ(a->items[6].real(), 0.5);
    EXPECT_TRUE(a->items[7].is_none());
    EXPECT_EQ(a->items[8].integer(), 1);
    EXPECT_EQ(a->items[9].integer(), 0);
    EXPECT_EQ(*root.at("b")->list()->items.at(1).text(), "y");
    EXPECT_EQ(root.at("c")->list(), a) << "a memo reference is the same value";
    // Protocol 2's memo: BINPUT and BINGET; [7, 7] with the second by reference.
    const PickleDocument two = read_pickle(kProto2 + "]q" + bytes({0}) + "(K" + bytes({7}) + "q" +
                                               bytes({1}) + "h" + bytes({1}) + "e.",
                                           "two.pickle");
    ASSERT_EQ(two.root().list()->size(), 2u);
    EXPECT_EQ(two.root().list()->items.at(1).integer(), 7);
}

// Equal strings and equal containers written again (as a snapshot that keeps each event's
// frames of its own writes them) are read once: what is read costs what it holds.
TEST(PickleReader, ReadsEqualContainersWrittenAgainAsOne) {
    // [{"f": "a.py", "l": [1]}, {"f": "a.py", "l": [1]}, {"f": "b.py", "l": [1]}] with no memo
    // at all, so each is spelled out, then the second kept by memo and fetched again.
    const auto frame = [](const std::string& file) {
        return "}(" + text("f") + text(file) + text("l") + "]K" + bytes({1}) + "a" + "u";
    };
    const std::string pickle = kProto2 + "](" + frame("a.py") + frame("a.py") + "q" + bytes({0}) +
                               frame("b.py") + "h" + bytes({0}) + "e.";
    const PickleDocument document = read_pickle(pickle, "repeated.pickle");
    const PickleContainer* frames = document.root().list();
    ASSERT_TRUE(frames);
    ASSERT_EQ(frames->size(), 4u);
    EXPECT_EQ(frames->items[0].dict(), frames->items[1].dict()) << "equal dicts are one";
    EXPECT_EQ(frames->items[1].dict(), frames->items[3].dict()) << "and the memo's is it";
    EXPECT_NE(frames->items[0].dict(), frames->items[2].dict());
    EXPECT_EQ(frames->items[0].at("f")->text(), frames->items[1].at("f")->text())
        << "equal strings are one";
    EXPECT_EQ(*frames->items[2].at("f")->text(), "b.py");
    EXPECT_EQ(frames->items[2].at("l")->list(), frames->items[0].at("l")->list());
    EXPECT_EQ(frames->items[2].at("l")->list()->items.at(0).integer(), 1);
}

TEST(PickleReader, RefusesWhatIsNotPlainDataOrNotWhole) {
    const std::pair<std::string, std::string> cases[] = {
        {"", "ends inside a value"},
        {bytes({0x80, 4}) + "}", "ends inside a value"},
        {bytes({0x80, 7}) + "}.", "pickle protocol 7"},
        {kProto2 + "cos\nsystem\n.", "opcode 0x63"},  // GLOBAL: a class
        {bytes({0x80, 4}) + text("os") + text("system") + bytes({0x93}) + ".", "opcode 0x93"},
        {kProto2 + "N)R.", "opcode 0x52"},  // REDUCE
        {kProto2 + "h" + bytes({5}) + ".", "memo reference 5 to nothing"},
        {kProto2 + "j" + bytes({0xff, 0xff, 0xff, 0x7f}) + ".", "memo reference"},
        {kProto2 + "N" + "r" + bytes({0xff, 0xff, 0xff, 0x7f}) + ".", "memo index"},
        {bytes({0x80, 4, 0x8d, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}),
         "longer than the file"},
        {kProto2 + bytes({0x8a, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1}) + ".", "9 bytes"},
        {kProto2 + "]q" + bytes({0}) + "h" + bytes({0}) + "a.", "holds itself"},
        {kProto2 + "]q" + bytes({0}) + bytes({0x85}) + "h" + bytes({0}) + "N" + "a.",
         "filled after another container took it"},
        {kProto2 + "K" + bytes({1}) + "K" + bytes({2}) + ".", "2 values on the stack"},
        {kProto2 + "e.", "no MARK"},
        {kProto2 + std::string(100, ']') + std::string(99, 'a') + ".", "64 levels deep"},
    };
    for (const auto& [pickle, expected] : cases) {
        const std::string message = refusal(pickle);
        EXPECT_NE(message.find("hostile.pickle: byte "), std::string::npos) << message;
        EXPECT_NE(message.find(expected), std::string::npos)
            << "expected \"" << expected << "\", got: " << message;
    }
}

// The snapshot PyTorch recorded during GPT-2 generation (shared data): the end state as its
// segments hold it, the peak by replaying its 4,496 events, and what was alive then.
TEST(SnapshotReport, ARealSnapshotOfPyTorchReadsAsItsSegmentsSay) {
    OOMLAB_REQUIRE_SHARED_DATA("snapshots/gpt2_generate_2648MiB.pickle");
    const SnapshotReport report =
        read_snapshot_report(test::shared_data_dir() + "/snapshots/gpt2_generate_2648MiB.pickle");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices.front();
    // The sums of the segments' total_size and allocated_size (Python's pickle.load).
    EXPECT_EQ(device.segments, 82);
    EXPECT_EQ(device.reserved, 2776629248);
    EXPECT_EQ(device.allocated, 1875182080);
    EXPECT_EQ(device.cached_free, 901447168);
    EXPECT_EQ(device.events, 4496u);
    // No segment was freed: the reserved peak is the end's; allocated peaked above the end.
    EXPECT_EQ(device.peak_reserved, device.reserved);
    EXPECT_GT(device.peak_allocated, device.allocated);
    EXPECT_LE(device.peak_allocated, device.peak_reserved);
    std::int64_t at_peak = 0;
    for (const SnapshotLine& line : device.at_peak) {
        at_peak += line.bytes;
    }
    EXPECT_EQ(at_peak, device.peak_allocated) << "every byte alive at the peak has a line";
    EXPECT_NE(device.at_peak[1].where.find("modeling_bert.py:703 (forward)"), std::string::npos)
        << device.at_peak[1].where;
    EXPECT_TRUE(device.ooms.empty());
    // By what it was for: BERT's forward, the inputs copied to the device (validate_old.py's
    // .cuda()), and what the trace did not see.
    std::map<std::string, std::int64_t> kinds;
    std::int64_t by_kind = 0;
    for (const SnapshotLine& kind : device.at_peak_by_kind) {
        kinds[kind.where] = kind.bytes;
        by_kind += kind.bytes;
    }
    EXPECT_EQ(by_kind, device.peak_allocated);
    EXPECT_EQ(kinds.size(), 3u);
    // As Python's pickle.load and a replay of the first 4,488 events count them.
    EXPECT_EQ(kinds["forward"], 1068302336) << "modeling_bert.py's lines";
    EXPECT_EQ(kinds["data transfer"], 37632) << "validate_old.py:59 and :60";
    EXPECT_GT(kinds[kAllocatedBeforeTrace], 0);
    // The timeline: in event order, from the start to the end state, through the peak.
    ASSERT_GE(device.timeline.size(), 2u);
    EXPECT_LE(device.timeline.size(), device.events + 1);
    EXPECT_EQ(device.timeline.front().event, 0u);
    EXPECT_EQ(device.timeline.back().event, device.events);
    EXPECT_EQ(device.timeline.back().allocated, device.allocated);
    EXPECT_EQ(device.timeline.back().reserved, device.reserved);
    bool peak_seen = false;
    for (std::size_t i = 0; i < device.timeline.size(); ++i) {
        const SnapshotPoint& point = device.timeline[i];
        EXPECT_LE(point.allocated, device.peak_allocated);
        EXPECT_LE(point.allocated, point.reserved);
        EXPECT_TRUE(i == 0 || device.timeline[i - 1].event < point.event);
        peak_seen |= point.event == device.peak_event && point.allocated == device.peak_allocated;
    }
    EXPECT_TRUE(peak_seen);
}

// The state at any moment, by the same replay: at each point of the timeline the figures the
// timeline holds; at the peak what the report lists; at the start all of it from before the
// trace; past the end, the end.
TEST(SnapshotReport, TheStateAfterAnyEventFollowsTheReplay) {
    OOMLAB_REQUIRE_SHARED_DATA("snapshots/gpt2_generate_2648MiB.pickle");
    const SnapshotReport report =
        read_snapshot_report(test::shared_data_dir() + "/snapshots/gpt2_generate_2648MiB.pickle");
    const SnapshotDevice& device = report.devices.front();
    for (std::size_t i = 0; i < device.timeline.size(); i += 97) {
        const SnapshotPoint& point = device.timeline[i];
        const SnapshotMoment moment = snapshot_moment(device, point.event);
        EXPECT_EQ(moment.allocated, point.allocated) << "event " << point.event;
        EXPECT_EQ(moment.reserved, point.reserved) << "event " << point.event;
        std::int64_t by_kind = 0;
        for (const SnapshotLine& kind : moment.by_kind) {
            by_kind += kind.bytes;
        }
        EXPECT_EQ(by_kind, moment.allocated) << "every byte alive has a kind";
    }
    const SnapshotMoment peak = snapshot_moment(device, device.peak_event);
    EXPECT_EQ(peak.allocated, device.peak_allocated);
    ASSERT_EQ(peak.by_line.size(), device.at_peak.size());
    for (std::size_t i = 0; i < peak.by_line.size(); ++i) {
        EXPECT_EQ(peak.by_line[i].where, device.at_peak[i].where);
        EXPECT_EQ(peak.by_line[i].bytes, device.at_peak[i].bytes);
    }
    const SnapshotMoment start = snapshot_moment(device, 0);
    ASSERT_EQ(start.by_line.size(), 1u);
    EXPECT_EQ(start.by_line[0].where, kAllocatedBeforeTrace);
    const SnapshotMoment end = snapshot_moment(device, device.events + 1000);
    EXPECT_EQ(end.event, device.events);
    EXPECT_EQ(end.allocated, device.allocated);
    EXPECT_EQ(end.reserved, device.reserved);
}

// What the GPT-2 snapshot calls for: most of its peak was allocated before its history began,
// and one line of BERT's forward holds the most of the rest; no fragmentation to speak of.
TEST(SnapshotAdvice, ARealSnapshotNamesItsLargestLineAndItsLateHistory) {
    OOMLAB_REQUIRE_SHARED_DATA("snapshots/gpt2_generate_2648MiB.pickle");
    const SnapshotDevice device =
        read_snapshot_report(test::shared_data_dir() + "/snapshots/gpt2_generate_2648MiB.pickle")
            .devices.front();
    const std::vector<SnapshotAdvice> advice = snapshot_advice(device, std::nullopt);
    ASSERT_EQ(advice.size(), 2u);
    EXPECT_EQ(advice[0].what, "record the history from the start");
    EXPECT_NE(advice[0].why.find("(56%) was allocated before the trace began"), std::string::npos)
        << advice[0].why;
    EXPECT_NE(advice[1].what.find("modeling_bert.py:703 (forward)"), std::string::npos)
        << advice[1].what;
    EXPECT_NE(advice[1].why.find("954.8 MiB at the peak (42% of what is allocated) in 3 blocks"),
              std::string::npos)
        << advice[1].why;
}

SnapshotDevice device_at_oom(std::int64_t reserved, std::int64_t allocated,
                             std::int64_t requested) {
    SnapshotDevice device;
    device.peak_allocated = allocated;
    device.reserved_at_peak = reserved;
    device.ooms.push_back({10, requested, 0, allocated, reserved});
    return device;
}

// An out-of-memory event decides: a cache holding more than was asked is fragmented; one
// holding less means the memory was in use, and no allocator setting is offered.
TEST(SnapshotAdvice, AnOutOfMemoryIsFragmentationOrMemoryInUse) {
    const std::vector<SnapshotAdvice> fragmented =
        snapshot_advice(device_at_oom(8LL << 30, 6LL << 30, 1LL << 30), std::nullopt);
    ASSERT_FALSE(fragmented.empty());
    EXPECT_EQ(fragmented[0].what, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
    EXPECT_NE(fragmented[0].why.find("2.00 GiB was reserved but held no tensor, more than the "
                                     "1.00 GiB asked for"),
              std::string::npos)
        << fragmented[0].why;
    const std::vector<SnapshotAdvice> in_use = snapshot_advice(
        device_at_oom(8LL << 30, 7LL << 30 | 900LL << 20, 512LL << 20), std::nullopt);
    ASSERT_FALSE(in_use.empty());
    EXPECT_EQ(in_use[0].what, "hold less at the peak");
    for (const SnapshotAdvice& item : in_use) {
        EXPECT_EQ(item.what.find("expandable_segments"), std::string::npos) << item.what;
    }
}

// Without an out-of-memory event, a cache of a fifth or more of what is reserved at the peak is
// worth returning; a small one is not mentioned.
TEST(SnapshotAdvice, MuchCachedButFreeAtThePeakIsNamed) {
    SnapshotDevice cached;
    cached.peak_allocated = 3LL << 30;
    cached.reserved_at_peak = 4LL << 30;
    const std::vector<SnapshotAdvice> advice = snapshot_advice(cached, std::nullopt);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_NE(advice[0].why.find("1.00 GiB of the 4.00 GiB reserved (25%) held no tensor"),
              std::string::npos)
        << advice[0].why;
    cached.peak_allocated = (4LL << 30) - (100LL << 20);  // 2% cached
    EXPECT_TRUE(snapshot_advice(cached, std::nullopt).empty());
}

std::string le32(std::uint32_t value) {
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i) {
        out[std::size_t(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
    }
    return out;
}

// A snapshot of `count` allocations of 512 bytes on device 0, each freed at once, spelled out
// with no memo.
std::string many_allocations(std::uint32_t count) {
    std::string out = kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "]](";
    for (std::uint32_t i = 0; i < count; ++i) {
        for (const char* action : {"alloc", "free_completed"}) {
            out += "}(" + text("action") + text(action) + text("addr") + "J" + le32(i * 512) +
                   text("size") + "J" + le32(512) + "u";
        }
    }
    return out + "eau.";
}

// A file is read a megabyte at a time, with its progress told after each, and a progress
// callback that throws stops the reading there; the gzipped file reads the same and its
// progress counts its own (compressed) bytes.
TEST(SnapshotReport, AFileIsReadInChunksWithProgressAndStopsWhenCancelled) {
    const test::TempDir dir;
    const std::string path = dir.file("many.pickle");
    test::write_file(path, many_allocations(60000));  // about 7 MB
    std::vector<std::uint64_t> told;
    std::uint64_t size = 0;
    const SnapshotReport report =
        read_snapshot_report(path, [&](std::uint64_t read, std::uint64_t total) {
            told.push_back(read);
            size = total;
        });
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].events, 120000u);
    EXPECT_EQ(report.devices[0].peak_allocated, 512);
    EXPECT_EQ(size, std::filesystem::file_size(path));
    ASSERT_GE(told.size(), 5u);
    EXPECT_TRUE(std::is_sorted(told.begin(), told.end()));
    EXPECT_LE(told.back(), size);
    std::size_t chunks = 0;
    EXPECT_THROW(read_snapshot_report(path,
                                      [&](std::uint64_t, std::uint64_t) {
                                          if (++chunks == 2) {
                                              throw Cancelled();
                                          }
                                      }),
                 Cancelled);
    EXPECT_EQ(chunks, 2u) << "nothing read after the cancel";
}

// Reads `path` with 150 MB more address space than the process has now; exits 2 with the
// refusal on standard error, 0 if it was read.
[[noreturn]] void read_under_a_memory_limit(const std::string& path) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t most = rlim_t(pages) * rlim_t(sysconf(_SC_PAGESIZE)) + (rlim_t(150) << 20);
    const rlimit limit{most, most};
    setrlimit(RLIMIT_AS, &limit);
    try {
        read_snapshot_report(path);
    } catch (const BadInput& error) {
        std::fputs(error.what(), stderr);
        std::_Exit(2);
    }
    std::_Exit(0);
}

// A file that needs more memory than the process may have is refused with what it read and
// how much more it needs, not std::bad_alloc. (Sanitizers reserve address space of their own,
// so an address-space limit cannot be set under them.)
TEST(SnapshotReportDeathTest, AFileLargerThanTheMemoryGivenIsRefusedWithWhatItNeeds) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "an address-space limit under AddressSanitizer";
#else
    const test::TempDir dir;
    const std::string path = dir.file("large.pickle");
    test::write_file(path, many_allocations(1000000));  // 90 MB: 2 million events
    EXPECT_EXIT(read_under_a_memory_limit(path), ::testing::ExitedWithCode(2),
                "large.pickle: memory ran out after reading .* times the memory");
#endif
}

// One list named from many places costs where it is used: a trace shared by 1,000 devices or
// blocks shared by every segment (a few megabytes that would take gigabytes and minutes to
// visit) are refused with the reason; devices are found by their number at once.
TEST(SnapshotReport, ListsNamedFromManyPlacesAreCountedWhereTheyAreUsed) {
    // {"segments": [], "device_traces": [T, T, ... 1,000 times]}, T of 100,000 events by memo.
    std::string shared = kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "](";
    const std::string events = many_allocations(100000);
    const std::size_t trace_at = events.find("]](") + 1;
    shared += events.substr(trace_at, events.size() - trace_at - 4) + "e" + "r" + le32(0);
    for (int i = 1; i < 1000; ++i) {
        shared += "j" + le32(0);
    }
    shared += "eu.";
    try {
        snapshot_report_from_bytes(shared, "shared.pickle");
        ADD_FAILURE() << "a trace shared by 1,000 devices was read";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what())
                      .find("shared.pickle: its device traces name the "
                            "same lists from many places"),
                  std::string::npos)
            << error.what();
    }
    // 100,000 devices of one segment each: every one found, in order.
    std::string devices = kProto2 + "}(" + text("segments") + "](";
    for (std::uint32_t i = 0; i < 100000; ++i) {
        devices +=
            "}(" + text("device") + "J" + le32(i) + text("total_size") + "J" + le32(1024) + "u";
    }
    devices += "eu.";
    const SnapshotReport report = snapshot_report_from_bytes(devices, "devices.pickle");
    ASSERT_EQ(report.devices.size(), 100000u);
    EXPECT_EQ(report.devices[99999].index, 99999);
    EXPECT_EQ(report.devices[99999].reserved, 1024);
}

// An integer of any size, as LONG1 spells it (eight bytes, two's complement).
std::string long8(std::int64_t value) {
    std::string out = bytes({0x8a, 8});
    for (int i = 0; i < 8; ++i) {
        out += static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
    }
    return out;
}

// A trace that does not add up (a history begun late, a lost free, a free of another size,
// and more allocated than the segments dumped at the end hold): each is named, handled by one
// rule, and no figure is below zero or a share over 100%.
TEST(SnapshotReport, ATraceThatDoesNotAddUpIsNamedAndNothingGoesNegative) {
    const auto event = [](const char* action, std::int64_t address, std::int64_t size) {
        return "}(" + text("action") + text(action) + text("addr") + long8(address) + text("size") +
               long8(size) + "u";
    };
    constexpr std::int64_t kGiB = std::int64_t(1) << 30;
    const std::string segment = "}(" + text("device") + "K" + bytes({0}) + text("address") +
                                long8(1 << 20) + text("total_size") + long8(2 << 20) +
                                text("blocks") + "]}(" + text("address") + long8(1 << 20) +
                                text("size") + long8(512) + text("state") +
                                text("active_allocated") + "uau";
    const std::string pickle = kProto2 + "}(" + text("segments") + "](" + segment + "e" +
                               text("device_traces") + "]](" +
                               event("free_completed", 0x9000, 1024) +       // before the trace
                               event("alloc", 0xB000, 4096) +                //
                               event("alloc", 0xB000, 4096) +                // a free lost
                               event("free_completed", 0xB000, 100) +        // another size
                               event("free_completed", 0xC000, 10 * kGiB) +  // before
                               event("alloc", 0xE000, kGiB) +  // never freed: the end is 512 B
                               "eau.";
    const SnapshotReport report = snapshot_report_from_bytes(pickle, "late.pickle");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    const std::string problems = nlohmann::json(device.trace_problems).dump();
    ASSERT_EQ(device.trace_problems.size(), 4u) << problems;
    EXPECT_NE(device.trace_problems[0].find("2 frees of memory allocated before the trace began "
                                            "(10.00 GiB)"),
              std::string::npos)
        << problems;
    EXPECT_NE(device.trace_problems[1].find("1 allocation at an address already in use"),
              std::string::npos)
        << problems;
    EXPECT_NE(device.trace_problems[2].find("1 free of another size"), std::string::npos)
        << problems;
    EXPECT_NE(device.trace_problems[3].find("more allocated away than the segments"),
              std::string::npos)
        << problems;
    // The start holds what the trace frees without allocating it: 10 GiB and 1 KiB.
    EXPECT_EQ(device.timeline.front().allocated, 10 * kGiB + 1024);
    for (const SnapshotPoint& point : device.timeline) {
        EXPECT_GE(point.allocated, 0) << "event " << point.event;
        EXPECT_GE(point.reserved, 0) << "event " << point.event;
    }
    for (std::size_t step = 0; step <= device.events; ++step) {
        const SnapshotMoment moment = snapshot_moment(device, step);
        std::int64_t alive = 0;
        for (const SnapshotLine& line : moment.by_line) {
            EXPECT_GE(line.bytes, 0) << line.where;
            alive += line.bytes;
        }
        EXPECT_EQ(alive, moment.allocated) << "after event " << step;
    }
    for (const SnapshotAdvice& item : snapshot_advice(device, std::nullopt)) {
        for (std::size_t at = item.why.find('%'); at != std::string::npos;
             at = item.why.find('%', at + 1)) {
            std::size_t digits = at;
            while (digits > 0 && std::isdigit(static_cast<unsigned char>(item.why[digits - 1]))) {
                --digits;
            }
            EXPECT_LE(std::stoi(item.why.substr(digits, at - digits)), 100) << item.why;
        }
    }
    const nlohmann::json shown = nlohmann::json::parse(snapshot_report_json(report));
    EXPECT_EQ(shown["devices"][0]["trace_problems"].size(), 4u);
}

// Values PyTorch never writes are refused naming the record and the key, rather than counted
// as 0 B, merged into another device or wrapped around.
TEST(SnapshotReport, FieldsOfTheWrongKindOrRangeAreRefusedNamingTheRecord) {
    const auto with_event = [](const std::string& size) {
        return kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "]](}(" +
               text("action") + text("alloc") + text("addr") + "K" + bytes({8}) + text("size") +
               size + "ueau.";
    };
    const auto with_segment = [](const std::string& fields, const std::string& blocks) {
        return kProto2 + "}(" + text("segments") + "](}(" + fields + text("blocks") + "](" +
               blocks + "eue" + text("device_traces") + "]u.";
    };
    const auto block = [](std::int64_t size) {
        return "}(" + text("size") + long8(size) + text("state") + text("active_allocated") + "u";
    };
    std::string many_huge_blocks = "}(" + text("size") + long8(std::int64_t(1) << 50) +
                                   text("state") + text("inactive") + "uq" + bytes({0});
    for (int i = 0; i < 1100; ++i) {
        many_huge_blocks += "h" + bytes({0});
    }
    const std::vector<std::pair<std::string, std::string>> cases = {
        {with_event("G" + bytes({0x40, 0x0c, 0, 0, 0, 0, 0, 0})),
         "device_traces[0][0]: \"size\" is a float (3.5), not a whole number"},
        {with_event("G" + bytes({0x7f, 0xf8, 0, 0, 0, 0, 0, 0})), "\"size\" is a float (nan)"},
        {with_event(text("512")), "\"size\" is a string, not a whole number"},
        {with_event("N"), "\"size\" is None, not a whole number"},
        {with_event(long8(-512)), "\"size\" is -512, outside 0 to"},
        {with_segment(text("device") + long8(std::int64_t(1) << 32), ""),
         "segments[0]: \"device\" is 4294967296, outside 0 to 2147483647"},
        {with_segment(text("total_size") + long8(std::int64_t(1) << 62), ""),
         "\"total_size\" is 4611686018427387904, outside 0 to 1125899906842624"},
        {with_segment(text("total_size") + long8(2048), block(4096)),
         "segments[0]: its blocks hold 4.0 KiB, more than its total_size of 2.0 KiB"},
        {with_segment(text("total_size") + long8(1024), many_huge_blocks),
         "segments[0].blocks[1024]: its sizes add up past 1 EiB"},
        {kProto2 + "}(" + text("segments") + text("none") + "u.",
         "the root: \"segments\" is a string, not a list"},
        {kProto2 + "}(" + text("device_traces") + "](" + text("none") + "eu.",
         "device_traces[0]: a device's trace is a string, not a list"},
    };
    for (const auto& [pickle, expected] : cases) {
        try {
            snapshot_report_from_bytes(pickle, "odd.pickle");
            ADD_FAILURE() << "accepted; expected: " << expected;
        } catch (const BadInput& error) {
            EXPECT_EQ(std::string(error.what()).rfind("odd.pickle: ", 0), 0u) << error.what();
            EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
                << "expected \"" << expected << "\", got: " << error.what();
        }
    }
}

// What the file is decides how it is read: a profiler's trace with a UTF-8 or UTF-16
// byte-order mark, or gzipped (as tensorboard_trace_handler writes it), is JSON; a pickle of
// protocol 0 or another file is refused as neither kind, with its first bytes.
TEST(SnapshotReport, TheKindOfFileIsToldByItsFirstBytes) {
    const test::TempDir dir;
    const std::string trace =
        R"({"traceEvents": [{"ph": "i", "name": "[memory]", "ts": 1, "pid": 1, "tid": 1,)"
        R"( "args": {"Addr": 4096, "Bytes": 512, "Total Allocated": 512,)"
        R"( "Total Reserved": 2097152, "Device Type": 1, "Device Id": 0}}]})";
    std::string utf16 = "\xff\xfe";
    for (const char c : trace) {
        utf16 += std::string(1, c) + std::string(1, '\0');
    }
    for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
             {"bom.json", "\xef\xbb\xbf" + trace}, {"utf16.json", utf16}}) {
        test::write_file(dir.file(name), content);
        const SnapshotReport report = read_snapshot_report(dir.file(name));
        ASSERT_EQ(report.devices.size(), 1u) << name;
        EXPECT_EQ(report.devices[0].peak_allocated, 512) << name;
    }
    test::write_file(dir.file("trace.json"), trace);
    ASSERT_EQ(std::system(("gzip -k " + dir.file("trace.json")).c_str()), 0);
    EXPECT_EQ(read_snapshot_report(dir.file("trace.json.gz")).devices.at(0).peak_allocated, 512);
    for (const auto& [content, first] : std::vector<std::pair<std::string, std::string>>{
             {"(dp0\nS'segments'\n", "0x28 0x64 0x70 0x30"}, {"", "nothing (the file is empty)"}}) {
        test::write_file(dir.file("other"), content);
        try {
            read_snapshot_report(dir.file("other"));
            ADD_FAILURE() << first;
        } catch (const BadInput& error) {
            EXPECT_NE(std::string(error.what()).find("neither a memory snapshot"),
                      std::string::npos)
                << error.what();
            EXPECT_NE(std::string(error.what()).find("starts with " + first), std::string::npos)
                << error.what();
        }
    }
}

// A snapshot of no memory whose "oomlab_experiment" is `experiment` (BINUNICODE, any length).
std::string snapshot_with_experiment(const std::string& experiment) {
    std::string length(4, '\0');
    for (int i = 0; i < 4; ++i) {
        length[std::size_t(i)] = static_cast<char>((experiment.size() >> (8 * i)) & 0xff);
    }
    return bytes({0x80, 4}) + "}(" + text("segments") + "]" + text("device_traces") + "]" +
           text("oomlab_experiment") + "X" + length + experiment + "u.";
}

TEST(SnapshotReport, AnExperimentThatIsNotSettingsIsLeftOutAndSaysWhy) {
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    const std::vector<std::pair<std::string, std::string>> cases = {
        {deep, "nested more than 64 levels deep"},
        {"{\"train\": {\"batch_size\": ", "not JSON"},
        {"[1, 2]", "not a JSON object"},
        {"\"batch_size\"", "not a JSON object"}};
    for (const auto& [experiment, why] : cases) {
        const SnapshotReport report =
            snapshot_report_from_bytes(snapshot_with_experiment(experiment), "x.pickle");
        EXPECT_TRUE(report.experiment_json.empty());
        EXPECT_NE(report.experiment_problem.find(why), std::string::npos)
            << report.experiment_problem;
        // The JSON written is JSON, with the reason in place of the settings.
        const nlohmann::json shown = nlohmann::json::parse(snapshot_report_json(report));
        EXPECT_FALSE(shown.contains("experiment"));
        EXPECT_EQ(shown["experiment_problem"], report.experiment_problem);
    }
    const SnapshotReport settings = snapshot_report_from_bytes(
        snapshot_with_experiment("{\"train\": {\"batch_size\": 4}}"), "x.pickle");
    EXPECT_TRUE(settings.experiment_problem.empty());
    const nlohmann::json shown = nlohmann::json::parse(snapshot_report_json(settings));
    EXPECT_EQ(shown["experiment"]["train"]["batch_size"], 4);
}

TEST(SnapshotReport, APickleThatIsNoSnapshotIsNamed) {
    try {
        snapshot_report_from_bytes(kProto2 + "}q" + bytes({0}) + ".", "other.pickle");
        FAIL() << "read an empty dict as a snapshot";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what())
                      .find("other.pickle: a pickle, but not a memory "
                            "snapshot"),
                  std::string::npos)
            << error.what();
    }
}

}  // namespace
}  // namespace oomlab::snapshot
