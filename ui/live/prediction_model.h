// A run's figures beside the estimator's prediction, by category then by module and kind:
// predicted, measured, how far off, and why where the cause is known. Rows off by more than
// 10% (and 64 KiB) are marked.
#pragma once

#include <QAbstractTableModel>

#include "oomlab/run/prediction_check.h"

namespace oomlab::ui {

class PredictionModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Figure, Predicted, Measured, Off, Why };

    explicit PredictionModel(QObject* parent = nullptr);

    void setCheck(const PredictionCheck& check);
    void clear();
    const PredictionCheck& check() const { return m_check; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    const PredictionRow& rowAt(int row) const;
    QString text(const PredictionRow& row, int column) const;

    PredictionCheck m_check;
};

}  // namespace oomlab::ui
