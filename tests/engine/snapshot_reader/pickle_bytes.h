// Pickles written byte by byte for the snapshot tests: opcodes spelled out, so each test
// says exactly what the reader is given.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

namespace oomlab::snapshot {

// A short unicode string, as protocol 4 writes it.
inline std::string text(const std::string& value) {
    return "\x8c" + std::string(1, char(value.size())) + value;
}

// Bytes written out one by one: no escape can run into the next character, and zero bytes
// stay.
inline std::string bytes(std::initializer_list<int> values) {
    std::string out;
    for (const int value : values) {
        out += static_cast<char>(value);
    }
    return out;
}

inline const std::string kProto2 = bytes({0x80, 2});

// Four bytes, little-endian, as BININT (J) takes them.
inline std::string le32(std::uint32_t value) {
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i) {
        out[std::size_t(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
    }
    return out;
}

// An integer of any size, as LONG1 spells it (eight bytes, two's complement).
inline std::string long8(std::int64_t value) {
    std::string out = bytes({0x8a, 8});
    for (int i = 0; i < 8; ++i) {
        out += static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff);
    }
    return out;
}

// A snapshot of `count` allocations of 512 bytes on device 0, each freed at once, spelled out
// with no memo.
inline std::string many_allocations(std::uint32_t count) {
    std::string out = kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "]](";
    for (std::uint32_t i = 0; i < count; ++i) {
        for (const char* action : {"alloc", "free_completed"}) {
            out += "}(" + text("action") + text(action) + text("addr") + "J" + le32(i * 512) +
                   text("size") + "J" + le32(512) + "u";
        }
    }
    return out + "eau.";
}

// A trace event as PyTorch writes it, its "time_us" only where `timed` (PyTorch 2.1 and later).
inline std::string trace_event(const char* action, std::int64_t address, std::int64_t size,
                               bool timed, std::int64_t time_us) {
    return "}(" + text("action") + text(action) + text("addr") + long8(address) + text("size") +
           long8(size) + (timed ? text("time_us") + long8(time_us) : "") + "u";
}

// A START or END of a stage the program ran (an entry of "external_annotations").
inline std::string stage_annotation(const char* stage, const char* name, int device,
                                    std::int64_t time_us) {
    return "}(" + text("stage") + text(stage) + text("name") + text(name) + text("device") + "K" +
           bytes({device}) + text("time_us") + long8(time_us) + "u";
}

// A snapshot of device 0's trace `events` and the program's `annotations`, no segments.
inline std::string annotated_snapshot(const std::string& events, const std::string& annotations) {
    return kProto2 + "}(" + text("segments") + "]" + text("device_traces") + "]](" + events + "ea" +
           text("external_annotations") + "](" + annotations + "eu.";
}

}  // namespace oomlab::snapshot
