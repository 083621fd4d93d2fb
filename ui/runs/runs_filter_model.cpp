#include "runs/runs_filter_model.h"

#include "runs/runs_model.h"

namespace oomlab::ui {

RunsFilterModel::RunsFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(RunsModel::SortRole);
    setDynamicSortFilter(true);
}

void RunsFilterModel::setStatusFilter(const QString& status) {
    if (status == m_status) {
        return;
    }
    m_status = status;
    invalidateFilter();
}

void RunsFilterModel::setText(const QString& text) {
    const QStringList words = text.simplified().split(' ', Qt::SkipEmptyParts);
    if (words == m_words) {
        return;
    }
    m_words = words;
    invalidateFilter();
}

bool RunsFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QAbstractItemModel* model = sourceModel();
    if (!m_status.isEmpty() &&
        model->index(sourceRow, 0, sourceParent).data(RunsModel::StatusRole).toString() !=
            m_status) {
        return false;
    }
    if (m_words.isEmpty()) {
        return true;
    }
    QString haystack;
    for (int column = 0; column < model->columnCount(sourceParent); ++column) {
        haystack += model->index(sourceRow, column, sourceParent).data().toString();
        haystack += QLatin1Char('\n');
    }
    for (const QString& word : m_words) {
        if (!haystack.contains(word, Qt::CaseInsensitive)) {
            return false;
        }
    }
    return true;
}

}  // namespace oomlab::ui
