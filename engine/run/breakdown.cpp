#include "oomlab/run/breakdown.h"

#include "oomlab/run/run_record.h"

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

bool RunOutcome::has_breakdown() const {
    // A recorded breakdown holds at least the model's parameters.
    for (std::size_t i = 0; i < kBreakdownInPeak; ++i) {
        if (breakdown_field(breakdown, i) > 0) {
            return true;
        }
    }
    return false;
}

}  // namespace oomlab
