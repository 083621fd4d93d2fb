#include "snapshot_fields.h"

#include <cmath>
#include <cstdio>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab::snapshot {

std::string kind_of_value(const PickleValue& value) {
    using Kind = PickleValue::Kind;
    switch (value.kind()) {
        case Kind::None:
            return "None";
        case Kind::Bool:
            return value.integer() ? "True" : "False";
        case Kind::Int:
            return std::to_string(value.integer());
        case Kind::BigInt:
            return value.bits() ? "a whole number below -2**63" : "a whole number of 2**63 or more";
        case Kind::Float: {
            char text[48];
            std::snprintf(text, sizeof text, "a float (%g)", value.real());
            return text;
        }
        case Kind::Text:
            return "a string";
        case Kind::List:
            return "a list";
        case Kind::Dict:
            return "a dict";
    }
    return "a value";
}

void SnapshotFields::refuse(const Where& where, const std::string& why) const {
    throw FieldRefusal(m_source + ": " + where() + ": " + why +
                           "; not a snapshot PyTorch wrote as it is (dump it again with "
                           "torch.cuda.memory._dump_snapshot)",
                       why);
}

std::int64_t SnapshotFields::whole(const PickleValue& record, std::string_view key,
                                   const Where& where, std::int64_t least, std::int64_t most,
                                   std::int64_t absent) const {
    return whole_of(record.at(key), key, where, least, most, absent);
}

std::int64_t SnapshotFields::whole_of(const PickleValue* value, std::string_view key,
                                      const Where& where, std::int64_t least, std::int64_t most,
                                      std::int64_t absent) const {
    if (!value) {
        return absent;
    }
    const auto name = [&] { return "\"" + std::string(key) + "\""; };
    if (value->kind() != PickleValue::Kind::Int) {
        refuse(where, name() + " is " + kind_of_value(*value) + ", not a whole number");
    }
    const std::int64_t number = value->integer();
    if (number < least || number > most) {
        refuse(where, name() + " is " + std::to_string(number) + ", outside " +
                          std::to_string(least) + " to " + std::to_string(most));
    }
    return number;
}

const std::vector<PickleValue>& SnapshotFields::list(const PickleValue& record,
                                                     std::string_view key,
                                                     const Where& where) const {
    return list_of(record.at(key), key, where);
}

const std::vector<PickleValue>& SnapshotFields::list_of(const PickleValue* value,
                                                        std::string_view key,
                                                        const Where& where) const {
    static const std::vector<PickleValue> kNone;
    if (!value || value->is_none()) {
        return kNone;
    }
    if (!value->list()) {
        refuse(where, "\"" + std::string(key) + "\" is " + kind_of_value(*value) + ", not a list");
    }
    return value->list()->items;
}

std::pair<std::int64_t, std::int64_t> SnapshotFields::pool_of(const PickleValue* value,
                                                              std::string_view key,
                                                              const Where& where) const {
    if (!value || value->is_none()) {
        return {0, 0};
    }
    const auto whole = [](const PickleValue& item) {
        return item.kind() == PickleValue::Kind::Int;
    };
    if (!value->list() || value->list()->items.size() != 2 || !whole(value->list()->items[0]) ||
        !whole(value->list()->items[1])) {
        refuse(where, "\"" + std::string(key) + "\" is " + kind_of_value(*value) +
                          ", not a pair of whole numbers");
    }
    return {value->list()->items[0].integer(), value->list()->items[1].integer()};
}

std::int64_t SnapshotFields::add(std::int64_t total, std::int64_t size, const Where& where) const {
    const std::int64_t sum = total + size;  // both within 2^60: no overflow
    if (sum > kMostTotalBytes || sum < -kMostTotalBytes) {
        refuse(where, std::string("its sizes add up past 1 EiB") + ", more than any machine holds");
    }
    return sum;
}

}  // namespace oomlab::snapshot
