#include "oomlab/run/ended_batch.h"

#include <algorithm>

namespace oomlab {
namespace {

// Runs saved without their accumulation read 0: one micro-batch a step.
int recorded_accumulation(int accumulation) {
    return std::max(1, accumulation);
}

}  // namespace

bool batch_adapted(const RunOutcome& outcome, const BatchShape& planned) {
    return outcome.batch_size > 0 && (outcome.batch_size != planned.batch_size ||
                                      recorded_accumulation(outcome.accumulation) !=
                                          recorded_accumulation(planned.accumulation));
}

BatchShape ended_batch(const RunOutcome& outcome, const BatchShape& planned) {
    if (!batch_adapted(outcome, planned)) {
        return planned;
    }
    return {outcome.batch_size, recorded_accumulation(outcome.accumulation)};
}

}  // namespace oomlab
