// The pickle reader's memo. A file memoizes nearly every string and container it holds (a trace
// of 13.9M events has 21M entries), so an entry is four bytes: the number of its target (a
// string, a container or a stored scalar), each target numbered once however often it is
// memoized, or none, or "given" for an item a PickleListSink took (read and dropped).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pickle_reader.h"

namespace oomlab::snapshot {

// An array that grows by chunks of 64Ki items: grown without copying what it holds (a memo of
// 21M entries grown as one vector would peak at one and a half times its size), and indexed
// with a shift and a mask, which a memo reference per frame of every stack makes the reader's
// most frequent step (a deque's index took a division and two branches).
template <typename T>
class ChunkedArray {
public:
    std::size_t size() const { return m_size; }
    std::size_t capacity() const { return m_chunks.size() * kChunk; }  // before the next chunk
    std::uint64_t bytes() const { return capacity() * sizeof(T); }
    T& operator[](std::size_t index) { return m_chunks[index >> kShift][index & (kChunk - 1)]; }
    const T& operator[](std::size_t index) const {
        return m_chunks[index >> kShift][index & (kChunk - 1)];
    }
    // Grows to `size` items, the new ones `fill`; never shrinks.
    void grow(std::size_t size, T fill) {
        while (m_size < size) {
            if (m_size == capacity()) {
                m_chunks.push_back(std::make_unique<T[]>(kChunk));
            }
            (*this)[m_size++] = fill;
        }
    }
    void push_back(T item) { grow(m_size + 1, item); }

private:
    static constexpr std::size_t kShift = 16;
    static constexpr std::size_t kChunk = std::size_t(1) << kShift;

    std::vector<std::unique_ptr<T[]>> m_chunks;
    std::size_t m_size = 0;
};

class PickleMemo {
public:
    static constexpr std::uint32_t kNone = 0;
    static constexpr std::uint32_t kGiven = 1;

    std::size_t size() const { return m_entries.size(); }
    std::size_t capacity() const { return m_entries.capacity(); }
    std::uint64_t bytes() const { return m_entries.bytes() + m_targets.bytes(); }
    void resize(std::size_t size) { m_entries.grow(size, kNone); }

    std::uint32_t at(std::size_t index) const { return m_entries[index]; }
    void set(std::size_t index, std::uint32_t entry) { m_entries[index] = entry; }

    // The entry of a string or a container: `number` is where it keeps its entry (0 until
    // first memoized). kNone when no more fit.
    std::uint32_t entry_of(const PickleValue& value, std::uint32_t& number) {
        if (number == kNone) {
            const std::string* text = value.text();
            number = text ? add(reinterpret_cast<std::uintptr_t>(text) | kText)
                          : add(reinterpret_cast<std::uintptr_t>(value.container()) | kContainer);
        }
        return number;
    }
    // The entry of a scalar the reader stored for the memo, each its own.
    std::uint32_t entry_of_scalar(const PickleValue* stored) {
        return add(reinterpret_cast<std::uintptr_t>(stored) | kScalar);
    }

    // Whether an entry refers to a value (is neither none nor given).
    static bool refers(std::uint32_t entry) { return entry >= kFirst; }

    // What an entry that refers to a value refers to.
    PickleValue value(std::uint32_t entry) const {
        const std::uintptr_t target = m_targets[entry - kFirst];
        const std::uintptr_t pointer = target & ~std::uintptr_t(3);
        switch (target & 3) {
            case kText:
                return PickleValue::of_text(reinterpret_cast<const std::string*>(pointer));
            case kContainer:
                return PickleValue::of_container(reinterpret_cast<const PickleContainer*>(pointer));
            default:
                return *reinterpret_cast<const PickleValue*>(pointer);
        }
    }

private:
    static constexpr std::uint32_t kFirst = 2;
    enum Tag : std::uintptr_t { kScalar = 0, kText = 1, kContainer = 2 };

    std::uint32_t add(std::uintptr_t target) {
        if (m_targets.size() >= UINT32_MAX - kFirst) {
            return kNone;
        }
        m_targets.push_back(target);
        return std::uint32_t(m_targets.size() - 1 + kFirst);
    }

    ChunkedArray<std::uint32_t> m_entries;
    ChunkedArray<std::uintptr_t> m_targets;
};

}  // namespace oomlab::snapshot
