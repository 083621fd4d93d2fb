// A set of pointers to values the reader keeps, looked up by the values' content: open
// addressing in one array, so that millions of distinct strings or frames cost one slot each
// (no node allocated, none freed one by one at the end), which the standard library's
// node-based unordered_set does not give.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace oomlab::snapshot {

// `Hash(key)` and `Hash(pointer)` give the same number for equal content; `Equal(key,
// pointer)` compares a key with a kept pointer.
template <typename Pointer, typename Hash, typename Equal>
class PointerSet {
public:
    // The pointer kept with `key`'s content, or what `make()` returns, kept from then on.
    template <typename Key, typename Make>
    std::pair<Pointer, bool> find_or_add(const Key& key, Make&& make) {
        if (2 * (m_size + 1) > m_slots.size()) {
            grow();
        }
        const std::size_t hash = Hash{}(key);
        for (std::size_t at = hash & mask();; at = (at + 1) & mask()) {
            Slot& slot = m_slots[at];
            if (!slot.pointer) {
                slot = {make(), hash};
                ++m_size;
                return {slot.pointer, true};
            }
            if (slot.hash == hash && Equal{}(key, slot.pointer)) {
                return {slot.pointer, false};
            }
        }
    }
    std::size_t size() const { return m_size; }
    std::size_t bytes() const { return m_slots.capacity() * sizeof(Slot); }

private:
    struct Slot {
        Pointer pointer = nullptr;
        std::size_t hash = 0;
    };

    std::size_t mask() const { return m_slots.size() - 1; }

    void grow() {
        std::vector<Slot> old(std::max<std::size_t>(64, 2 * m_slots.size()));
        old.swap(m_slots);
        for (const Slot& slot : old) {
            if (slot.pointer) {
                std::size_t at = slot.hash & mask();
                while (m_slots[at].pointer) {
                    at = (at + 1) & mask();
                }
                m_slots[at] = slot;
            }
        }
    }

    std::vector<Slot> m_slots;
    std::size_t m_size = 0;
};

}  // namespace oomlab::snapshot
