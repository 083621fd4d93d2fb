#include "oomlab/run/fragmentation.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/allocator/caching_allocator_model.h"
#include "oomlab/common/format.h"

namespace oomlab {

std::optional<std::int64_t> requested_bytes_in(std::string_view oom_message) {
    // "Tried to allocate 20.00 MiB" (CUDA's caching allocator, ours), "you tried to allocate
    // 1024 bytes" (the CPU's DefaultCPUAllocator).
    constexpr std::string_view kPhrase = "ried to allocate ";
    const std::size_t at = oom_message.find(kPhrase);
    const auto starts_word = [&](std::size_t t) {  // "Tried"/"tried", not "Retried"
        return (oom_message[t] == 'T' || oom_message[t] == 't') &&
               (t == 0 || !std::isalpha(static_cast<unsigned char>(oom_message[t - 1])));
    };
    if (at == std::string_view::npos || at == 0 || !starts_word(at - 1)) {
        return std::nullopt;
    }
    const std::string rest(oom_message.substr(at + kPhrase.size(), 32));
    char* end = nullptr;
    const double value = std::strtod(rest.c_str(), &end);
    if (end == rest.c_str() || !std::isfinite(value) || value < 0) {
        return std::nullopt;
    }
    std::string_view unit(end);
    while (!unit.empty() && unit.front() == ' ') {
        unit.remove_prefix(1);
    }
    struct Unit {
        std::string_view name;
        double bytes;
    };
    constexpr std::array<Unit, 5> kUnits = {{{"GiB", 1024.0 * 1024 * 1024},
                                             {"MiB", 1024.0 * 1024},
                                             {"KiB", 1024.0},
                                             {"bytes", 1.0},
                                             {"B", 1.0}}};
    for (const Unit& candidate : kUnits) {
        if (unit.substr(0, candidate.name.size()) == candidate.name) {
            return static_cast<std::int64_t>(std::llround(value * candidate.bytes));
        }
    }
    return std::nullopt;
}

std::int64_t Fragmentation::segment_bytes() const {
    const allocator::CachingAllocatorModel defaults{allocator::AllocatorSettings{}};
    return allocator::CachingAllocatorModel::segment_size(defaults.round_size(requested_bytes));
}

const char* Fragmentation::pool() const {
    const allocator::CachingAllocatorModel defaults{allocator::AllocatorSettings{}};
    return allocator::CachingAllocatorModel::is_small(defaults.round_size(requested_bytes))
               ? "small"
               : "large";
}

std::string describe_fragmentation(const Fragmentation& f, std::string_view alloc_conf) {
    const std::string free_part = format_bytes(f.reserved_free_bytes) + " reserved but free in " +
                                  std::to_string(f.free_blocks) + " block(s) of the " + f.pool() +
                                  " pool that serves it, the largest " +
                                  format_bytes(f.largest_free_block);
    if (f.fragmented()) {
        const std::string pieces = "enough memory, but fragmented: " + free_part +
                                   ", none large enough for " + format_bytes(f.requested_bytes);
        if (allocator::expandable_segments_on(alloc_conf)) {
            // Its segments already grow: the pieces lie inside them, between tensors still held.
            return pieces +
                   ". expandable_segments is already on (memory.alloc_conf): the free pieces lie "
                   "between tensors still held; fewer, smaller activations at once (accumulation, "
                   "checkpointing) leave fewer of them";
        }
        return pieces +
               ". expandable_segments:True (memory.alloc_conf here, PYTORCH_CUDA_ALLOC_CONF in a "
               "script) lets segments grow instead of splitting; memory.empty_cache=step hands "
               "the free blocks back between steps";
    }
    return "not enough memory (not fragmentation): " + free_part + ", and " +
           format_bytes(f.unreserved_free_bytes) + " more the allocator may reserve, for " +
           format_bytes(f.requested_bytes) + " (a new segment for it reserves " +
           format_bytes(f.segment_bytes()) + ")";
}

}  // namespace oomlab
