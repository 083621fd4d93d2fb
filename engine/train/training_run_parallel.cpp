// The data-parallel side of a training run: joining the ranks' steps and their ending.
#include <algorithm>
#include <cstdio>

#include "oomlab/torch_utils/torch_compat.h"
#include "training_run.h"

namespace oomlab::train {
namespace {

// How a step's micro-batches ended on a rank; every rank acts on the highest (agree()).
enum StepStatus : int { kStepDone = 0, kStepCancelled = 1, kStepOutOfMemory = 2 };
constexpr int kStatusShift = 16;  // the status above, the rank that reported it below

// What a rank whose own work went through says of an out-of-memory the ranks agreed on.
std::string out_of_memory_on(int agreed) {
    return "rank " + std::to_string(agreed & ((1 << kStatusShift) - 1)) +
           " of the run ran out of memory";
}

}  // namespace

int TrainingRun::micro_batches_together(torch::Tensor& step_loss, std::int64_t& samples) {
    int status = kStepDone;
    std::string out_of_memory;
    int done = 0;
    try {
        done = micro_batches(step_loss, samples);
    } catch (const Cancelled&) {
        status = kStepCancelled;
    } catch (const c10::Error& error) {
        if (!compat::is_out_of_memory(error)) {
            throw;
        }
        status = kStepOutOfMemory;
        out_of_memory = error.what_without_backtrace();
    }
    if (status != kStepDone) {
        // The others may still be reducing: as many micro-batches as the plan has left.
        m_trained.parallel->leave_step(static_cast<int>(
            std::min<std::size_t>(std::size_t(m_schedule.accumulation()), m_schedule.left())));
    }
    const int agreed =
        m_trained.parallel->agree(status << kStatusShift | m_trained.parallel->rank());
    switch (agreed >> kStatusShift) {
        case kStepOutOfMemory:
            throw OutOfMemoryOnRank(status == kStepOutOfMemory ? out_of_memory
                                                               : out_of_memory_on(agreed));
        case kStepCancelled:
            throw Cancelled();
        default:
            return done;
    }
}

void TrainingRun::evaluation_together(const std::optional<std::string>& out_of_memory) {
    const int status = out_of_memory ? kStepOutOfMemory : kStepDone;
    const int agreed =
        m_trained.parallel->agree(status << kStatusShift | m_trained.parallel->rank());
    if (agreed >> kStatusShift == kStepOutOfMemory) {
        // In the evaluation phase this records the OOM and ends the run, on every rank.
        recover_from_oom(out_of_memory ? *out_of_memory : out_of_memory_on(agreed));
    }
}

void TrainingRun::start_data_parallel() {
    const DistributedConfig& distributed = config().distributed;
    m_trained.parallel = std::make_unique<DataParallel>(
        *m_experiment.group, distributed.shard, m_trained.trainable,
        std::int64_t{distributed.bucket_mb} << 20, m_attribution.optimizer_id());
    m_metrics.set_rank(m_trained.parallel->rank());
    m_trained.parallel->share_initial_parameters();
    m_trained.parallel->shard_parameters(*m_trained.model);
    m_trained.updated = m_trained.parallel->optimizer_parameters();
}

void TrainingRun::finish_data_parallel() {
    if (!m_trained.parallel) {
        return;
    }
    char hash[32];
    std::snprintf(
        hash, sizeof hash, "%016llx",
        static_cast<unsigned long long>(m_trained.parallel->check_identical_parameters()));
    m_observer.on_event({m_position.step, std::string(event_kind::kNote),
                         "parameters identical on all " +
                             std::to_string(m_trained.parallel->world_size()) +
                             " processes (FNV-1a of their bytes: " + hash + ")"});
}

}  // namespace oomlab::train
