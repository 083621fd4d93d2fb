// Snapshots and traces at the sizes users have, and hostile or inconsistent ones: read in
// chunks with progress and a cancel, refused past the memory given, lists shared from many
// places counted where used, traces that do not add up made consistent and named, values
// PyTorch never writes refused, and the kind of file told by its first bytes.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "pickle_bytes.h"
#include "snapshot_reader/pickle_reader.h"
#include "test_support.h"

namespace oomlab::snapshot {
namespace {

// A file is read a megabyte at a time, with its progress told after each, and a progress
// callback that throws stops the reading there; the gzipped file reads the same and its
// progress counts its own (compressed) bytes.
TEST(SnapshotReport, AFileIsReadInChunksWithProgressAndStopsWhenCancelled) {
    const test::TempDir dir;
    const std::string path = dir.file("many.pickle");
    test::write_file(path, many_allocations(60000));  // about 7 MB
    std::vector<std::uint64_t> told;
    std::uint64_t size = 0;
    std::vector<std::string> phases;
    const SnapshotReport report = read_snapshot_report(path, [&](const SnapshotStage& stage) {
        if (phases.empty() || phases.back() != stage.phase) {
            phases.push_back(stage.phase);
        }
        if (phases.back() == "reading") {
            told.push_back(stage.done);
            size = stage.total;
        } else {
            EXPECT_EQ(stage.total, 120000u) << stage.phase;  // the trace's events
        }
    });
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].events, 120000u);
    EXPECT_EQ(report.devices[0].peak_allocated, 512);
    EXPECT_EQ(size, std::filesystem::file_size(path));
    ASSERT_GE(told.size(), 5u);
    EXPECT_TRUE(std::is_sorted(told.begin(), told.end()));
    EXPECT_LE(told.back(), size);
    // After the file is read (its trace collected as it is read), each phase of the work on
    // it is told, and can be cancelled.
    EXPECT_EQ(phases, (std::vector<std::string>{"reading", "replaying"}));
    for (const char* cancelled_in : {"reading", "replaying"}) {
        bool cancelled = false;
        EXPECT_THROW(read_snapshot_report(path,
                                          [&](const SnapshotStage& stage) {
                                              if (std::string(stage.phase) == cancelled_in) {
                                                  cancelled = true;
                                                  throw Cancelled();
                                              }
                                          }),
                     Cancelled)
            << cancelled_in;
        EXPECT_TRUE(cancelled) << cancelled_in;
    }
    std::size_t chunks = 0;
    EXPECT_THROW(read_snapshot_report(path,
                                      [&](const SnapshotStage&) {
                                          if (++chunks == 2) {
                                              throw Cancelled();
                                          }
                                      }),
                 Cancelled);
    EXPECT_EQ(chunks, 2u) << "nothing read after the cancel";
}

#if !defined(__SANITIZE_ADDRESS__)  // sanitizers reserve address space of their own
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
#endif

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
    // A profiler's JSON trace is read as it comes, never held whole (it gave a bare
    // std::bad_alloc, then ran out of memory): 300 MB of white space within the 150 MB given.
    const std::string json = dir.file("spaces.json");
    std::ofstream(json) << '{' << std::string(300 << 20, ' ');
    EXPECT_EXIT(read_under_a_memory_limit(json), ::testing::ExitedWithCode(2),
                "spaces.json:1: not a Chrome trace of PyTorch's profiler \\(the file ends "
                "before the document does, at byte 314572801\\)");
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

// An endless pickle, as a gzip bomb unpacks: `head`, then `pattern` again and again.
class EndlessInput : public PickleInput {
public:
    EndlessInput(std::string head, std::string pattern)
        : m_head(std::move(head)), m_pattern(std::move(pattern)) {}
    std::size_t read(char* into, std::size_t most) override {
        for (std::size_t i = 0; i < most; ++i, ++m_at) {
            into[i] = m_at < m_head.size() ? m_head[m_at]
                                           : m_pattern[(m_at - m_head.size()) % m_pattern.size()];
        }
        return most;
    }
    std::uint64_t at() const { return m_at; }

private:
    std::string m_head;
    std::string m_pattern;
    std::uint64_t m_at = 0;
};

std::string refusal_of(PickleInput& input) {
    try {
        read_pickle(input, "bomb.pickle.gz");
    } catch (const BadInput& error) {
        return error.what();
    }
    return "(read whole)";
}

// Bombs that unpack without end are refused by what they cost against what they spell out,
// long before the machine's memory (no ulimit) or the 16 GiB any file may unpack to: empty
// lists kept by the million (80 bytes each for 1 byte), a memo numbered past the values made,
// a string said to be 12 GiB long, and values dropped as soon as they are made.
TEST(SnapshotReport, BombsAreRefusedByTheirCostAgainstWhatTheySpellOut) {
    const auto refused_for = [](PickleInput& input, const std::string& why) {
        const std::string refusal = refusal_of(input);
        EXPECT_NE(refusal.find(why), std::string::npos) << refusal;
    };
    EndlessInput lists(kProto2, "]");
    refused_for(lists, "of memory after 2.");  // MiB of pickle: 80 bytes for each
    EXPECT_LT(lists.at(), std::uint64_t(8) << 20);
    // A memo numbered past the values made: after one string of a mebibyte, entry 500,000.
    const std::string past =
        kProto2 + "X" + le32(1 << 20) + std::string(1 << 20, 'x') + "r" + le32(500000) + ".";
    try {
        read_pickle(past, "memo.pickle");
        ADD_FAILURE() << "a memo entry past the values made was stored";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("memo index 500000 past the 1 values made so far"),
                  std::string::npos)
            << error.what();
    }
    // NONE again and again, kept on the stack: 16 bytes for each byte, refused by the ratio
    // or, on a machine of less memory than it would take, by the machine.
    EndlessInput nones(kProto2, "N");
    refused_for(nones, " of memory after ");
    EndlessInput text_claim(kProto2 + bytes({0x8d}) + long8(std::int64_t(12) << 30).substr(2), "x");
    refused_for(text_claim, "a string of 12.00 GiB, longer than any name a snapshot holds");
    EXPECT_LT(text_claim.at(), std::uint64_t(2) << 20);
    EndlessInput dropped(kProto2, "N0");
    refused_for(dropped, "its values are dropped as they are made");
    EXPECT_LT(dropped.at(), std::uint64_t(80) << 20);
}

// One event dict of 20,000 keys named 400,000 times (a 2 MB file): each of its fields is
// looked up in an index of its keys, not by a scan of them (82 s before; reading is now
// linear in the file), and every event is counted.
TEST(SnapshotReport, ADictOfManyKeysNamedFromManyPlacesIsReadInLinearTime) {
    std::string pickle = kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "](](}(";
    for (int i = 0; i < 20000; ++i) {
        pickle += text("key" + std::to_string(i)) + "N";
    }
    pickle += text("action") + text("alloc") + text("addr") + long8(1 << 20) + text("size") +
              long8(512) + "ur" + le32(0);
    for (int i = 1; i < 400000; ++i) {
        pickle += "j" + le32(0);
    }
    pickle += "eeu.";
    const SnapshotReport report = snapshot_report_from_bytes(pickle, "wide.pickle");
    ASSERT_EQ(report.devices.size(), 1u);
    EXPECT_EQ(report.devices[0].events, 400000u);
}

// A trace's streams are kept once each, a change naming its stream by index (a change is 32
// bytes); past 65,536 distinct streams (no program has them) the event is refused.
TEST(SnapshotReport, AChangeNamesItsStreamAndStreamsPastWhatAProgramUsesAreRefused) {
    const auto trace_of = [](std::int64_t streams) {
        std::string pickle =
            kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "](](";
        for (std::int64_t i = 0; i < streams; ++i) {
            pickle += "}(" + text("action") + text("alloc") + text("addr") + long8(512 * i) +
                      text("size") + long8(512) + text("stream") + long8(i == 2 ? 5 : 5 + 4 * i) +
                      "u";
        }
        return pickle + "eeu.";
    };
    const SnapshotReport report = snapshot_report_from_bytes(trace_of(3), "streams.pickle");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    EXPECT_EQ(device.streams, (std::vector<std::int64_t>{5, 9}));
    ASSERT_EQ(device.changes.size(), 3u);
    EXPECT_EQ(device.streams.at(device.changes[1].stream), 9);
    EXPECT_EQ(device.streams.at(device.changes[2].stream), 5);
    try {
        snapshot_report_from_bytes(trace_of(65538), "streams.pickle");
        ADD_FAILURE() << "65,537 distinct streams were read";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what())
                      .find("device_traces[0][65537]: a trace of more than 65536 streams"),
                  std::string::npos)
            << error.what();
    }
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
    EXPECT_NE(device.trace_problems[3].find("more allocated than the segments dumped at the end "
                                            "hold: frees after its last event are missing"),
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

// 9,000 segments of 1 PiB each (sizes the reader accepts) add up past what any figure can
// count: the trace is followed to the event that would pass 1 EiB, said so, and no figure of
// the report, the timeline or the what-if's fidelity is negative.
TEST(SnapshotReport, SegmentsAddingUpPastAnyMachineStopTheTraceThereWithWords) {
    constexpr std::int64_t kPiB = std::int64_t(1) << 50;
    std::string events;
    for (std::int64_t i = 0; i < 9000; ++i) {
        events += "}(" + text("action") + text("segment_alloc") + text("addr") +
                  long8((i % 2000 + 1) * 2 * kPiB) + text("size") + long8(kPiB) + "u";
    }
    const std::string pickle =
        kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "]](" + events + "eau.";
    const SnapshotReport report = snapshot_report_from_bytes(pickle, "huge.pickle");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    const std::string problems = nlohmann::json(device.trace_problems).dump();
    EXPECT_NE(problems.find("add up past 1 EiB"), std::string::npos) << problems;
    EXPECT_EQ(device.changes.size(), 1024u) << "1 EiB is 1,024 PiB";
    EXPECT_GE(device.peak_reserved, 0);
    EXPECT_LE(device.peak_reserved, std::int64_t(1) << 60);
    for (const SnapshotPoint& point : device.timeline) {
        ASSERT_GE(point.reserved, 0) << "event " << point.event;
    }
    for (const SnapshotWhatIf& result : snapshot_whatif(report, std::nullopt, std::nullopt)) {
        for (const allocator::FidelityMiss& miss : result.fidelity.misses) {
            EXPECT_GE(miss.recorded, 0);
            EXPECT_GE(miss.modelled, 0);
        }
    }
    // Settings the snapshot recorded that no allocator accepts do not block the replay: it
    // takes the defaults, and says so in the snapshot's words, not an environment variable's.
    SnapshotReport odd = report;
    odd.alloc_conf = "roundup_power2_divisions:3";
    const std::vector<SnapshotWhatIf> replayed = snapshot_whatif(odd, std::nullopt, std::nullopt);
    ASSERT_EQ(replayed.size(), 1u);
    std::string notes;
    for (const std::string& note : replayed[0].notes) {
        notes += note + "\n";
    }
    EXPECT_NE(notes.find("the settings the snapshot recorded (\"roundup_power2_divisions:3\") are "
                         "not valid"),
              std::string::npos)
        << notes;
    EXPECT_EQ(notes.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos) << notes;
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
        {with_segment(text("total_size") + long8(8192), block(512) + "}(" + text("size") + "G" +
                                                            bytes({0x40, 0x0c, 0, 0, 0, 0, 0, 0}) +
                                                            text("state") + text("inactive") + "u"),
         "segments[0].blocks[1]: \"size\" is a float (3.5), not a whole number"},
        {with_segment(text("total_size") + long8(8192),
                      "}(" + text("action") + text("alloc") + text("size") + long8(512) + "u"),
         "segments[0]: its \"blocks\" are a trace's events"},
        {with_event(long8(512) + text("category") + "K" + bytes({3})),
         "device_traces[0][0]: \"category\" is 3, not a string"},
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

}  // namespace
}  // namespace oomlab::snapshot
