#include "compare/memory_diff_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "common/formatting.h"
#include "common/table_sizing.h"
#include "compare/memory_diff_model.h"
#include "oomlab/run/memory_diff.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
MemoryDiffView::MemoryDiffView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("memoryDiffView"));
    m_a = new QComboBox;
    m_a->setObjectName(QStringLiteral("diffRunA"));
    m_b = new QComboBox;
    m_b->setObjectName(QStringLiteral("diffRunB"));
    for (QComboBox* box : {m_a, m_b}) {
        box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        box->setMinimumContentsLength(12);
        connect(box, qOverload<int>(&QComboBox::currentIndexChanged), this, &MemoryDiffView::fill);
    }
    m_summary = new QLabel;
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_model = new MemoryDiffModel(this);
    m_table = new QTableView;
    m_table->setObjectName(QStringLiteral("memoryDiffTable"));
    m_table->setModel(m_model);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    sizeRowsToText(m_table, 3);

    auto* choice = new QHBoxLayout;
    choice->addWidget(new QLabel(tr("A:")));
    choice->addWidget(m_a, 1);
    choice->addWidget(new QLabel(tr("B:")));
    choice->addWidget(m_b, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(choice);
    layout->addWidget(m_summary);
    layout->addWidget(m_table, 1);
}

void MemoryDiffView::setRuns(const QVector<CompareRun>& runs) {
    m_runs = runs;
    for (QComboBox* box : {m_a, m_b}) {
        const QSignalBlocker quiet(box);
        box->clear();
        for (int i = 0; i < runs.size(); ++i) {
            box->addItem(runLabel(runs[i].record));
            box->setItemData(i, seriesColor(i), Qt::ForegroundRole);
        }
    }
    choose(0, runs.size() > 1 ? 1 : 0);
}

void MemoryDiffView::choose(int a, int b) {
    {
        const QSignalBlocker quietA(m_a);
        const QSignalBlocker quietB(m_b);
        m_a->setCurrentIndex(a);
        m_b->setCurrentIndex(b);
    }
    fill();
}

QString MemoryDiffView::summary() const {
    return m_summary->text();
}

void MemoryDiffView::fill() {
    const int a = m_a->currentIndex();
    const int b = m_b->currentIndex();
    if (a < 0 || b < 0 || a >= m_runs.size() || b >= m_runs.size()) {
        m_model->clear();
        m_summary->setText(tr("Compare two runs to see what differs at their peaks."));
        return;
    }
    const MemoryDiff diff = diff_memory(m_runs[a].record.outcome, m_runs[b].record.outcome);
    const std::int64_t change = diff.b_peak - diff.a_peak;
    m_summary->setText(change == 0 ? tr("Both peak at %1.").arg(formatBytes(diff.a_peak))
                                   : tr("B peaks <b>%1 %2</b> than A (%3 against %4).")
                                         .arg(formatBytes(std::llabs(change)),
                                              change > 0 ? tr("higher") : tr("lower"),
                                              formatBytes(diff.b_peak), formatBytes(diff.a_peak)));
    for (const std::string& note : diff.notes) {
        m_summary->setText(m_summary->text() + QStringLiteral("<br>") + qs(note).toHtmlEscaped());
    }
    m_model->setDiff(diff);
    m_table->resizeColumnsToContents();
}

}  // namespace oomlab::ui
