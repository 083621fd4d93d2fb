#include "batch_schedule.h"

#include <algorithm>

#include "batching.h"
#include "oomlab/prepare/data_profile.h"

namespace oomlab::train {
namespace {

// Splits the micro-batches from `first` on into batches of `size`, keeping their order.
BatchPlan rechunk(const BatchPlan& plan, std::size_t first, int size) {
    std::vector<std::int64_t> rest;
    for (std::size_t i = first; i < plan.size(); ++i) {
        rest.insert(rest.end(), plan[i].begin(), plan[i].end());
    }
    BatchPlan result;
    for (std::size_t start = 0; start < rest.size(); start += size) {
        result.emplace_back(rest.begin() + start,
                            rest.begin() + std::min(rest.size(), start + size));
    }
    return result;
}

}  // namespace

BatchSchedule::BatchSchedule(const PreparedExperiment& experiment)
    : m_experiment(experiment),
      m_batch_size(experiment.config.train.batch_size),
      m_accumulation(experiment.config.train.accumulation),
      m_total_steps(experiment.info.total_steps) {}

void BatchSchedule::plan_epoch(int epoch, int rank, int world_size) {
    const TrainConfig& train = m_experiment.config.train;
    m_plan =
        plan_batches(m_experiment.train_examples.size(), lengths_of(m_experiment.train_examples),
                     m_batch_size, train.padding, train.seed, epoch);
    if (world_size > 1) {
        m_plan = shard_plan(std::move(m_plan), m_batch_size, rank, world_size);
    }
    m_cursor = 0;
}

void BatchSchedule::plan_repeated(const std::vector<std::int64_t>& batch, std::size_t count) {
    m_plan.assign(count, batch);
    m_cursor = 0;
}

BatchPlan BatchSchedule::rest() const {
    return BatchPlan(m_plan.begin() + static_cast<std::ptrdiff_t>(m_plan.size() - left()),
                     m_plan.end());
}

std::string BatchSchedule::halve(bool keep_effective_batch, std::int64_t steps_done, int epoch,
                                 int world_size) {
    const int old_batch = m_batch_size;
    const int old_accumulation = m_accumulation;
    m_batch_size = std::max(1, m_batch_size / 2);
    if (keep_effective_batch) {
        m_accumulation *= 2;
    }
    m_plan = rechunk(m_plan, m_cursor, m_batch_size);
    m_cursor = 0;
    const TrainConfig& train = m_experiment.config.train;
    if (train.max_steps == 0) {
        const std::int64_t steps_left_in_epoch =
            static_cast<std::int64_t>((m_plan.size() + m_accumulation - 1) / m_accumulation);
        m_total_steps =
            steps_done + steps_left_in_epoch +
            (train.epochs - epoch) * steps_per_epoch(m_experiment.train_examples.size(),
                                                     m_batch_size, m_accumulation, world_size);
    }
    if (!keep_effective_batch) {
        return "batch " + std::to_string(old_batch) + " -> " + std::to_string(m_batch_size);
    }
    return "micro-batch " + std::to_string(old_batch) + " -> " + std::to_string(m_batch_size) +
           ", accumulation " + std::to_string(old_accumulation) + " -> " +
           std::to_string(m_accumulation) + " (same effective batch)";
}

}  // namespace oomlab::train
