#include "oomlab/run/breakdown.h"

namespace oomlab {
namespace {

template <typename Breakdown>
auto& field_of(Breakdown& b, std::size_t index) {
    switch (index) {
        case 0:
            return b.embedding_table;
        case 1:
            return b.parameters;
        case 2:
            return b.gradients;
        case 3:
            return b.optimizer_state;
        case 4:
            return b.data;
        case 5:
            return b.activations;
        case 6:
            return b.allocator_cache;
        default:
            return b.other;
    }
}

}  // namespace

std::int64_t& breakdown_field(MemoryBreakdown& breakdown, std::size_t index) {
    return field_of(breakdown, index);
}

std::int64_t breakdown_field(const MemoryBreakdown& breakdown, std::size_t index) {
    return field_of(breakdown, index);
}

}  // namespace oomlab
