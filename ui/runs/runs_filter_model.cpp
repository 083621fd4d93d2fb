#include "runs/runs_filter_model.h"

#include <algorithm>

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
    const QModelIndex first = model->index(sourceRow, 0, sourceParent);
    const QString text = first.data(RunsModel::SearchRole).toString();
    const QStringList settings =
        first.data(RunsModel::SettingsRole).toString().split(QLatin1Char('\n'));
    for (const QString& word : m_words) {
        // "batch_size=64" matches the setting whose line ends so (not 640); other words match
        // anywhere in what the row shows.
        const bool found = word.contains(QLatin1Char('='))
                               ? std::any_of(settings.begin(), settings.end(),
                                             [&](const QString& line) {
                                                 return line.endsWith(word, Qt::CaseInsensitive);
                                             })
                               : text.contains(word, Qt::CaseInsensitive);
        if (!found) {
            return false;
        }
    }
    return true;
}

}  // namespace oomlab::ui
