#include "event_file.h"

#include <array>

namespace oomlab::trackers {
namespace {

// Field numbers of the messages written here (TensorFlow's event.proto and summary.proto,
// tensor.proto, tensor_shape.proto).
namespace event {
constexpr int kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5;
}
namespace value {
constexpr int kTag = 1, kSimpleValue = 2, kTensor = 8, kMetadata = 9;
}
namespace metadata {
constexpr int kPluginData = 1;
}
namespace plugin_data {
constexpr int kPluginName = 1, kContent = 2;
}
namespace tensor {
constexpr int kDtype = 1, kShape = 2, kStringVal = 8;
constexpr int kDtString = 7;
}  // namespace tensor

constexpr std::size_t kBufferBytes = 1 << 20;

constexpr std::array<std::uint32_t, 256> crc32c_table() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t crc = i;
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0);  // the reflected polynomial
        }
        table[i] = crc;
    }
    return table;
}

// Records checksum a rotated CRC plus a constant, so that a CRC of data holding CRCs stays
// strong.
std::uint32_t masked_crc(std::string_view data) {
    const std::uint32_t crc = crc32c(data);
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

void append_le(std::string& out, std::uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) {
        out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
    }
}

ProtoMessage metadata_for(std::string_view plugin, std::string_view content) {
    ProtoMessage data;
    data.bytes(plugin_data::kPluginName, plugin).bytes(plugin_data::kContent, content);
    ProtoMessage result;
    result.message(metadata::kPluginData, data);
    return result;
}

}  // namespace

std::uint32_t crc32c(std::string_view data) {
    static constexpr auto kTable = crc32c_table();
    std::uint32_t crc = 0xffffffffu;
    for (const char byte : data) {
        crc = kTable[(crc ^ static_cast<std::uint8_t>(byte)) & 0xff] ^ (crc >> 8);
    }
    return crc ^ 0xffffffffu;
}

EventFile::EventFile(const std::string& path, double start_wall_time) : m_file(path) {
    ProtoMessage first;
    first.float64(event::kWallTime, start_wall_time).bytes(event::kFileVersion, "brain.Event:2");
    add_record(first.serialized());
}

void EventFile::add(double wall_time, std::int64_t step, const ProtoMessage& summary) {
    ProtoMessage message;
    message.float64(event::kWallTime, wall_time)
        .varint(event::kStep, static_cast<std::uint64_t>(step))
        .message(event::kSummary, summary);
    add_record(message.serialized());
}

void EventFile::commit() {
    write_buffer();
    m_file.commit(m_written);
}

void EventFile::add_record(std::string_view event) {
    std::string length;
    append_le(length, event.size(), 8);
    m_buffer += length;
    append_le(m_buffer, masked_crc(length), 4);
    m_buffer.append(event);
    append_le(m_buffer, masked_crc(event), 4);
    if (m_buffer.size() >= kBufferBytes) {
        write_buffer();
    }
}

void EventFile::write_buffer() {
    m_file.write_at(m_written, m_buffer.data(), m_buffer.size());
    m_written += m_buffer.size();
    m_buffer.clear();
}

ProtoMessage scalar_value(std::string_view tag, float simple_value) {
    ProtoMessage result;
    result.bytes(value::kTag, tag).float32(value::kSimpleValue, simple_value);
    return result;
}

ProtoMessage text_value(std::string_view tag, std::string_view markdown) {
    ProtoMessage shape;  // no dimensions: a scalar string
    ProtoMessage text;
    text.varint(tensor::kDtype, tensor::kDtString)
        .message(tensor::kShape, shape)
        .bytes(tensor::kStringVal, markdown);
    ProtoMessage result;
    result.bytes(value::kTag, tag)
        .message(value::kTensor, text)
        .message(value::kMetadata, metadata_for("text", ""));
    return result;
}

ProtoMessage plugin_value(std::string_view tag, std::string_view plugin, std::string_view content) {
    ProtoMessage result;
    result.bytes(value::kTag, tag).message(value::kMetadata, metadata_for(plugin, content));
    return result;
}

}  // namespace oomlab::trackers
