// Every config key (rows) of each run (columns), values that differ between runs
// highlighted, with "show differences only".
#pragma once

#include <QStringList>
#include <QTableWidget>

#include "compare/compare_data.h"

namespace oomlab::ui {

class SettingsDiffTable : public QTableWidget {
    Q_OBJECT

public:
    explicit SettingsDiffTable(QWidget* parent = nullptr);

    void setRuns(const QVector<CompareRun>& runs);
    void setDifferencesOnly(bool only);
    bool differencesOnly() const { return m_differencesOnly; }

    QStringList differingKeys() const { return m_differing; }
    int visibleRowCount() const;

private:
    void applyFilter();

    QStringList m_differing;
    bool m_differencesOnly = true;
};

}  // namespace oomlab::ui
