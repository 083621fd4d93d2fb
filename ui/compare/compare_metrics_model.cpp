#include "compare/compare_metrics_model.h"

#include "common/formatting.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
double meanThroughput(const CompareRun& run) {
    if (run.meanSamplesPerS) {
        return *run.meanSamplesPerS;
    }
    double sum = 0;
    int count = 0;
    for (const MetricRow& row : run.metrics) {
        if (row.samples_per_s) {
            sum += *row.samples_per_s;
            ++count;
        }
    }
    return count ? sum / count : 0;
}

CompareMetricsModel::CompareMetricsModel(QObject* parent) : QAbstractTableModel(parent) {}

void CompareMetricsModel::setRuns(const QVector<CompareRun>& runs) {
    beginResetModel();
    m_runs = runs;
    endResetModel();
}

int CompareMetricsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int CompareMetricsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QString CompareMetricsModel::text(int row, int column) const {
    const RunRecord& run = m_runs[row].record;
    switch (column) {
        case Run:
            return runLabel(run);
        case Status:
            return statusName(run.outcome.status);
        case Steps:
            return QString::number(run.outcome.steps);
        case Batch:
            return endedBatchText(run, m_runs[row].config);
        case FinalLoss:
            return formatOptional(run.outcome.final_train_loss);
        case ValAccuracy:
            return formatPercent(run.outcome.val_accuracy);
        case Peak:
            return formatBytes(run.outcome.peak_bytes);
        case Duration:
            return formatDuration(run.outcome.wall_seconds);
        case Throughput: {
            const double throughput = meanThroughput(m_runs[row]);
            return throughput > 0 ? QString::number(throughput, 'f', 0) : QString();
        }
        default:
            return {};
    }
}

QVariant CompareMetricsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const RunRecord& run = m_runs[index.row()].record;
    switch (role) {
        case Qt::DisplayRole:
            return text(index.row(), index.column());
        case Qt::ForegroundRole:
            if (index.column() == Run) {
                return seriesColor(index.row());
            }
            if (index.column() == Status) {
                return statusColor(run.outcome.status);
            }
            return {};
        case Qt::ToolTipRole:
            return run.outcome.error.empty() ? QVariant() : QVariant(qs(run.outcome.error));
        default:
            return {};
    }
}

QVariant CompareMetricsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    static const char* const kHeaders[ColumnCount] = {
        QT_TR_NOOP("Run"),   QT_TR_NOOP("Status"),     QT_TR_NOOP("Steps"),
        QT_TR_NOOP("Batch"), QT_TR_NOOP("Final loss"), QT_TR_NOOP("Val. acc."),
        QT_TR_NOOP("Peak"),  QT_TR_NOOP("Duration"),   QT_TR_NOOP("Samples/s")};
    return section >= 0 && section < ColumnCount ? QVariant(tr(kHeaders[section])) : QVariant();
}

}  // namespace oomlab::ui
