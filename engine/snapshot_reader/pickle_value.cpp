// The values a pickle is read into: made by the reader, asked by what reads a snapshot.
#include <cstring>
#include <string_view>

#include "pickle_reader.h"

namespace oomlab::snapshot {

PickleValue PickleValue::of_bool(bool flag) {
    PickleValue value;
    value.m_kind = Kind::Bool;
    value.m_bits = flag ? 1 : 0;
    return value;
}

PickleValue PickleValue::of_int(std::int64_t number) {
    PickleValue value;
    value.m_kind = Kind::Int;
    value.m_bits = static_cast<std::uint64_t>(number);
    return value;
}

PickleValue PickleValue::of_big_int(bool negative) {
    PickleValue value;
    value.m_kind = Kind::BigInt;
    value.m_bits = negative ? 1 : 0;
    return value;
}

PickleValue PickleValue::of_float(double number) {
    PickleValue value;
    value.m_kind = Kind::Float;
    std::memcpy(&value.m_bits, &number, sizeof number);
    return value;
}

PickleValue PickleValue::of_text(const std::string* text) {
    PickleValue value;
    value.m_kind = Kind::Text;
    value.m_bits = reinterpret_cast<std::uintptr_t>(text);
    return value;
}

PickleValue PickleValue::of_container(const PickleContainer* container) {
    PickleValue value;
    value.m_kind = container->is_dict ? Kind::Dict : Kind::List;
    value.m_bits = reinterpret_cast<std::uintptr_t>(container);
    return value;
}

double PickleValue::real() const {
    double number = 0;
    if (m_kind == Kind::Float) {
        std::memcpy(&number, &m_bits, sizeof number);
    }
    return number;
}

const PickleValue* PickleValue::at(std::string_view key) const {
    // A key set twice holds what it was set to last, as in Python.
    constexpr std::size_t kScannedUpTo = 16;  // entries; a larger dict is looked up by hash
    const PickleContainer* entries = dict();
    if (!entries) {
        return nullptr;
    }
    if (entries->size() <= kScannedUpTo) {
        for (std::size_t i = entries->size(); i-- > 0;) {
            if (const std::string* name = entries->key(i).text(); name && *name == key) {
                return &entries->value(i);
            }
        }
        return nullptr;
    }
    if (!entries->key_index) {
        auto index = std::make_unique<std::unordered_map<std::string_view, std::size_t>>();
        index->reserve(entries->size());
        for (std::size_t i = 0; i < entries->size(); ++i) {
            if (const std::string* name = entries->key(i).text()) {
                (*index)[*name] = i;
            }
        }
        entries->key_index = std::move(index);
    }
    const auto found = entries->key_index->find(key);
    return found == entries->key_index->end() ? nullptr : &entries->value(found->second);
}

}  // namespace oomlab::snapshot
