// TensorBoard's event files: a sequence of records (length, masked CRC-32C of the length, an
// Event protocol buffer, masked CRC-32C of it), the first holding the file's version.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "oomlab/common/atomic_file.h"
#include "proto_message.h"

namespace oomlab::trackers {

// CRC-32C (Castagnoli), as TFRecord files checksum their records.
std::uint32_t crc32c(std::string_view data);

// Written to `path` as it is made, a megabyte at a time, and put in place by commit(): a
// reader never sees half a file, and a long run's events are never all in memory.
class EventFile {
public:
    EventFile(const std::string& path, double start_wall_time);

    // One Event with `summary` (a Summary message) at `step`.
    void add(double wall_time, std::int64_t step, const ProtoMessage& summary);
    void commit();

private:
    void add_record(std::string_view event);
    void write_buffer();

    AtomicFile m_file;
    std::string m_buffer;
    std::uint64_t m_written = 0;
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
