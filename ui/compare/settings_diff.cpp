#include "compare/settings_diff.h"

#include <QEvent>
#include <QHeaderView>

#include "common/table_sizing.h"
#include "compare/settings_diff_model.h"

namespace oomlab::ui {

SettingsDiffTable::SettingsDiffTable(QWidget* parent)
    : QTableView(parent), m_model(new SettingsDiffModel(this)) {
    setObjectName(QStringLiteral("settingsDiff"));
    m_model->setHighlight(palette().color(QPalette::Highlight));
    setModel(m_model);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setAlternatingRowColors(true);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    horizontalHeader()->setStretchLastSection(true);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    sizeRowsToText(this, 3);
}

void SettingsDiffTable::setRuns(const QVector<CompareRun>& runs) {
    m_model->setRuns(runs);
    applyFilter();
    resizeColumnsToContents();
}

void SettingsDiffTable::changeEvent(QEvent* event) {
    QTableView::changeEvent(event);
    if (event->type() == QEvent::FontChange) {
        resizeColumnsToContents();
    }
}

QStringList SettingsDiffTable::differingKeys() const {
    return m_model->differingKeys();
}

void SettingsDiffTable::setDifferencesOnly(bool only) {
    m_differencesOnly = only;
    applyFilter();
}

void SettingsDiffTable::applyFilter() {
    for (int row = 0; row < m_model->rowCount(); ++row) {
        setRowHidden(row, m_differencesOnly && !m_model->rowDiffers(row));
    }
}

int SettingsDiffTable::visibleRowCount() const {
    int visible = 0;
    for (int row = 0; row < m_model->rowCount(); ++row) {
        visible += isRowHidden(row) ? 0 : 1;
    }
    return visible;
}

}  // namespace oomlab::ui
