// Memory by category, in bytes. Measured at a run's peak (or at an OOM), or predicted by
// the estimator. The categories add up to the peak device usage.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace oomlab {

struct MemoryBreakdown {
    std::int64_t embedding_table = 0;  // the embedding weights
    std::int64_t parameters = 0;       // every other parameter
    std::int64_t gradients = 0;
    std::int64_t optimizer_state = 0;
    std::int64_t data = 0;             // batches (or the whole dataset) resident
    std::int64_t activations = 0;      // saved activations and temporaries at the peak
    std::int64_t allocator_cache = 0;  // reserved minus allocated
    std::int64_t other = 0;            // device used minus reserved (context, other processes)

    // The tensors at the peak: every category but the allocator's cache and "other".
    std::int64_t tensors() const {
        return embedding_table + parameters + gradients + optimizer_state + data + activations;
    }
    std::int64_t total() const {
        return embedding_table + parameters + gradients + optimizer_state + data + activations +
               allocator_cache + other;
    }
};

// Category names as used in JSON and the database, in display order.
inline constexpr std::array<std::string_view, 8> kBreakdownKeys = {
    "embedding_table", "parameters",      "gradients", "optimizer_state", "data",
    "activations",     "allocator_cache", "other"};

// The same categories as people read them.
inline constexpr std::array<std::string_view, 8> kBreakdownLabels = {"embedding table",
                                                                     "other parameters",
                                                                     "gradients",
                                                                     "optimizer state",
                                                                     "data",
                                                                     "activations and temporaries",
                                                                     "allocator cache",
                                                                     "outside the allocator"};

// The first six categories add up to the peak of tensor memory; the allocator's cache
// (reserved but unused) and "other" (process or device memory beyond tensors: the CUDA
// context, libraries, the heap's free blocks) come on top of it.
inline constexpr std::size_t kBreakdownInPeak = 6;

// Field access by index into kBreakdownKeys.
std::int64_t& breakdown_field(MemoryBreakdown& breakdown, std::size_t index);
std::int64_t breakdown_field(const MemoryBreakdown& breakdown, std::size_t index);

}  // namespace oomlab
