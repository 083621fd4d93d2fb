// Protocol-buffer messages written by hand: the few TensorBoard reads (an Event, its Summary,
// a tensor, the HParams plugin's data) need only the wire format's four encodings, which is
// less than generated code and a protoc step would bring.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace oomlab::trackers {

class ProtoMessage {
public:
    ProtoMessage& varint(int field, std::uint64_t value) {
        key(field, kVarint);
        put_varint(value);
        return *this;
    }
    ProtoMessage& float64(int field, double value) {
        key(field, kFixed64);
        put_fixed(value);
        return *this;
    }
    ProtoMessage& float32(int field, float value) {
        key(field, kFixed32);
        put_fixed(value);
        return *this;
    }
    ProtoMessage& bytes(int field, std::string_view value) {
        key(field, kLengthDelimited);
        put_varint(value.size());
        m_bytes.append(value);
        return *this;
    }
    ProtoMessage& message(int field, const ProtoMessage& value) {
        return bytes(field, value.serialized());
    }

    const std::string& serialized() const { return m_bytes; }

private:
    enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

    void key(int field, WireType type) {
        put_varint((static_cast<std::uint64_t>(field) << 3) | type);
    }
    void put_varint(std::uint64_t value) {
        while (value >= 0x80) {
            m_bytes.push_back(static_cast<char>((value & 0x7f) | 0x80));
            value >>= 7;
        }
        m_bytes.push_back(static_cast<char>(value));
    }
    // Little-endian, as on every machine this builds for.
    template <typename T>
    void put_fixed(T value) {
        char raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T));
        m_bytes.append(raw, sizeof(T));
    }

    std::string m_bytes;
};

}  // namespace oomlab::trackers
