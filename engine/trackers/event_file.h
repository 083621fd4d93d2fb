// TensorBoard's event files: a sequence of records (length, masked CRC-32C of the length, an
// Event protocol buffer, masked CRC-32C of it), the first holding the file's version.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trackers/proto_message.h"

namespace oomlab::trackers {

// CRC-32C (Castagnoli), as TFRecord files checksum their records.
std::uint32_t crc32c(std::string_view data);

class EventFile {
public:
    explicit EventFile(double start_wall_time);

    // One Event with `summary` (a Summary message) at `step`.
    void add(double wall_time, std::int64_t step, const ProtoMessage& summary);
    // The whole file's bytes.
    const std::string& bytes() const { return m_bytes; }

private:
    void add_record(std::string_view event);

    std::string m_bytes;
};

// Summary.Value messages.
ProtoMessage scalar_value(std::string_view tag, float value);
ProtoMessage text_value(std::string_view tag, std::string_view markdown);
// A value carrying only plugin data (how the HParams plugin writes its session records).
ProtoMessage plugin_value(std::string_view tag, std::string_view plugin, std::string_view content);
// A Summary of the given values.
template <typename... Values>
ProtoMessage summary_of(const Values&... values) {
    ProtoMessage summary;
    (summary.message(1, values), ...);
    return summary;
}

}  // namespace oomlab::trackers
