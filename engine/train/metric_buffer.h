#pragma once

// Collects a run's samples and hands them to the observer in batches. Loss values stay on
// the device until a flush, so a step costs no device synchronisation.
#include <torch/types.h>

#include <chrono>
#include <deque>
#include <optional>
#include <vector>

#include "oomlab/session/experiment.h"

namespace oomlab::train {

class MetricBuffer {
public:
    explicit MetricBuffer(TrainObserver& observer) : m_observer(observer) {}

    void add(MetricRow row, torch::Tensor pending_loss = {});
    // The data-parallel rank every row is stamped with.
    void set_rank(int rank) { m_rank = rank; }
    // Flushes when ~100 ms passed or many rows wait; `force` flushes now.
    void maybe_flush(bool force = false);
    // Mean loss of the last steps (read at flush time); empty before the first step.
    std::optional<double> recent_loss() const;
    // The first step whose loss was NaN or infinite, as seen by the flushes so far.
    std::optional<std::int64_t> diverged_at() const { return m_diverged_at; }

private:
    TrainObserver& m_observer;
    std::vector<MetricRow> m_rows;
    std::vector<std::pair<std::size_t, torch::Tensor>> m_pending;  // row index, loss tensor
    std::chrono::steady_clock::time_point m_last_flush = std::chrono::steady_clock::now();
    std::deque<double> m_recent_losses;
    std::optional<std::int64_t> m_diverged_at;
    int m_rank = 0;
};

}  // namespace oomlab::train
