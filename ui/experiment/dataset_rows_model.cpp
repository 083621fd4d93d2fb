#include "experiment/dataset_rows_model.h"

namespace oomlab::ui {

DatasetRowsModel::DatasetRowsModel(QObject* parent) : QAbstractTableModel(parent) {}

void DatasetRowsModel::setRows(const QVector<QPair<QString, QString>>& rows) {
    beginResetModel();
    m_rows = rows;
    endResetModel();
}

int DatasetRowsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int DatasetRowsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : Text + 1;
}

QVariant DatasetRowsModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() > Text) {
        return {};
    }
    const auto& [label, text] = m_rows[index.row()];
    switch (role) {
        case Qt::DisplayRole:
            return index.column() == Label ? label : text;
        case Qt::ToolTipRole:
            return index.column() == Text ? QVariant(text) : QVariant();  // cut to the column
        default:
            return {};
    }
}

QVariant DatasetRowsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    return section == Label ? tr("Label") : section == Text ? tr("Text") : QVariant();
}

}  // namespace oomlab::ui
