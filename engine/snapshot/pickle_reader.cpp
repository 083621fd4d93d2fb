#include "snapshot/pickle_reader.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "common/pickle_opcodes.h"
#include "oomlab/common/errors.h"

namespace oomlab::snapshot {
namespace {

using namespace pickle;  // the opcodes

// A container being read: its value is filled in place until another container takes it.
struct Item {
    std::shared_ptr<PickleValue> value;
    bool is_mark = false;
};

class Reader {
public:
    Reader(std::string_view data, const std::string& source) : m_data(data), m_source(source) {}

    PickleRef read() {
        while (true) {
            m_at = m_pos;
            const auto op = static_cast<unsigned char>(take(1)[0]);
            if (op == kStop) {
                if (m_stack.size() != 1 || m_stack.back().is_mark) {
                    fail("STOP with " + std::to_string(m_stack.size()) + " values on the stack");
                }
                return m_stack.back().value;
            }
            step(op);
        }
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw BadInput(m_source + ": byte " + std::to_string(m_at) +
                       ": not a pickle of plain data (a memory snapshot): " + why);
    }

    std::string_view take(std::size_t count) {
        if (count > m_data.size() - m_pos) {
            fail("the file ends inside a value (truncated?)");
        }
        const std::string_view bytes = m_data.substr(m_pos, count);
        m_pos += count;
        return bytes;
    }

    std::uint64_t unsigned_le(std::size_t count) {
        const std::string_view bytes = take(count);
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < count; ++i) {
            value |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
        }
        return value;
    }

    void push(PickleValue::None none) { push_value(PickleValue{none, 0}); }
    template <typename T>
    void push_scalar(T value) {
        push_value(PickleValue{std::move(value), 0});
    }
    void push_value(PickleValue value) {
        m_stack.push_back({std::make_shared<PickleValue>(std::move(value)), false});
    }

    std::shared_ptr<PickleValue> pop() {
        if (m_stack.empty() || m_stack.back().is_mark) {
            fail("a value was expected on the stack");
        }
        std::shared_ptr<PickleValue> value = std::move(m_stack.back().value);
        m_stack.pop_back();
        return value;
    }

    // The items above the topmost mark, which is removed.
    std::vector<std::shared_ptr<PickleValue>> pop_to_mark() {
        std::size_t mark = m_stack.size();
        while (mark > 0 && !m_stack[mark - 1].is_mark) {
            --mark;
        }
        if (mark == 0) {
            fail("no MARK before this opcode");
        }
        std::vector<std::shared_ptr<PickleValue>> items;
        for (std::size_t i = mark; i < m_stack.size(); ++i) {
            items.push_back(std::move(m_stack[i].value));
        }
        m_stack.resize(mark - 1);
        return items;
    }

    // `child` goes into `parent`: from then on the child never changes (see the header).
    PickleRef adopt(PickleValue& parent, const std::shared_ptr<PickleValue>& child) {
        if (child.get() == &parent) {
            fail("a container that holds itself");
        }
        child->held = true;
        parent.depth = std::max(parent.depth, child->depth + 1);
        if (parent.depth > kMostPickleDepth) {
            fail("nested more than " + std::to_string(kMostPickleDepth) + " levels deep");
        }
        return child;
    }

    PickleValue& open_container(PickleValue& container) {
        if (container.held) {
            fail("a container filled after another container took it");
        }
        return container;
    }

    void add_items(const std::vector<std::shared_ptr<PickleValue>>& items) {
        PickleValue& target = open_container(*top());
        if (auto* list = std::get_if<PickleValue::List>(&target.value)) {
            if (list->empty()) {
                list->reserve(items.size());  // a dict or short list comes in one batch
            }
            for (const auto& item : items) {
                list->push_back(adopt(target, item));
            }
            return;
        }
        auto* dict = std::get_if<PickleValue::Dict>(&target.value);
        if (!dict || items.size() % 2 != 0) {
            fail("items added to what is not a list or dict, or a key without a value");
        }
        if (dict->empty()) {
            dict->reserve(items.size() / 2);
        }
        for (std::size_t i = 0; i < items.size(); i += 2) {
            dict->emplace_back(adopt(target, items[i]), adopt(target, items[i + 1]));
        }
    }

    std::shared_ptr<PickleValue> top() {
        if (m_stack.empty() || m_stack.back().is_mark) {
            fail("a value was expected on the stack");
        }
        return m_stack.back().value;
    }

    void push_list(std::vector<std::shared_ptr<PickleValue>> items) {
        auto list = std::make_shared<PickleValue>(PickleValue{PickleValue::List{}, 1});
        for (const auto& item : items) {
            std::get<PickleValue::List>(list->value).push_back(adopt(*list, item));
        }
        m_stack.push_back({list, false});
    }

    void memo_put(std::uint64_t index) {
        if (index > m_data.size()) {
            fail("memo index " + std::to_string(index) + " past any the file can use");
        }
        if (index >= m_memo.size()) {
            m_memo.resize(index + 1);
        }
        m_memo[index] = top();
    }

    void memo_get(std::uint64_t index) {
        if (index >= m_memo.size() || !m_memo[index]) {
            fail("memo reference " + std::to_string(index) + " to nothing stored");
        }
        m_stack.push_back({m_memo[index], false});
    }

    void text(std::size_t length) {
        const std::string_view bytes = take(length);
        push_scalar(std::string(bytes));
    }

    void step(unsigned char op) {
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
                m_stack.push_back({nullptr, true});
                return;
            case kPop:
                pop();
                return;
            case kPopMark:
                pop_to_mark();
                return;
            case kNone:
                return push(PickleValue::None{});
            case kNewTrue:
                return push_scalar(true);
            case kNewFalse:
                return push_scalar(false);
            case kBinInt:
                return push_scalar(std::int64_t(std::int32_t(unsigned_le(4))));
            case kBinInt1:
                return push_scalar(std::int64_t(unsigned_le(1)));
            case kBinInt2:
                return push_scalar(std::int64_t(unsigned_le(2)));
            case kLong1: {
                const auto length = static_cast<std::size_t>(unsigned_le(1));
                if (length > 8) {
                    fail("an integer of " + std::to_string(length) + " bytes (8 are read)");
                }
                std::uint64_t bits = length ? unsigned_le(length) : 0;
                if (length > 0 && length < 8 && (bits >> (8 * length - 1)) & 1) {
                    bits |= ~std::uint64_t(0) << (8 * length);  // two's complement, widened
                }
                return push_scalar(static_cast<std::int64_t>(bits));
            }
            case kBinFloat: {
                std::uint64_t bits = 0;
                for (const char byte : take(8)) {  // big-endian
                    bits = (bits << 8) | static_cast<unsigned char>(byte);
                }
                double value = 0;
                std::memcpy(&value, &bits, sizeof value);
                return push_scalar(value);
            }
            case kShortBinUnicode:
                return text(static_cast<std::size_t>(unsigned_le(1)));
            case kBinUnicode:
                return text(static_cast<std::size_t>(unsigned_le(4)));
            case kBinUnicode8: {
                const std::uint64_t length = unsigned_le(8);
                if (length > m_data.size()) {
                    fail("a string longer than the file");
                }
                return text(static_cast<std::size_t>(length));
            }
            case kEmptyList:
                return push_value(PickleValue{PickleValue::List{}, 1});
            case kEmptyTuple:
                return push_value(PickleValue{PickleValue::List{}, 1});
            case kEmptyDict:
                return push_value(PickleValue{PickleValue::Dict{}, 1});
            case kAppend:
                return add_items({pop()});
            case kAppends:
            case kSetItems:
                return add_items(pop_to_mark());
            case kSetItem: {
                auto value = pop();
                auto key = pop();
                return add_items({key, value});
            }
            case kList:
            case kTuple:
                return push_list(pop_to_mark());
            case kDict: {
                auto items = pop_to_mark();
                push_value(PickleValue{PickleValue::Dict{}, 1});
                return add_items(items);
            }
            case kTuple1:
            case kTuple2:
            case kTuple3: {
                std::vector<std::shared_ptr<PickleValue>> items(op - kTuple1 + 1);
                for (auto it = items.rbegin(); it != items.rend(); ++it) {
                    *it = pop();
                }
                return push_list(std::move(items));
            }
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

    std::string_view m_data;
    const std::string& m_source;
    std::size_t m_pos = 0;
    std::size_t m_at = 0;  // where the opcode being read starts
    std::vector<Item> m_stack;
    std::vector<std::shared_ptr<PickleValue>> m_memo;
};

}  // namespace

std::int64_t PickleValue::integer(std::int64_t otherwise) const {
    if (const auto* number = std::get_if<std::int64_t>(&value)) {
        return *number;
    }
    if (const auto* flag = std::get_if<bool>(&value)) {
        return *flag ? 1 : 0;
    }
    return otherwise;
}

const PickleValue* PickleValue::at(std::string_view key) const {
    if (const Dict* entries = dict()) {
        for (const auto& [name, item] : *entries) {
            if (const std::string* text = name->text(); text && *text == key) {
                return item.get();
            }
        }
    }
    return nullptr;
}

PickleRef read_pickle(std::string_view data, const std::string& source) {
    return Reader(data, source).read();
}

}  // namespace oomlab::snapshot
