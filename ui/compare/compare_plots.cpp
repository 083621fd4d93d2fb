#include "compare/compare_plots.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "common/formatting.h"
#include "plots/line_scale.h"
#include "plots/loss_smoothing.h"
#include "plots/memory_axis.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

std::optional<double> valueOf(const MetricRow& row, ComparePlot::Quantity quantity) {
    const auto mib = [](const std::optional<std::int64_t>& bytes) -> std::optional<double> {
        return bytes ? std::optional<double>(toMiB(*bytes)) : std::nullopt;
    };
    switch (quantity) {
        case ComparePlot::Quantity::Loss:
            return row.loss;
        case ComparePlot::Quantity::PeakMemory:
            return mib(row.peak_bytes);
        case ComparePlot::Quantity::AllocatedMemory:
            return mib(row.allocated_bytes);
        case ComparePlot::Quantity::ReservedMemory:
            return mib(row.reserved_bytes);
    }
    return std::nullopt;
}

}  // namespace

ComparePlot::ComparePlot(Quantity quantity, QWidget* parent)
    : ThemedPlot(parent), m_quantity(quantity) {
    placeLegendBelow(2);
    rebuild();
}

void ComparePlot::setRuns(const QVector<CompareRun>& runs) {
    m_runs = runs;
    rebuild();
}

void ComparePlot::setXAxis(XAxis axis) {
    if (axis != m_xAxis) {
        m_xAxis = axis;
        rebuild();
    }
}

void ComparePlot::setQuantity(Quantity quantity) {
    if (quantity != m_quantity) {
        m_quantity = quantity;
        rebuild();
    }
}

void ComparePlot::setSmoothing(double weight) {
    weight = std::clamp(weight, 0.0, LossSmoother::kMaxWeight);
    if (weight != m_smoothing) {
        m_smoothing = weight;
        if (m_quantity == Quantity::Loss) {
            rebuild();
        }
    }
}

void ComparePlot::rebuild() {
    clearGraphs();
    markers().clear();
    m_runGraphs.clear();
    m_x.reset();
    m_y.reset();
    const bool loss = m_quantity == Quantity::Loss;
    xAxis->setLabel(m_xAxis == XAxis::Step ? tr("optimizer step") : tr("wall time (s)"));
    if (loss) {
        usePlainAxis(yAxis, tr("loss"));
    } else {
        useMemoryAxis(yAxis);
    }
    bool ranksShown = false;
    for (int i = 0; i < m_runs.size(); ++i) {
        const CompareRun& run = m_runs[i];
        const QColor color = seriesColor(i);
        QCPGraph* main = addLineSeries(runLabel(run.record), color);
        QCPGraph* validation = nullptr;
        if (loss) {
            validation = addLineSeries(tr("%1 (validation)").arg(runLabel(run.record)), color,
                                       nullptr, Qt::DashLine);
            validation->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
            validation->removeFromLegend();
        }
        QVector<double> keys, values, validKeys, validValues;
        std::map<int, std::pair<QVector<double>, QVector<double>>> otherRanks;
        // The last row of any phase: a run out of memory before its first step ended has no
        // step rows, and this point stands for it.
        std::optional<double> lastX;
        std::optional<std::pair<double, double>> lastPoint;
        for (const MetricRow& row : run.metrics) {
            const double x =
                m_xAxis == XAxis::Step ? static_cast<double>(row.step) : row.wall_ms / 1000.0;
            const std::optional<double> y = valueOf(row, m_quantity);
            if (row.rank == 0) {
                lastX = x;
                if (y) {
                    lastPoint = std::pair(x, *y);
                }
            }
            if (!y) {
                continue;
            }
            if (row.rank > 0) {
                // A data-parallel run: each other rank's memory beside rank 0's; its loss is
                // rank 0's alike.
                if (!loss && row.phase == phase::kStep) {
                    otherRanks[row.rank].first.push_back(x);
                    otherRanks[row.rank].second.push_back(*y);
                    m_y.add(*y);
                }
                continue;
            }
            if (row.phase == phase::kStep) {
                keys.push_back(x);
                values.push_back(*y);
            } else if (loss && row.phase == phase::kEval) {
                validKeys.push_back(x);
                validValues.push_back(*y);
            } else {
                continue;
            }
            m_x.add(x);
            m_y.add(*y);
        }
        if (loss && m_smoothing > 0) {
            QColor faded = color;
            faded.setAlphaF(0.3);
            QCPGraph* raw = addLineSeries(tr("%1 (raw)").arg(runLabel(run.record)), faded);
            raw->removeFromLegend();
            raw->setData(keys, values, true);
            setSeriesPen(main, QPen(color, 2));
            main->setData(keys, LossSmoother(m_smoothing).smooth(values), true);
        } else {
            main->setData(keys, values, true);
        }
        if (validation) {
            validation->setData(validKeys, validValues, true);
        }
        for (const auto& [rank, points] : otherRanks) {
            QCPGraph* other = addLineSeries(tr("%1 (rank %2)").arg(runLabel(run.record)).arg(rank),
                                            color, nullptr, Qt::DotLine);
            other->setData(points.first, points.second, true);
            other->removeFromLegend();  // one legend entry says what dotted lines are
            ranksShown = true;
        }
        const bool outOfMemory = run.record.outcome.status == RunStatus::Oom;
        if (outOfMemory && keys.isEmpty() && lastPoint && !loss) {
            // Out of memory in its first step: one dot where it was last measured.
            main->setData({lastPoint->first}, {lastPoint->second}, true);
            main->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
            keys.push_back(lastPoint->first);
            m_x.add(lastPoint->first);
            m_y.add(lastPoint->second);
        }
        m_runGraphs.push_back(main);
        if (outOfMemory && (!keys.isEmpty() || lastX)) {
            const double at = keys.isEmpty() ? *lastX : keys.back();
            markers().addMarker(at, tr("OOM"), color);
            m_x.add(at);
        }
    }
    if (ranksShown) {
        // Each run's other ranks are dotted in its colour: one entry for all of them, not one
        // per rank and run (eight entries crowded the plot out of a projector's screen).
        addLineSeries(tr("other ranks (dotted)"), palette().color(QPalette::WindowText), nullptr,
                      Qt::DotLine);
    }
    if (!loss) {
        addCaps();
    }
    setFollowData(true);
    fitRanges();
    requestReplot();
}

// Each cap of the runs compared, once: "cap 12.0 MiB", naming its runs when not all have it.
void ComparePlot::addCaps() {
    std::map<std::int64_t, QStringList> runsByCap;
    for (const CompareRun& run : m_runs) {
        if (run.configRead && run.config.memory.cap_mb > 0) {
            runsByCap[run.config.memory.cap_bytes()] << QString::number(run.record.id);
        }
    }
    for (const auto& [bytes, runs] : runsByCap) {
        QString text = tr("cap %1").arg(formatBytes(bytes));
        if (runs.size() < m_runs.size()) {
            text += runs.size() == 1 ? tr(" (run %1)").arg(runs.front())
                                     : tr(" (runs %1)").arg(runs.join(QStringLiteral(", ")));
        }
        markers().addLevel(toMiB(bytes), text, warningColor());
        m_y.add(toMiB(bytes));
    }
}

void ComparePlot::fitRanges() {
    fitAxis(xAxis, m_x, true);
    fitAxis(yAxis, m_y, m_quantity != Quantity::Loss);
}

}  // namespace oomlab::ui
