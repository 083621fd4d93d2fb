// A training run's out-of-memory: the policy's retry (memory.on_oom) and what the allocator
// said when it happened.
#include "oomlab/common/errors.h"
#include "training_run.h"

namespace oomlab::train {

void TrainingRun::record_oom(const std::string& message) {
    // The failed step's tensors are gone by now; its peak and the allocator's counters remain.
    const memory::MemorySample state = m_memory.sample();
    record_memory_row(m_position.step + 1, phase::kOom, state);
    m_observer.on_event({m_position.step + 1, std::string(event_kind::kOom),
                         m_memory.describe_oom(message, state)});
}

bool TrainingRun::recover_from_oom(const std::string& message) {
    const OnOom policy = config().memory.on_oom;
    const std::string where = "out of memory at step " + std::to_string(m_position.step + 1) +
                              " during " + std::string(m_position.phase);
    // Release what the failed step held before deciding anything.
    m_batches.reset();
    m_leaked_loss = torch::Tensor();
    m_trained.drop_gradients();
    record_oom(where + ": " + message);
    if (policy == OnOom::Stop || m_position.phase == phase::kEval) {
        throw OutOfMemory(where + ": " + message);
    }
    if (m_schedule.batch_size() == 1) {
        throw OutOfMemory(where + " with a batch of 1, the smallest there is: " + message);
    }
    const int world_size = m_trained.parallel ? m_trained.parallel->world_size() : 1;
    const std::string action =
        m_schedule.halve(policy == OnOom::Adapt, m_position.step, m_position.epoch, world_size);
    m_observer.on_event(
        {m_position.step + 1,
         std::string(policy == OnOom::Adapt ? event_kind::kAdapt : event_kind::kHalve),
         "retrying the step with " + action});
    return true;
}

}  // namespace oomlab::train
