// Filters the runs table by status and by text (any column: name, notes, settings,
// device), and sorts by each column's raw value.
#pragma once

#include <QSortFilterProxyModel>

namespace oomlab::ui {

class RunsFilterModel : public QSortFilterProxyModel {
    Q_OBJECT

public:
    explicit RunsFilterModel(QObject* parent = nullptr);

    void setStatusFilter(const QString& status);  // empty: every status
    void setText(const QString& text);            // words that must all appear in a row

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    QString m_status;
    QStringList m_words;
};

}  // namespace oomlab::ui
