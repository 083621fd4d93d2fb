// Lists given away as they are read: the pickle reader hands a sink's lists over item by item
// and keeps none of them, and a snapshot read that way says what one read whole says; and the
// memo that lets it forget them.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "pickle_bytes.h"
#include "snapshot_reader/pickle_reader.h"

namespace oomlab::snapshot {
namespace {

// Takes each list whose first item is a dict with an "event": the values of "event" seen.
class EventSink : public PickleListSink {
public:
    std::uint32_t begin_list(const PickleValue& first) override {
        return first.at("event") ? ++m_lists : 0;
    }
    void take(std::uint32_t list, std::size_t index, const PickleValue& item) override {
        seen.push_back({list, index, item.at("event") ? item.at("event")->integer() : -1});
    }
    std::uint64_t bytes() const override { return seen.size() * sizeof(Seen); }

    struct Seen {
        std::uint32_t list;
        std::size_t index;
        std::int64_t event;
        bool operator==(const Seen& other) const {
            return list == other.list && index == other.index && event == other.event;
        }
    };
    std::vector<Seen> seen;

private:
    std::uint32_t m_lists = 0;
};

// {"event": n}, memoized at `slot` as Python's pickler memoizes every dict.
std::string event(int n, int slot) {
    return "}q" + bytes({slot}) + "(" + text("event") + "K" + bytes({n}) + "u";
}

TEST(PickleReader, AListTheSinkTakesKeepsNoneOfItsItems) {
    // [[{"event": 0}, {"event": 1}, {"event": 2}], ["x", 9]]
    const std::string pickle = kProto2 + "]((" + event(0, 0) + event(1, 1) + event(2, 2) + "l(" +
                               text("x") + "K" + bytes({9}) + "le.";
    EventSink sink;
    const PickleDocument document = read_pickle(pickle, "sink.pickle", &sink);
    const PickleContainer* lists = document.root().list();
    ASSERT_TRUE(lists);
    ASSERT_EQ(lists->size(), 2u);
    const PickleContainer* taken = lists->items[0].list();
    ASSERT_TRUE(taken);
    EXPECT_NE(taken->sink_list, 0u);
    EXPECT_EQ(taken->taken, 3u);
    EXPECT_TRUE(taken->items.empty());
    EXPECT_EQ(sink.seen, (std::vector<EventSink::Seen>{{1, 0, 0}, {1, 1, 1}, {1, 2, 2}}));
    const PickleContainer* kept = lists->items[1].list();
    ASSERT_TRUE(kept);
    EXPECT_EQ(kept->sink_list, 0u) << "its first item is no event";
    EXPECT_EQ(kept->items.size(), 2u);
}

TEST(PickleReader, AnItemTheSinkTookIsNamedAgainOnlyWhereItWasKept) {
    // [["x", {"event": 5}], [memo 0]]: the dict the first list holds is given to the sink
    // too, and stays whole in the first.
    const std::string shared = kProto2 + "](]q" + bytes({1}) + "(" + text("x") + event(5, 0) +
                               "e]q" + bytes({2}) + "(h" + bytes({0}) + "ee.";
    EventSink sink;
    const PickleDocument document = read_pickle(shared, "shared.pickle", &sink);
    const PickleContainer* lists = document.root().list();
    ASSERT_TRUE(lists);
    ASSERT_EQ(lists->size(), 2u);
    EXPECT_EQ(lists->items[0].list()->items.at(1).at("event")->integer(), 5);
    EXPECT_EQ(lists->items[1].list()->taken, 1u);
    EXPECT_EQ(sink.seen, (std::vector<EventSink::Seen>{{1, 0, 5}}));
    // A dict only the sink took is gone: naming it again (no snapshot does) is refused.
    const std::string again =
        kProto2 + "](]q" + bytes({1}) + "(" + event(5, 0) + "eh" + bytes({0}) + "e.";
    EventSink other;
    try {
        read_pickle(again, "again.pickle", &other);
        ADD_FAILURE() << "a memo reference to a given item was read";
    } catch (const BadInput& error) {
        EXPECT_NE(std::string(error.what()).find("memo reference 0 to a trace event read before"),
                  std::string::npos)
            << error.what();
    }
}

// A memo slot whose item the sink took, put again (Python never does; a damaged file may): the
// slot holds the new value.
TEST(PickleReader, ASlotWhoseItemTheSinkTookHoldsWhatIsPutThereAgain) {
    // [[{"event": 5} put 0], "x" put 0, get 0]
    const std::string pickle = kProto2 + "](]q" + bytes({1}) + "(" + event(5, 0) + "e" + text("x") +
                               "q" + bytes({0}) + "h" + bytes({0}) + "e.";
    EventSink sink;
    const PickleDocument document = read_pickle(pickle, "put-again.pickle", &sink);
    const PickleContainer* items = document.root().list();
    ASSERT_TRUE(items);
    ASSERT_EQ(items->size(), 3u);
    EXPECT_EQ(sink.seen, (std::vector<EventSink::Seen>{{1, 0, 5}}));
    ASSERT_TRUE(items->items[2].text());
    EXPECT_EQ(*items->items[2].text(), "x");
}

// A value memoized under several numbers (a memo reference memoized again), a string named
// again after other strings were read, and a scalar: each entry gives back what was put.
TEST(PickleReader, AValueMemoizedUnderManyNumbersIsTheSameValueUnderEach) {
    // ["abc" put 0, get 0 put 1, "de", get 1, [] put 2, get 2, get 0, 7 put 3, get 3]
    const std::string pickle = kProto2 + "](" + text("abc") + "q" + bytes({0}) + "h" + bytes({0}) +
                               "q" + bytes({1}) + text("de") + "h" + bytes({1}) + "]q" +
                               bytes({2}) + "h" + bytes({2}) + "h" + bytes({0}) + "K" + bytes({7}) +
                               "q" + bytes({3}) + "h" + bytes({3}) + "e.";
    const PickleDocument document = read_pickle(pickle, "memo.pickle");
    const PickleContainer* items = document.root().list();
    ASSERT_TRUE(items);
    ASSERT_EQ(items->size(), 9u);
    for (const std::size_t at : {0, 1, 3, 6}) {
        ASSERT_TRUE(items->items[at].text()) << at;
        EXPECT_EQ(*items->items[at].text(), "abc") << at;
        EXPECT_EQ(items->items[at].text(), items->items[0].text()) << "one string kept";
    }
    EXPECT_EQ(*items->items[2].text(), "de");
    ASSERT_TRUE(items->items[4].list());
    EXPECT_EQ(items->items[4].list(), items->items[5].list());
    EXPECT_EQ(items->items[7].integer(), 7);
    EXPECT_EQ(items->items[8].integer(), 7);
}

// A snapshot of allocations with stacks, its trace as PyTorch writes it, or after a None
// (a list whose first item is no event is read whole, then collected).
std::string snapshot(bool none_first) {
    const auto frame = [](const std::string& file, int line) {
        return "]}(" + text("filename") + text(file) + text("line") + "K" + bytes({line}) +
               text("name") + text("forward") + "ua";
    };
    std::string trace = none_first ? "N" : "";
    for (int i = 0; i < 40; ++i) {
        trace += "}(" + text("action") + text("alloc") + text("addr") + "J" + le32(4096u * i) +
                 text("size") + "J" + le32(512u * (i % 5 + 1)) + text("frames") +
                 frame(i % 3 ? "train.py" : "model.py", i % 4 + 1) + "u";
        if (i % 2) {
            trace += "}(" + text("action") + text("free_completed") + text("addr") + "J" +
                     le32(4096u * (i - 1)) + text("size") + "J" + le32(512u * (i % 5)) + "u";
        }
    }
    return kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "](" + "(" + trace +
           "leu.";
}

TEST(SnapshotReport, ATraceTakenAsItIsReadSaysWhatOneReadWholeSays) {
    const SnapshotReport taken = snapshot_report_from_bytes(snapshot(false), "taken.pickle");
    const SnapshotReport whole = snapshot_report_from_bytes(snapshot(true), "whole.pickle");
    ASSERT_EQ(taken.devices.size(), 1u);
    ASSERT_EQ(whole.devices.size(), 1u);
    const SnapshotDevice& a = taken.devices[0];
    const SnapshotDevice& b = whole.devices[0];
    EXPECT_EQ(a.events, 60u);
    EXPECT_EQ(b.events, 61u);
    EXPECT_GT(a.peak_allocated, 0);
    EXPECT_EQ(a.peak_allocated, b.peak_allocated);
    ASSERT_EQ(a.changes.size(), b.changes.size());
    for (std::size_t i = 0; i < a.changes.size(); ++i) {
        EXPECT_EQ(a.changes[i].event + 1, b.changes[i].event) << i;
        EXPECT_EQ(a.changes[i].address, b.changes[i].address) << i;
        EXPECT_EQ(a.changes[i].size, b.changes[i].size) << i;
        EXPECT_EQ(a.changes[i].freed == SnapshotTraceChange::kNeverFreed,
                  b.changes[i].freed == SnapshotTraceChange::kNeverFreed)
            << i;
    }
    ASSERT_EQ(a.at_peak.size(), b.at_peak.size());
    ASSERT_GE(a.at_peak.size(), 2u);
    for (std::size_t i = 0; i < a.at_peak.size(); ++i) {
        EXPECT_EQ(a.at_peak[i].where, b.at_peak[i].where);
        EXPECT_EQ(a.at_peak[i].bytes, b.at_peak[i].bytes);
        EXPECT_EQ(a.at_peak[i].blocks, b.at_peak[i].blocks);
    }
    EXPECT_NE(a.at_peak[0].where.find(".py:"), std::string::npos) << a.at_peak[0].where;
}

}  // namespace
}  // namespace oomlab::snapshot
