// The fields of a snapshot's records (segments, blocks, trace events) read strictly: a size, an
// address or a device is a whole number in its range, a list is a list, and sums stay within
// what a machine can hold. Anything else is refused naming the record and the key, rather than
// counted as 0 B or wrapped around.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "pickle_reader.h"

namespace oomlab::snapshot {

// More than any device holds; a size or a sum past it is not a measurement.
inline constexpr std::int64_t kMostBytes = kMostDeviceBytes;            // 1 PiB
inline constexpr std::int64_t kMostTotalBytes = std::int64_t(1) << 60;  // 1 EiB

// A refusal of SnapshotFields: a BadInput whose `why` can be told again of another record
// (an event read before the reader knew which device's trace it is in).
class FieldRefusal : public BadInput {
public:
    FieldRefusal(const std::string& message, std::string why)
        : BadInput(message), m_why(std::move(why)) {}
    const std::string& why() const { return m_why; }

private:
    std::string m_why;
};

class SnapshotFields {
public:
    using Where = std::function<std::string()>;  // "segments[3].blocks[2]": made on a refusal

    explicit SnapshotFields(const std::string& source) : m_source(source) {}

    // The whole number at `key` in [least, most]; `absent` when there is no such key.
    std::int64_t whole(const PickleValue& record, std::string_view key, const Where& where,
                       std::int64_t least, std::int64_t most, std::int64_t absent = 0) const;
    std::int64_t bytes(const PickleValue& record, std::string_view key, const Where& where) const {
        return whole(record, key, where, 0, kMostBytes);
    }
    // The list at `key`; absent or None is empty.
    const std::vector<PickleValue>& list(const PickleValue& record, std::string_view key,
                                         const Where& where) const;
    // The same of a value already found (null: absent), named `key`.
    std::int64_t whole_of(const PickleValue* value, std::string_view key, const Where& where,
                          std::int64_t least, std::int64_t most, std::int64_t absent = 0) const;
    std::int64_t bytes_of(const PickleValue* value, std::string_view key,
                          const Where& where) const {
        return whole_of(value, key, where, 0, kMostBytes);
    }
    const std::vector<PickleValue>& list_of(const PickleValue* value, std::string_view key,
                                            const Where& where) const;
    // The memory pool `value` names ("segment_pool_id", "pool_id": a pair of whole numbers,
    // (0, 0) the default pool); the default pool where absent (null) or None.
    std::pair<std::int64_t, std::int64_t> pool_of(const PickleValue* value, std::string_view key,
                                                  const Where& where) const;
    // `total` + `size`, refused past kMostTotalBytes (either way).
    std::int64_t add(std::int64_t total, std::int64_t size, const Where& where) const;
    // Throws FieldRefusal naming the file and `where`.
    [[noreturn]] void refuse(const Where& where, const std::string& why) const;

private:
    const std::string& m_source;
};

// What a value is, in a refusal: "a float (3.5)", "a string", "None", "a list".
std::string kind_of_value(const PickleValue& value);

}  // namespace oomlab::snapshot
