#include "compare/settings_diff_model.h"

#include <QFont>

#include "common/formatting.h"
#include "oomlab/config/config_keys.h"

namespace oomlab::ui {
namespace {

// A differing row's font: bold; the others keep the view's.
QVariant markFont(bool differs) {
    if (!differs) {
        return {};
    }
    QFont bold;
    bold.setBold(true);
    return bold;
}

}  // namespace

SettingsDiffModel::SettingsDiffModel(QObject* parent) : QAbstractTableModel(parent) {}

void SettingsDiffModel::setRuns(const QVector<CompareRun>& runs) {
    beginResetModel();
    m_rows.clear();
    m_runLabels.clear();
    for (const CompareRun& run : runs) {
        m_runLabels << runLabel(run.record);
    }
    for (const ConfigKeyInfo& info : config_keys()) {
        Row row{qs(info.name), qs(info.help), {}, false};
        for (const CompareRun& run : runs) {
            row.values << (run.configRead ? qs(get_config_value(run.config, info.name)) : tr("?"));
        }
        QStringList distinct = row.values;
        distinct.removeDuplicates();
        row.differs = distinct.size() > 1;
        m_rows.push_back(row);
    }
    endResetModel();
}

QStringList SettingsDiffModel::differingKeys() const {
    QStringList keys;
    for (const Row& row : m_rows) {
        if (row.differs) {
            keys << row.key;
        }
    }
    return keys;
}

bool SettingsDiffModel::rowDiffers(int row) const {
    return row >= 0 && row < m_rows.size() && m_rows[row].differs;
}

int SettingsDiffModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int SettingsDiffModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_runLabels.size());
}

QVariant SettingsDiffModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const Row& row = m_rows[index.row()];
    switch (role) {
        case Qt::DisplayRole:
            return row.values[index.column()];
        case Qt::FontRole:
            return markFont(row.differs);
        case Qt::BackgroundRole:
            if (row.differs && m_highlight.isValid()) {
                QColor tint = m_highlight;
                tint.setAlphaF(0.18);
                return tint;
            }
            return {};
        default:
            return {};
    }
}

QVariant SettingsDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal) {
        return role == Qt::DisplayRole && section >= 0 && section < m_runLabels.size()
                   ? QVariant(m_runLabels[section])
                   : QVariant();
    }
    if (section < 0 || section >= m_rows.size()) {
        return {};
    }
    const Row& row = m_rows[section];
    switch (role) {
        case Qt::DisplayRole:
            return row.key;
        case Qt::ToolTipRole:
            return row.help;
        case Qt::FontRole:
            return markFont(row.differs);
        default:
            return {};
    }
}

}  // namespace oomlab::ui
