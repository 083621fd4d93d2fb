#include "compare/memory_diff_model.h"

#include "common/formatting.h"
#include "common/table_cells.h"

namespace oomlab::ui {
MemoryDiffModel::MemoryDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void MemoryDiffModel::setDiff(const MemoryDiff& diff) {
    beginResetModel();
    m_rows.clear();
    m_rows.push_back({true, tr("By category"), {}});
    for (const MemoryDifference& difference : diff.by_category) {
        m_rows.push_back({false, {}, difference});
    }
    m_rows.push_back({true, tr("By module"), {}});
    for (const MemoryDifference& difference : diff.by_module) {
        m_rows.push_back({false, {}, difference});
    }
    endResetModel();
}

void MemoryDiffModel::clear() {
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

bool MemoryDiffModel::isSection(int row) const {
    return row >= 0 && row < rowCount() && m_rows[std::size_t(row)].section;
}

int MemoryDiffModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int MemoryDiffModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MemoryDiffModel::display(const Row& row, int column) const {
    if (row.section) {
        return column == Figure ? QVariant(row.title) : QVariant();
    }
    const MemoryDifference& d = row.difference;
    switch (column) {
        case Figure:
            return memoryFigureName(d.module, d.category);
        case A:
            return formatBytes(d.a_bytes);
        case B:
            return formatBytes(d.b_bytes);
        case Difference:
            return formatSignedBytes(d.difference());
        default:
            return {};
    }
}

QVariant MemoryDiffModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) {
        return {};
    }
    const std::size_t at = std::size_t(index.row());
    const Row& row = m_rows[at];
    switch (role) {
        case Qt::DisplayRole:
            return display(row, index.column());
        case Qt::FontRole:
            return row.section ? QVariant(boldFont()) : QVariant();
        case Qt::TextAlignmentRole:
            return !row.section && index.column() != Figure ? figureAlignment() : QVariant();
        case Qt::ToolTipRole: {
            // The last section with nothing under it: say why.
            const bool emptySection = row.section && at + 1 == m_rows.size();
            return emptySection && index.column() == Figure
                       ? tr("No difference by module, or the runs recorded none (older runs, "
                            "or runs that ended before their first step).")
                       : QVariant();
        }
        default:
            return {};
    }
}

QVariant MemoryDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case Figure:
            return tr("At the peak");
        case A:
            return tr("A");
        case B:
            return tr("B");
        case Difference:
            return tr("B − A");
        default:
            return {};
    }
}

}  // namespace oomlab::ui
