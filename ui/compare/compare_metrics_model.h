// The compared runs' final figures, one row per run: status, steps, batch, loss, accuracy,
// peak, duration and throughput; the run's legend colour and its status colour, its error as
// the tooltip.
#pragma once

#include <QAbstractTableModel>
#include <QVector>

#include "compare/compare_data.h"

namespace oomlab::ui {

class CompareMetricsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Run,
        Status,
        Steps,
        Batch,
        FinalLoss,
        ValAccuracy,
        Peak,
        Duration,
        Throughput,
        ColumnCount
    };

    explicit CompareMetricsModel(QObject* parent = nullptr);

    void setRuns(const QVector<CompareRun>& runs);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QString text(int row, int column) const;

    QVector<CompareRun> m_runs;
};

// The mean of the run's samples-per-second rows; 0 when it has none.
double meanThroughput(const CompareRun& run);

}  // namespace oomlab::ui
