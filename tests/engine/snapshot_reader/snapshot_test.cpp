// Reading memory snapshots: the strict pickle reader on hand-made pickles (every opcode of
// plain data, and a corpus of hostile ones), and what a real snapshot PyTorch recorded says.
#include "snapshot_reader/pickle_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_bytes.h"
#include "test_support.h"

namespace oomlab::snapshot {
namespace {

std::string refusal(const std::string& pickle) {
    try {
        read_pickle(pickle, "hostile.pickle");
    } catch (const BadInput& error) {
        return error.what();
    }
    return {};
}

// {"a": 1, "a": 2} (SETITEMS with a key twice): the last value, as pickle.load keeps it.
TEST(PickleReader, AKeySetTwiceHoldsItsLastValue) {
    const std::string pickle = kProto2 + "}(" + text("a") + "K" + bytes({1}) + text("b") + "K" +
                               bytes({5}) + text("a") + "K" + bytes({2}) + "u.";
    const PickleDocument document = read_pickle(pickle, "twice.pickle");
    ASSERT_TRUE(document.root().at("a"));
    EXPECT_EQ(document.root().at("a")->integer(), 2);
    EXPECT_EQ(document.root().at("b")->integer(), 5);
}

// A large dict is looked up through an index of its keys, which keeps the last of a key set
// twice as well; a key that is not text is never found by a text.
TEST(PickleReader, ALargeDictFindsEachKeyAndTheLastOfAKeySetTwice) {
    std::string pickle =
        kProto2 + "}(" + text("a") + "K" + bytes({1}) + "K" + bytes({9}) + "K" + bytes({9});
    for (int i = 0; i < 40; ++i) {
        pickle += text("k" + std::to_string(i)) + "J" + le32(std::uint32_t(i));
    }
    pickle += text("a") + "K" + bytes({2}) + "u.";
    const PickleDocument document = read_pickle(pickle, "large.pickle");
    ASSERT_EQ(document.root().dict()->size(), 43u);
    ASSERT_TRUE(document.root().at("a"));
    EXPECT_EQ(document.root().at("a")->integer(), 2);
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(document.root().at("k" + std::to_string(i))) << i;
        EXPECT_EQ(document.root().at("k" + std::to_string(i))->integer(), i);
    }
    EXPECT_FALSE(document.root().at("k40"));
    EXPECT_FALSE(document.root().at("9"));
}

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
        {kProto2 + bytes({0x8b, 0x01, 0x04, 0, 0}) + std::string(1025, '\x01') + ".",
         "a whole number of 1025 bytes"},
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
    EXPECT_EQ(kinds["copy or cast"], 37632) << "validate_old.py:59 and :60";
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

// A peak whose blocks have no frame at all (a history recorded without stacks) names no place
// to start: it says how to record the lines, once; a profiler's trace without with_stack names
// the op each allocation was made in, and is told of with_stack.
TEST(SnapshotAdvice, APeakWithoutPythonFramesSaysHowToRecordThem) {
    SnapshotDevice device;
    device.events = 8;  // a trace's allocations, none with a Python frame
    device.peak_allocated = 4LL << 30;
    device.at_peak = {{kNoPythonFrame, 3LL << 30, 3}, {kNoPythonFrame, 1LL << 30, 1}};
    std::vector<SnapshotAdvice> advice = snapshot_advice(device, std::nullopt);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_EQ(advice[0].what, "record the Python lines");
    EXPECT_NE(advice[0].why.find("3.00 GiB alive at the peak (75%) has no Python frame on record"),
              std::string::npos)
        << advice[0].why;
    EXPECT_NE(advice[0].why.find("_record_memory_history(stacks=\"python\")"), std::string::npos)
        << advice[0].why;

    device.from_trace = true;
    device.at_peak = {{std::string(kNoPythonFrame) + " aten::mm", 3LL << 30, 3},
                      {std::string(kNoPythonFrame) + " aten::add", 1LL << 30, 1}};
    advice = snapshot_advice(device, std::nullopt);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_EQ(advice[0].what, "record the Python lines");
    EXPECT_NE(advice[0].why.find("profile_memory=True, with_stack=True"), std::string::npos)
        << advice[0].why;
    EXPECT_EQ(advice[0].why.find("_record_memory_history"), std::string::npos) << advice[0].why;
}

// A snapshot recorded with C++ frames (stacks="all") names what backward allocated in autograd's
// own thread by its op and node: a place to start, not a call to record what was recorded.
TEST(SnapshotAdvice, CppFramesOfBackwardAreAPlaceToStart) {
    SnapshotDevice device;
    device.peak_allocated = 4LL << 30;
    const std::string gradients =
        std::string(kNoPythonFrame) + " aten::new_empty_strided in AccumulateGrad";
    device.at_peak = {{gradients, 3LL << 30, 291}};
    const std::vector<SnapshotAdvice> advice = snapshot_advice(device, std::nullopt);
    ASSERT_EQ(advice.size(), 1u);
    EXPECT_EQ(advice[0].what, "start with " + gradients);
    EXPECT_NE(advice[0].why.find("autograd's engine runs backward in a thread of its own"),
              std::string::npos)
        << advice[0].why;
}

// The end state said as far as the file records it: a snapshot without a trace has no peak,
// only what was allocated at the dump, not "after event 0 of 0"; an allocated peak above what
// was reserved then is no file PyTorch wrote, and is said not to add up.
TEST(SnapshotWords, WhatTheFileDoesNotRecordIsNotSaid) {
    SnapshotDevice dump;
    dump.segments = 2;
    dump.reserved = dump.peak_reserved = dump.reserved_at_peak = 40LL << 20;
    dump.allocated = dump.peak_allocated = 30LL << 20;
    EXPECT_EQ(snapshot_peak_words(dump),
              "allocated at the dump: 30.0 MiB (no trace, so no peak); reserved then 40.0 MiB");

    SnapshotDevice made = dump;
    made.events = 1040;
    made.peak_event = 1000;
    made.peak_allocated = 2LL << 30;
    bool said = false;
    for (const std::string& note : snapshot_end_notes(made)) {
        said |= note.rfind("the figures do not add up: 2.00 GiB allocated at the peak", 0) == 0;
    }
    EXPECT_TRUE(said);
    made.peak_allocated = dump.peak_allocated;
    for (const std::string& note : snapshot_end_notes(made)) {
        EXPECT_EQ(note.find("do not add up"), std::string::npos) << note;
    }
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
        snapshot_advice(device_at_oom(8LL << 30, 6LL << 30, 1LL << 30), std::string());
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

// Where the device had room for the request, a limit on the process refused it (a memory
// fraction): said, with the bounds the snapshot gives the limit, and not "X free on the device"
// alone as if the device were full.
TEST(SnapshotAdvice, AnOutOfMemoryWithTheDeviceFreeNamesTheProcessLimit) {
    SnapshotDevice device = device_at_oom(3LL << 30, (3LL << 30) - (100LL << 20), 300LL << 20);
    device.ooms[0].device_free = 136LL << 30;
    const SnapshotOom& oom = device.ooms[0];
    EXPECT_TRUE(refused_by_process_limit(oom));
    EXPECT_EQ(process_limit_note(oom),
              "the device had room: a limit on this process refused it (a memory fraction, "
              "torch.cuda.set_per_process_memory_fraction), set between 3.00 GiB reserved and "
              "3.29 GiB with the request");
    const std::vector<SnapshotAdvice> advice = snapshot_advice(device, std::nullopt);
    ASSERT_FALSE(advice.empty());
    EXPECT_EQ(advice[0].what, "hold less at the peak");
    EXPECT_NE(advice[0].why.find("a limit on this process refused it"), std::string::npos)
        << advice[0].why;
    // A device short of room, or one with room for the request but not for the segment it opens
    // (a 2 MiB request opens 20 MiB), is no limit's doing.
    device.ooms[0].device_free = 200LL << 20;
    EXPECT_TRUE(process_limit_note(device.ooms[0]).empty());
    device.ooms[0].requested = 2LL << 20;
    device.ooms[0].device_free = 10LL << 20;
    EXPECT_FALSE(refused_by_process_limit(device.ooms[0]));
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

// A snapshot of no memory whose "oomlab_experiment" is `experiment` (BINUNICODE, any length).
std::string snapshot_with_experiment(const std::string& experiment) {
    return bytes({0x80, 4}) + "}(" + text("segments") + "]" + text("device_traces") + "]" +
           text("oomlab_experiment") + "X" + le32(std::uint32_t(experiment.size())) + experiment +
           "u.";
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

// Names come from the file: a frame's file name that clears the screen, metadata that sets the
// terminal's title, a stage named with a bell are shown with '?' for each control character,
// in every grouping and in the stages.
TEST(SnapshotHostile, ControlCharactersInNamesAreShownAsQuestionMarks) {
    const std::string frame = "}(" + text("filename") + text("\x1b[2Jevil.py") + text("line") +
                              "K" + bytes({3}) + text("name") + text("f\x07") + "u";
    const std::string event = "}(" + text("action") + text("alloc") + text("addr") + "J" +
                              le32(4096) + text("size") + "J" + le32(512) + text("frames") + "](" +
                              frame + "e" + text("user_metadata") + text("\x1b]0;title\x07") + "u";
    const std::string pickle = kProto2 + "}(" + text("segments") + "]" + text("device_traces") +
                               "]](" + event + "ea" + "u.";
    const SnapshotReport report = snapshot_report_from_bytes(pickle, "control.pickle");
    ASSERT_EQ(report.devices.size(), 1u);
    const SnapshotDevice& device = report.devices[0];
    for (const std::vector<SnapshotLine>* groups :
         {&device.at_peak, &device.at_peak_by_kind, &device.at_peak_by_metadata}) {
        for (const SnapshotLine& line : *groups) {
            EXPECT_EQ(line.where.find_first_of("\x1b\x07"), std::string::npos) << line.where;
        }
    }
    ASSERT_FALSE(device.at_peak.empty());
    EXPECT_EQ(device.at_peak[0].where, "?[2Jevil.py:3 (f?)");
    ASSERT_FALSE(device.at_peak_by_metadata.empty());
    EXPECT_EQ(device.at_peak_by_metadata[0].where, "?]0;title?");
}

}  // namespace
}  // namespace oomlab::snapshot
