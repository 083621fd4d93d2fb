#include "word_index.h"

#include <cstring>

namespace oomlab::glove_detail {
namespace {

constexpr std::uint64_t kMultiplier = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t kRowMask = 0xFFFFFFFFull;

std::uint64_t mix(std::uint64_t h, std::uint64_t chunk) {
    h = (h ^ chunk) * kMultiplier;
    return h ^ (h >> 29);
}

std::uint64_t make_slot(std::uint64_t hash, std::int64_t row) {
    return (hash & ~kRowMask) | static_cast<std::uint64_t>(row + 1);
}

std::string_view word_at(const std::uint64_t* offsets, const char* bytes, std::int64_t row) {
    return {bytes + offsets[row], static_cast<std::size_t>(offsets[row + 1] - offsets[row])};
}

}  // namespace

std::uint64_t word_hash(std::string_view word) {
    std::uint64_t h = 0x2545F4914F6CDD1Dull ^ (word.size() * kMultiplier);
    const char* p = word.data();
    std::size_t left = word.size();
    for (; left >= 8; p += 8, left -= 8) {
        std::uint64_t chunk = 0;
        std::memcpy(&chunk, p, 8);
        h = mix(h, chunk);
    }
    if (left > 0) {
        std::uint64_t chunk = 0;
        std::memcpy(&chunk, p, left);
        h = mix(h, chunk);
    }
    // Final avalanche so both the low bits (slot) and the high bits (tag) are well spread.
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

std::uint64_t content_hash(const void* data, std::uint64_t bytes, std::uint64_t seed) {
    const auto* p = static_cast<const char*>(data);
    std::uint64_t lanes[4] = {seed ^ 0x2545F4914F6CDD1Dull, seed + kMultiplier, ~seed,
                              seed ^ (bytes * kMultiplier)};
    std::uint64_t left = bytes;
    for (; left >= 32; p += 32, left -= 32) {
        for (int lane = 0; lane < 4; ++lane) {
            std::uint64_t chunk = 0;
            std::memcpy(&chunk, p + 8 * lane, 8);
            lanes[lane] = mix(lanes[lane], chunk);
        }
    }
    std::uint64_t h = lanes[0] ^ (lanes[1] * 3) ^ (lanes[2] * 5) ^ (lanes[3] * 7);
    return mix(h, word_hash(std::string_view(p, static_cast<std::size_t>(left))));
}

std::uint64_t index_slot_count(std::int64_t rows) {
    std::uint64_t count = 16;
    while (count < 2 * static_cast<std::uint64_t>(rows)) {
        count *= 2;
    }
    return count;
}

WordIndex build_word_index(const std::uint64_t* offsets, const char* bytes, std::int64_t rows) {
    // Slots are hit at random, so hash ahead and prefetch: the inserts then mostly find their
    // cache line already loaded instead of waiting on memory one row at a time.
    constexpr std::int64_t kPrefetchDistance = 16;
    std::vector<std::uint64_t> hashes(static_cast<std::size_t>(rows));
    for (std::int64_t row = 0; row < rows; ++row) {
        hashes[row] = word_hash(word_at(offsets, bytes, row));
    }
    WordIndex index;
    const std::uint64_t count = index_slot_count(rows);
    const std::uint64_t mask = count - 1;
    index.slots.assign(count, 0);
    std::uint64_t* slots = index.slots.data();
    for (std::int64_t row = 0; row < rows; ++row) {
        if (row + kPrefetchDistance < rows) {
            __builtin_prefetch(&slots[hashes[row + kPrefetchDistance] & mask], 1);
        }
        const std::uint64_t hash = hashes[row];
        const std::uint64_t tag = hash & ~kRowMask;
        for (std::uint64_t slot = hash & mask;; slot = (slot + 1) & mask) {
            const std::uint64_t entry = slots[slot];
            if (entry == 0) {
                slots[slot] = make_slot(hash, row);
                break;
            }
            if ((entry & ~kRowMask) == tag &&
                word_at(offsets, bytes, static_cast<std::int64_t>(entry & kRowMask) - 1) ==
                    word_at(offsets, bytes, row)) {
                index.duplicate_rows.push_back(static_cast<std::uint64_t>(row));
                break;
            }
        }
    }
    return index;
}

std::int64_t find_word(const std::uint64_t* slots, std::uint64_t slot_count,
                       const std::uint64_t* offsets, const char* bytes, std::int64_t visible_rows,
                       std::string_view word) {
    if (slot_count == 0) {
        return -1;
    }
    const std::uint64_t mask = slot_count - 1;
    const std::uint64_t hash = word_hash(word);
    const std::uint64_t tag = hash & ~kRowMask;
    // Bounded by slot_count so a damaged index can never loop forever.
    std::uint64_t slot = hash & mask;
    for (std::uint64_t probes = 0; probes < slot_count; ++probes, slot = (slot + 1) & mask) {
        const std::uint64_t entry = slots[slot];
        if (entry == 0) {
            return -1;
        }
        const auto row = static_cast<std::int64_t>(entry & kRowMask) - 1;
        if ((entry & ~kRowMask) == tag && row < visible_rows &&
            word_at(offsets, bytes, row) == word) {
            return row;
        }
    }
    return -1;
}

}  // namespace oomlab::glove_detail
