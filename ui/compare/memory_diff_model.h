// What differs between two runs at their peaks as a table: a "By category" section, then a
// "By module" section, each largest difference first (the engine's diff_memory).
#pragma once

#include <QAbstractTableModel>

#include "oomlab/run/memory_diff.h"

namespace oomlab::ui {

class MemoryDiffModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column { Figure, A, B, Difference, ColumnCount };

    explicit MemoryDiffModel(QObject* parent = nullptr);

    void setDiff(const MemoryDiff& diff);
    void clear();
    bool isSection(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    // A section title, or a difference (section = false).
    struct Row {
        bool section = false;
        QString title;
        MemoryDifference difference;
    };

    QVariant display(const Row& row, int column) const;

    std::vector<Row> m_rows;
};

}  // namespace oomlab::ui
