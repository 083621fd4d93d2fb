#include "metric_buffer.h"

#include <cmath>
#include <numeric>

namespace oomlab::train {
namespace {

constexpr auto kFlushInterval = std::chrono::milliseconds(100);
constexpr std::size_t kFlushRows = 256;
constexpr std::size_t kRecentLosses = kFinalLossSteps;

}  // namespace

void MetricBuffer::add(MetricRow row, torch::Tensor pending_loss) {
    if (pending_loss.defined()) {
        m_pending.emplace_back(m_rows.size(), std::move(pending_loss));
    }
    row.rank = m_rank;
    m_rows.push_back(std::move(row));
}

void MetricBuffer::maybe_flush(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (m_rows.empty() ||
        (!force && now - m_last_flush < kFlushInterval && m_rows.size() < kFlushRows)) {
        return;
    }
    if (!m_pending.empty()) {
        // One transfer for every loss of the batch.
        std::vector<torch::Tensor> losses;
        for (const auto& pending : m_pending) {
            losses.push_back(pending.second.reshape({1}));
        }
        const torch::Tensor values = torch::cat(losses).to(torch::kCPU, torch::kDouble);
        const double* data = values.data_ptr<double>();
        for (std::size_t i = 0; i < m_pending.size(); ++i) {
            MetricRow& row = m_rows[m_pending[i].first];
            row.loss = data[i];
            if (!std::isfinite(data[i]) && !m_diverged_at) {
                m_diverged_at = row.step;
            }
            m_recent_losses.push_back(data[i]);
            if (m_recent_losses.size() > kRecentLosses) {
                m_recent_losses.pop_front();
            }
        }
        m_pending.clear();
    }
    m_observer.on_metrics(m_rows);
    m_rows.clear();
    m_last_flush = now;
}

std::optional<double> MetricBuffer::recent_loss() const {
    if (m_recent_losses.empty()) {
        return std::nullopt;
    }
    return std::accumulate(m_recent_losses.begin(), m_recent_losses.end(), 0.0) /
           static_cast<double>(m_recent_losses.size());
}

}  // namespace oomlab::train
