// The values a pickle is read into: made by the reader, asked by what reads a snapshot.
#include <algorithm>
#include <cstring>
#include <string_view>

#include "pickle_reader.h"

namespace oomlab::snapshot {

PickleValue PickleValue::of_little_endian(std::string_view bytes) {
    if (bytes.empty()) {
        return of_int(0);
    }
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
    const bool negative = (byte(bytes.size() - 1) & 0x80) != 0;
    // Python writes the fewest bytes, so a ninth only for a number outside int64; a longer
    // spelling of a small one (its extra bytes the sign's) is still that number.
    if (bytes.size() > 8) {
        const unsigned char sign = negative ? 0xff : 0;
        for (std::size_t i = 8; i < bytes.size(); ++i) {
            if (byte(i) != sign) {
                return of_big_int(negative);
            }
        }
        if (((byte(7) & 0x80) != 0) != negative) {
            return of_big_int(negative);
        }
    }
    std::uint64_t bits = negative ? ~std::uint64_t(0) : 0;  // two's complement, widened
    for (std::size_t i = std::min<std::size_t>(bytes.size(), 8); i-- > 0;) {
        bits = (bits << 8) | byte(i);
    }
    return of_int(static_cast<std::int64_t>(bits));
}

PickleValue PickleValue::of_float(double number) {
    PickleValue value;
    value.m_kind = Kind::Float;
    std::memcpy(&value.m_bits, &number, sizeof number);
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
