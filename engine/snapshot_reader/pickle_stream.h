// A pickle's bytes as the reader takes them: a megabyte at a time from its input, those read
// dropped, so the buffer grows only with what one value still needs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "pickle_reader.h"

namespace oomlab::snapshot {

class PickleStream {
public:
    // Thrown when the input ends inside a value; the reader says where.
    struct Truncated {};

    // `after_chunk` is called after each chunk read (the reader's budget and progress).
    PickleStream(PickleInput& input, std::function<void()> after_chunk)
        : m_input(input), m_after_chunk(std::move(after_chunk)) {}

    // The next `count` bytes, valid until the next call.
    std::string_view take(std::size_t count) {
        if (m_buffer.size() - m_begin < count) {
            refill(count);
        }
        const std::string_view bytes(m_buffer.data() + m_begin, count);
        m_begin += count;
        return bytes;
    }
    // A little-endian unsigned number of `count` bytes (at most 8).
    std::uint64_t unsigned_le(std::size_t count) {
        const std::string_view bytes = take(count);
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < count; ++i) {
            value |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
        }
        return value;
    }

    std::uint64_t position() const { return m_offset + m_begin; }          // bytes taken so far
    std::uint64_t received() const { return m_offset + m_buffer.size(); }  // from the input
    std::uint64_t size_bound() const { return m_input.size_bound(); }

private:
    void refill(std::size_t count);

    PickleInput& m_input;
    std::function<void()> m_after_chunk;
    std::string m_buffer;
    std::size_t m_begin = 0;     // the next unread byte in the buffer
    std::uint64_t m_offset = 0;  // the input's offset of the buffer's first byte
};

}  // namespace oomlab::snapshot
