// The pickle reader's containers: made in the document's storage and, once nothing refers to
// them, reused rather than freed (a trace's events are dicts made and dropped by the million).
// A reused container keeps its memo number (its address is the same) and, when small, its
// items' room: allocating each event's items again made a third of the reading time malloc's.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "pickle_reader.h"

namespace oomlab::snapshot {

class ContainerPool {
public:
    // `held` counts the bytes of the containers and their items.
    ContainerPool(std::deque<PickleContainer>& storage, std::uint64_t& held)
        : m_storage(storage), m_held(held) {}

    PickleContainer* make(bool is_dict) {
        PickleContainer* container = nullptr;
        if (!m_free.empty()) {
            container = m_free.back();
            m_free.pop_back();
        } else {
            container = &m_storage.emplace_back();
            m_held += sizeof(PickleContainer);
        }
        container->is_dict = is_dict;
        return container;
    }

    // `container`, which nothing refers to any more, made again by a later make().
    void reuse(PickleContainer& container) {
        constexpr std::size_t kRoomKept = 32;
        std::vector<PickleValue> items;
        if (container.items.capacity() <= kRoomKept) {
            container.items.clear();
            items.swap(container.items);
        } else {
            drop_items(container);
        }
        const std::uint32_t memo_entry = container.memo_entry;
        container = PickleContainer{};
        container.memo_entry = memo_entry;
        container.items.swap(items);
        m_free.push_back(&container);
    }

    void drop_items(PickleContainer& container) {
        m_held -= container.items.capacity() * sizeof(PickleValue);
        std::vector<PickleValue>().swap(container.items);  // `items = {}` keeps the capacity
    }

private:
    std::deque<PickleContainer>& m_storage;
    std::uint64_t& m_held;
    std::vector<PickleContainer*> m_free;
};

}  // namespace oomlab::snapshot
