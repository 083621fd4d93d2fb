#include "compare/settings_diff.h"

#include <QHeaderView>

#include "common/formatting.h"
#include "oomlab/config/config_keys.h"

namespace oomlab::ui {

SettingsDiffTable::SettingsDiffTable(QWidget* parent) : QTableWidget(parent) {
    setObjectName(QStringLiteral("settingsDiff"));
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setAlternatingRowColors(true);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    horizontalHeader()->setStretchLastSection(true);
    verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
}

void SettingsDiffTable::setRuns(const QVector<CompareRun>& runs) {
    clear();
    m_differing.clear();
    const std::vector<ConfigKeyInfo>& keys = config_keys();
    setColumnCount(runs.size());
    setRowCount(static_cast<int>(keys.size()));
    QStringList headers;
    for (const CompareRun& run : runs) {
        headers << runLabel(run.record);
    }
    setHorizontalHeaderLabels(headers);
    QFont bold = font();
    bold.setBold(true);
    const QColor highlight = palette().color(QPalette::Highlight);
    QColor background = highlight;
    background.setAlphaF(0.18);
    for (int row = 0; row < static_cast<int>(keys.size()); ++row) {
        const QString key = qs(keys[static_cast<std::size_t>(row)].name);
        auto* header = new QTableWidgetItem(key);
        header->setToolTip(qs(keys[static_cast<std::size_t>(row)].help));
        setVerticalHeaderItem(row, header);
        QStringList values;
        for (const CompareRun& run : runs) {
            values << (run.configRead ? qs(get_config_value(run.config, ss(key))) : tr("?"));
        }
        QStringList distinct = values;
        distinct.removeDuplicates();
        const bool differs = distinct.size() > 1;
        for (int column = 0; column < runs.size(); ++column) {
            auto* item = new QTableWidgetItem(values[column]);
            if (differs) {
                item->setFont(bold);
                item->setBackground(background);
            }
            setItem(row, column, item);
        }
        if (differs) {
            header->setFont(bold);
            m_differing << key;
        }
    }
    applyFilter();
    resizeColumnsToContents();
}

void SettingsDiffTable::setDifferencesOnly(bool only) {
    m_differencesOnly = only;
    applyFilter();
}

void SettingsDiffTable::applyFilter() {
    for (int row = 0; row < rowCount(); ++row) {
        const QTableWidgetItem* header = verticalHeaderItem(row);
        const bool differs = header && m_differing.contains(header->text());
        setRowHidden(row, m_differencesOnly && !differs);
    }
}

int SettingsDiffTable::visibleRowCount() const {
    int visible = 0;
    for (int row = 0; row < rowCount(); ++row) {
        visible += isRowHidden(row) ? 0 : 1;
    }
    return visible;
}

}  // namespace oomlab::ui
