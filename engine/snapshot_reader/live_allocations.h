// The allocation alive at each address while a trace is followed in order: open addressing with
// linear probing, erased by shifting later entries back (no tombstones). Its size is the live
// set, not the trace: millions of changes need no node each (std::unordered_map's nodes were 40%
// of reading a 13.9M-event trace) and no sort of every address (a random read of each change in
// address order after it). Each names the change that made it by its address, not its index:
// indexing the deque of changes read its map of blocks, one more cache miss a free.
#pragma once

#include <cstdint>
#include <vector>

namespace oomlab::snapshot {

template <typename Change>
class LiveAllocations {
public:
    struct Alive {
        std::int64_t address = 0;
        Change* change = nullptr;  // the allocation; null in an empty slot
        std::int64_t size = 0;
    };

    // The allocation alive at `address`, or null; valid until the next put or erase.
    Alive* find(std::int64_t address) {
        if (m_size == 0) {
            return nullptr;
        }
        for (std::size_t at = home(address);; at = next(at)) {
            Alive& slot = m_slots[at];
            if (slot.change == nullptr) {
                return nullptr;
            }
            if (slot.address == address) {
                return &slot;
            }
        }
    }

    // Asks the processor for `address`'s first slot ahead of its find: the table is as large
    // as the live set, and a trace's addresses come in no order, so each find would otherwise
    // wait for memory in turn.
    void prefetch(std::int64_t address) const {
        if (!m_slots.empty()) {
            __builtin_prefetch(&m_slots[home(address)]);
        }
    }

    // An allocation at an address where none is alive.
    void add(std::int64_t address, Change* change, std::int64_t size) {
        if (2 * (m_size + 1) > m_slots.size()) {
            grow();
        }
        place({address, change, size});
        ++m_size;
    }

    void erase(Alive* alive) {
        std::size_t hole = std::size_t(alive - m_slots.data());
        for (std::size_t at = next(hole); m_slots[at].change != nullptr; at = next(at)) {
            // An entry whose home lies cyclically in (hole, at] is already where a search
            // finds it; any other moves back into the hole.
            const std::size_t want = home(m_slots[at].address);
            const bool stays = hole < at ? hole < want && want <= at : hole < want || want <= at;
            if (!stays) {
                m_slots[hole] = m_slots[at];
                hole = at;
            }
        }
        m_slots[hole].change = nullptr;
        --m_size;
    }

private:
    std::size_t home(std::int64_t address) const {
        return std::size_t((std::uint64_t(address) * 0x9E3779B97F4A7C15ull) >> m_shift);
    }
    std::size_t next(std::size_t at) const { return (at + 1) & (m_slots.size() - 1); }

    void place(const Alive& alive) {
        std::size_t at = home(alive.address);
        while (m_slots[at].change != nullptr) {
            at = next(at);
        }
        m_slots[at] = alive;
    }

    void grow() {
        std::vector<Alive> old(m_slots.empty() ? 64 : 2 * m_slots.size());
        old.swap(m_slots);
        m_shift = 64;
        for (std::size_t slots = m_slots.size(); slots > 1; slots >>= 1) {
            --m_shift;
        }
        for (const Alive& alive : old) {
            if (alive.change != nullptr) {
                place(alive);
            }
        }
    }

    std::vector<Alive> m_slots;
    std::size_t m_size = 0;
    unsigned m_shift = 64;  // 64 less log2 of the slots
};

}  // namespace oomlab::snapshot
