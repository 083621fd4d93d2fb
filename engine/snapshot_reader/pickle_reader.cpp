#include "pickle_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/pickle_opcodes.h"
#include "pickle_budget.h"
#include "pickle_containers.h"
#include "pickle_interning.h"
#include "pickle_memo.h"
#include "pickle_stream.h"
#include "pointer_set.h"

namespace oomlab::snapshot {

struct PickleDocument::Storage {
    std::deque<StoredText> strings;  // each distinct string once
    std::deque<PickleContainer> containers;
    std::deque<PickleValue> memoized_scalars;  // what a memo entry of a scalar points to
};

PickleDocument::PickleDocument(std::unique_ptr<Storage> storage, PickleValue root)
    : m_storage(std::move(storage)), m_root(root) {}
PickleDocument::PickleDocument(PickleDocument&&) noexcept = default;
PickleDocument& PickleDocument::operator=(PickleDocument&&) noexcept = default;
PickleDocument::~PickleDocument() = default;

namespace {

using namespace pickle;  // the opcodes

class Reader {
public:
    Reader(PickleInput& input, const std::string& source, const std::function<void()>& after_chunk,
           PickleListSink* sink)
        : m_source(source),
          m_after_chunk(after_chunk),
          m_sink(sink),
          m_storage(std::make_unique<PickleDocument::Storage>()),
          m_bytes(input, [this] {
              within_budget(m_bytes.received(), 0, [] { return std::string("its values"); });
              if (m_after_chunk) {
                  m_after_chunk();
              }
          }) {}

    PickleDocument read() {
        try {
            while (true) {
                m_at = m_bytes.position();
                const auto op = static_cast<unsigned char>(take(1)[0]);
                if (op == kStop) {
                    if (m_stack.size() != 1 || !m_marks.empty()) {
                        fail("STOP with " + std::to_string(m_stack.size()) +
                             " values on the stack");
                    }
                    return PickleDocument(std::move(m_storage), resolved(m_stack.back()));
                }
                step(op);
            }
        } catch (const PickleStream::Truncated&) {
            fail("the file ends inside a value (truncated?)");
        }
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw BadInput(m_source + ": byte " + std::to_string(m_at) +
                       ": not a pickle of plain data (a memory snapshot): " + why);
    }

    std::string_view take(std::size_t count) { return m_bytes.take(count); }
    std::uint64_t unsigned_le(std::size_t count) { return m_bytes.unsigned_le(count); }

    // What the reader keeps: the values made, the stack, the memo and the index of containers.
    std::uint64_t held() const {
        return m_held + m_stack.capacity() * sizeof(PickleValue) + m_memo.bytes() +
               m_canonical.bytes() + m_strings.bytes() + (m_sink ? m_sink->bytes() : 0);
    }

    // Refuses a pickle that keeps far more (with `more` bytes about to be kept for what `what()`
    // names), or far less, than a snapshot of `read` bytes does.
    template <typename What>
    void within_budget(std::uint64_t read, std::uint64_t more, const What& what) const {
        if (const std::uint64_t kept = held() + more; !m_budget.allows(read, kept)) {
            fail(m_budget.refusal(read, kept, what()));
        }
    }

    // Containers: made, dropped once nothing refers to them, and replaced by an equal one.

    static PickleContainer* mutable_container(const PickleValue& value) {
        return const_cast<PickleContainer*>(value.container());
    }

    void pin(const PickleValue& value) {
        if (PickleContainer* container = mutable_container(value)) {
            ++container->pins;
        }
    }

    // One reference from the stack or memo gone: a container nothing holds any more is reused.
    void unpin(const PickleValue& value) {
        PickleContainer* container = mutable_container(value);
        if (!container || --container->pins > 0 ||
            (container->held && !container->same_as && !container->given)) {
            return;
        }
        m_containers.reuse(*container);
    }

    static PickleValue resolved(const PickleValue& value) {
        const PickleContainer* container = value.container();
        return container && container->same_as ? PickleValue::of_container(container->same_as)
                                               : value;
    }

    void push(PickleValue value) {
        ++m_values;
        value = resolved(value);
        pin(value);
        m_stack.push_back(value);
    }

    std::size_t last_mark() const { return m_marks.empty() ? 0 : m_marks.back(); }

    // Where the values above the topmost mark begin on the stack; the mark is removed.
    std::size_t pop_mark() {
        if (m_marks.empty()) {
            fail("no MARK before this opcode");
        }
        const std::size_t mark = m_marks.back();
        m_marks.pop_back();
        return mark;
    }

    // The values from `first` to the top of the stack, dropped (POP, POP_MARK).
    void drop_top_values(std::size_t first) {
        for (std::size_t i = first; i < m_stack.size(); ++i) {
            unpin(m_stack[i]);
        }
        m_stack.resize(first);
    }

    // The container at `index` of the stack, to be filled with the values above it.
    PickleContainer& open_at(std::size_t index) {
        if (index >= m_stack.size() || index < last_mark()) {
            fail("a value was expected on the stack");
        }
        PickleContainer* container = mutable_container(m_stack[index]);
        if (!container) {
            fail("items added to what is not a list or dict, or a key without a value");
        }
        if (container->held) {
            fail("a container filled after another container took it");
        }
        return *container;
    }

    // `child` (taken from the stack) goes into `parent`: from then on it never changes, and
    // an equal container read before takes its place.
    PickleValue adopt(PickleContainer& parent, const PickleValue& child) {
        PickleContainer* container = mutable_container(child);
        if (!container) {
            return child;
        }
        if (container == &parent) {
            fail("a container that holds itself");
        }
        PickleContainer* kept = container->same_as ? container->same_as
                                : container->held  ? container
                                                   : canonical(*container);
        kept->given = false;  // held here too
        parent.depth = std::max(parent.depth, kept->depth + 1);
        if (parent.depth > kMostPickleDepth) {
            fail("nested more than " + std::to_string(kMostPickleDepth) + " levels deep");
        }
        unpin(child);
        return PickleValue::of_container(kept);
    }

    PickleContainer* canonical(PickleContainer& container) {
        container.held = true;
        if (!may_repeat(container)) {
            return &container;
        }
        const auto [kept, added] = m_canonical.find_or_add(&container, [&] { return &container; });
        if (added) {
            return &container;
        }
        container.same_as = kept;
        m_containers.drop_items(container);
        if (container.memo_slot >= 0 &&
            m_memo.at(std::size_t(container.memo_slot)) == container.memo_entry) {
            m_memo.set(std::size_t(container.memo_slot),
                       memo_entry(PickleValue::of_container(kept)));
            ++kept->pins;
            unpin(PickleValue::of_container(&container));
        }
        return kept;
    }

    // The values from `first` to the top of the stack (still pinned) into the container below
    // them, and off the stack: APPEND, APPENDS, SETITEM, SETITEMS. Taken where they lie, as a
    // stack's frames (hundreds of memo references) are appended by the million.
    void add_top_items(std::size_t first) {
        if (first == 0) {
            fail("a value was expected on the stack");
        }
        fill(open_at(first - 1), first);
    }

    void fill(PickleContainer& target, std::size_t first) {
        const std::size_t count = m_stack.size() - first;
        if (target.is_dict && count % 2 != 0) {
            fail("items added to what is not a list or dict, or a key without a value");
        }
        const std::size_t capacity = target.items.capacity();
        if (target.items.empty()) {
            target.items.reserve(count);  // a dict or short list comes in one batch
        }
        for (std::size_t i = first; i < m_stack.size(); ++i) {
            const PickleValue item = m_stack[i];
            if (takes(target, item)) {
                give(target, item);
            } else {
                target.items.push_back(adopt(target, item));
            }
        }
        m_stack.resize(first);
        m_held += (target.items.capacity() - capacity) * sizeof(PickleValue);
    }

    // Whether the sink takes `item` for `list`: it takes every item of a list whose first it
    // took.
    bool takes(PickleContainer& list, const PickleValue& item) {
        if (!m_sink || list.is_dict) {
            return false;
        }
        if (list.sink_list == 0 && list.items.empty()) {
            list.sink_list = m_sink->begin_list(resolved(item));
        }
        return list.sink_list != 0;
    }

    // `item` (taken from the stack, still pinned) to the sink: a container nothing else holds
    // is dropped once the stack lets it go, and the memo forgets it.
    void give(PickleContainer& list, const PickleValue& item) {
        if (item.container() == &list) {
            fail("a container that holds itself");
        }
        m_sink->take(list.sink_list, list.taken++, resolved(item));
        PickleContainer* container = mutable_container(item);
        if (container && !container->held && !container->same_as) {
            container->held = true;  // never filled again
            container->given = true;
            if (container->memo_slot >= 0 &&
                m_memo.at(std::size_t(container->memo_slot)) == container->memo_entry) {
                m_memo.set(std::size_t(container->memo_slot), PickleMemo::kGiven);
                --container->pins;
            }
        }
        unpin(item);
    }

    // A new container of the values from `first` to the top of the stack, in their place.
    void push_container(bool is_dict, std::size_t first) {
        PickleContainer* container = m_containers.make(is_dict);
        fill(*container, first);
        push(PickleValue::of_container(container));
    }

    // The first of the top `count` values, which must lie above the topmost mark.
    std::size_t top(std::size_t count) {
        if (m_stack.size() < last_mark() + count) {
            fail("a value was expected on the stack");
        }
        return m_stack.size() - count;
    }

    // The memo's entry of `value`, numbered the first time it is memoized.
    std::uint32_t memo_entry(const PickleValue& value) {
        std::uint32_t entry = PickleMemo::kNone;
        if (PickleContainer* container = mutable_container(value)) {
            entry = m_memo.entry_of(value, container->memo_entry);
        } else if (value.text()) {
            // A string is memoized as it is read; one memoized again later (from a memo
            // reference) is looked up.
            StoredText* stored = m_last_text && &m_last_text->text == value.text()
                                     ? m_last_text
                                     : stored_text(*value.text()).first;
            entry = m_memo.entry_of(value, stored->memo_entry);
        } else {
            m_held += sizeof(PickleValue);
            entry = m_memo.entry_of_scalar(&m_storage->memoized_scalars.emplace_back(value));
        }
        if (entry == PickleMemo::kNone) {
            fail("more than " + std::to_string(UINT32_MAX - 2) +
                 " strings and containers memoized");
        }
        return entry;
    }

    void memo_put(std::uint64_t index) {
        // A pickler numbers its memo in order, so no index passes the values made so far.
        if (index > m_values) {
            fail("memo index " + std::to_string(index) + " past the " + std::to_string(m_values) +
                 " values made so far");
        }
        top(1);  // a value to memoize, above the topmost mark
        if (index >= m_memo.size()) {
            if (index >= m_memo.capacity()) {  // checked as it grows a chunk, not each entry
                within_budget(m_bytes.position(),
                              (index + 1 - m_memo.size()) * sizeof(std::uint32_t),
                              [&] { return "a memo entry numbered " + std::to_string(index); });
            }
            m_memo.resize(index + 1);
        }
        const PickleValue value = resolved(m_stack.back());
        // A slot put again (Python's pickler never does) lets go of what it held; an item the
        // sink took holds nothing here.
        if (PickleMemo::refers(m_memo.at(index))) {
            unpin(m_memo.value(m_memo.at(index)));
        }
        pin(value);
        m_memo.set(index, memo_entry(value));
        if (PickleContainer* container = mutable_container(value)) {
            container->memo_slot = std::int64_t(index);
        }
    }

    void memo_get(std::uint64_t index) {
        const std::uint32_t entry = index < m_memo.size() ? m_memo.at(index) : PickleMemo::kNone;
        if (entry == PickleMemo::kNone) {
            fail("memo reference " + std::to_string(index) + " to nothing stored");
        }
        if (entry == PickleMemo::kGiven) {
            fail("memo reference " + std::to_string(index) +
                 " to a trace event read before: a snapshot names each event once");
        }
        push(m_memo.value(entry));
    }

    // A whole number of `length` bytes (LONG1, LONG4): one past 64 bits is a BigInt.
    void whole_number(std::size_t length) {
        if (length > kMostWholeNumberBytes) {
            fail("a whole number of " + std::to_string(length) + " bytes (the most read is " +
                 std::to_string(kMostWholeNumberBytes) + ")");
        }
        push(PickleValue::of_little_endian(take(length)));
    }

    void text(std::uint64_t length) {
        if (length > kMostPickleText) {
            fail("a string of " + format_bytes(std::int64_t(length)) +
                 ", longer than any name a snapshot holds (the most read is " +
                 format_bytes(std::int64_t(kMostPickleText)) + ")");
        }
        const std::string_view bytes = take(std::size_t(length));
        const auto [stored, added] = stored_text(bytes);
        if (added) {
            m_held += sizeof(StoredText) + stored->text.capacity();
        }
        m_last_text = stored;
        push(PickleValue::of_text(&stored->text));
    }

    std::pair<StoredText*, bool> stored_text(std::string_view bytes) {
        return m_strings.find_or_add(bytes,
                                     [&] { return &m_storage->strings.emplace_back(bytes); });
    }

    void step(unsigned char op);

    const std::string& m_source;
    const std::function<void()>& m_after_chunk;
    PickleListSink* m_sink;
    std::unique_ptr<PickleDocument::Storage> m_storage;
    PickleStream m_bytes;
    std::uint64_t m_at = 0;  // where the opcode being read starts
    std::vector<PickleValue> m_stack;
    std::vector<std::size_t> m_marks;  // stack sizes at each MARK
    PickleMemo m_memo;
    PointerSet<PickleContainer*, SameContent, SameContent> m_canonical;
    PointerSet<StoredText*, SameText, SameText> m_strings;  // each stored once
    StoredText* m_last_text = nullptr;                      // the string read last
    std::uint64_t m_held = 0;  // bytes of containers, their items, strings and scalars made
    ContainerPool m_containers{m_storage->containers, m_held};
    std::uint64_t m_values = 0;  // pushed on the stack so far
    const PickleBudget m_budget;
};

void Reader::step(unsigned char op) {
    switch (op) {
        case kProto: {
            const auto version = static_cast<unsigned char>(take(1)[0]);
            if (version < 2 || version > 5) {
                fail("pickle protocol " + std::to_string(version) + " (2 to 5 are read)");
            }
            return;
        }
        case kFrame:
            take(8);  // a frame's length: the opcodes inside are read as they come
            return;
        case kMark:
            m_marks.push_back(m_stack.size());
            return;
        case kPop:
            return drop_top_values(top(1));
        case kPopMark:
            return drop_top_values(pop_mark());
        case kNone:
            return push(PickleValue{});
        case kNewTrue:
            return push(PickleValue::of_bool(true));
        case kNewFalse:
            return push(PickleValue::of_bool(false));
        case kBinInt:
            return push(PickleValue::of_int(std::int32_t(unsigned_le(4))));
        case kBinInt1:
            return push(PickleValue::of_int(std::int64_t(unsigned_le(1))));
        case kBinInt2:
            return push(PickleValue::of_int(std::int64_t(unsigned_le(2))));
        case kLong1:
            return whole_number(std::size_t(unsigned_le(1)));
        case kLong4:
            return whole_number(std::size_t(unsigned_le(4)));
        case kBinFloat: {
            std::uint64_t bits = 0;
            for (const char byte : take(8)) {  // big-endian
                bits = (bits << 8) | static_cast<unsigned char>(byte);
            }
            double value = 0;
            std::memcpy(&value, &bits, sizeof value);
            return push(PickleValue::of_float(value));
        }
        case kShortBinUnicode:
            return text(unsigned_le(1));
        case kBinUnicode:
            return text(unsigned_le(4));
        case kBinUnicode8: {
            const std::uint64_t length = unsigned_le(8);
            if (length > m_bytes.size_bound()) {
                fail("a string longer than the file");
            }
            return text(length);
        }
        case kEmptyList:
        case kEmptyTuple:
            return push_container(false, m_stack.size());
        case kEmptyDict:
            return push_container(true, m_stack.size());
        case kAppend:
            return add_top_items(top(1));
        case kAppends:
        case kSetItems:
            return add_top_items(pop_mark());
        case kSetItem:
            return add_top_items(top(2));
        case kList:
        case kTuple:
            return push_container(false, pop_mark());
        case kDict:
            return push_container(true, pop_mark());
        case kTuple1:
        case kTuple2:
        case kTuple3:
            return push_container(false, top(std::size_t(op - kTuple1 + 1)));
        case kBinPut:
            return memo_put(unsigned_le(1));
        case kLongBinPut:
            return memo_put(unsigned_le(4));
        case kMemoize:
            return memo_put(m_memo.size());
        case kBinGet:
            return memo_get(unsigned_le(1));
        case kLongBinGet:
            return memo_get(unsigned_le(4));
        default:
            break;
    }
    char code[8];
    std::snprintf(code, sizeof code, "0x%02x", op);
    fail(std::string("opcode ") + code +
         " (a Python object, a class, bytes or code: only plain data is read)");
}

}  // namespace

PickleDocument read_pickle(PickleInput& input, const std::string& source,
                           const std::function<void()>& after_chunk, PickleListSink* sink) {
    return Reader(input, source, after_chunk, sink).read();
}

}  // namespace oomlab::snapshot
