// The micro-batches a run trains and their size: planned for each epoch (this rank's share
// when data parallel), walked a step at a time, and cut smaller by the OOM policy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/prepare/batch_plan.h"
#include "prepared_experiment.h"

namespace oomlab::train {

using prepare::BatchPlan;

class BatchSchedule {
public:
    explicit BatchSchedule(const PreparedExperiment& experiment);

    int batch_size() const { return m_batch_size; }
    int accumulation() const { return m_accumulation; }
    std::int64_t total_steps() const { return m_total_steps; }

    // The epoch's micro-batches, shuffled by (seed, epoch); this rank's share of them when
    // `world_size` > 1.
    void plan_epoch(int epoch, int rank, int world_size);
    // `count` micro-batches of the same examples (the worst-case trial).
    void plan_repeated(const std::vector<std::int64_t>& batch, std::size_t count);
    // The micro-batches from the step in progress on, and how many there are.
    BatchPlan rest() const;
    std::size_t left() const { return m_plan.size() - std::min(m_cursor, m_plan.size()); }
    // The step in progress trained `micro_batches`: the next starts after them.
    void advance(int micro_batches) { m_cursor += micro_batches; }
    // The OOM policy's retry: halves the micro-batch from the step in progress on, doubling the
    // accumulation under `adapt` so that the effective batch stays; recounts the run's steps
    // after `steps_done` in `epoch`. Returns what changed, in words.
    std::string halve(bool keep_effective_batch, std::int64_t steps_done, int epoch,
                      int world_size);

private:
    const PreparedExperiment& m_experiment;
    int m_batch_size;
    int m_accumulation;
    std::int64_t m_total_steps;
    BatchPlan m_plan;
    std::size_t m_cursor = 0;  // the first micro-batch of the step in progress
};

}  // namespace oomlab::train
