// "Why does B use 300 MiB more?": two of the compared runs at their peaks, per category and
// per module, bytes in A, in B and the difference, largest difference first.
#pragma once

#include <QVector>
#include <QWidget>

#include "compare/compare_data.h"

class QComboBox;
class QLabel;
class QTableView;

namespace oomlab::ui {

class MemoryDiffModel;

class MemoryDiffView : public QWidget {
    Q_OBJECT

public:
    explicit MemoryDiffView(QWidget* parent = nullptr);

    // A is the first run, B the second; both can be changed in the view.
    void setRuns(const QVector<CompareRun>& runs);
    // Picks the runs compared (indices into the runs set).
    void choose(int a, int b);

    MemoryDiffModel* model() const { return m_model; }
    QString summary() const;

private:
    void fill();

    QComboBox* m_a = nullptr;
    QComboBox* m_b = nullptr;
    QLabel* m_summary = nullptr;
    MemoryDiffModel* m_model = nullptr;
    QTableView* m_table = nullptr;
    QVector<CompareRun> m_runs;
};

}  // namespace oomlab::ui
