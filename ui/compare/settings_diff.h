// The settings of the compared runs side by side (SettingsDiffModel), with "show differences
// only".
#pragma once

#include <QStringList>
#include <QTableView>

#include "compare/compare_data.h"

namespace oomlab::ui {

class SettingsDiffModel;

class SettingsDiffTable : public QTableView {
    Q_OBJECT

public:
    explicit SettingsDiffTable(QWidget* parent = nullptr);

    void setRuns(const QVector<CompareRun>& runs);
    void setDifferencesOnly(bool only);
    bool differencesOnly() const { return m_differencesOnly; }

    SettingsDiffModel* diffModel() const { return m_model; }
    QStringList differingKeys() const;
    int visibleRowCount() const;

protected:
    void changeEvent(QEvent* event) override;  // columns refitted to a new text size

private:
    void applyFilter();

    SettingsDiffModel* m_model;
    bool m_differencesOnly = true;
};

}  // namespace oomlab::ui
