#include "live/failure_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "common/formatting.h"
#include "live/run_end_text.h"

namespace oomlab::ui {

FailurePanel::FailurePanel(QWidget* parent) : QFrame(parent) {
    setObjectName(QStringLiteral("failurePanel"));
    setFrameShape(QFrame::StyledPanel);
    auto* layout = new QVBoxLayout(this);
    m_title = new QLabel(this);
    QFont font = m_title->font();
    font.setBold(true);
    font.setPointSizeF(font.pointSizeF() * 1.15);
    m_title->setFont(font);
    m_details = new QLabel(this);
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fixes = new QWidget(this);
    m_fixesLayout = new QVBoxLayout(m_fixes);
    m_fixesLayout->setContentsMargins(0, 0, 0, 0);
    m_fixesLayout->setSpacing(2);
    layout->addWidget(m_title);
    layout->addWidget(m_details);
    layout->addWidget(m_fixes);
    hide();
}

QWidget* FailurePanel::fixRow(const OomFix& fix) {
    auto* row = new QWidget(m_fixes);
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    QStringList assignments;
    for (const auto& [key, value] : fix.set) {
        assignments << QStringLiteral("%1=%2").arg(qs(key), qs(value));
    }
    auto* text =
        new QLabel(tr("• <b>%1</b> (%2, predicted peak %3): %4")
                       .arg(assignments.join(QStringLiteral(" ")).toHtmlEscaped(),
                            qs(std::string(fix_cost_name(fix.cost))),
                            formatBytes(fix.predicted_peak_bytes), qs(fix.reason).toHtmlEscaped()),
                   row);
    text->setWordWrap(true);
    layout->addWidget(text, 1);
    auto* apply = new QPushButton(tr("Apply"), row);
    apply->setToolTip(
        tr("Set %1 in the experiment panel").arg(assignments.join(QStringLiteral(", "))));
    auto* applyAndRun = new QPushButton(tr("Apply and run"), row);
    const Settings settings = fix.set;
    connect(apply, &QPushButton::clicked, this,
            [this, settings] { emit applyFix(settings, false); });
    connect(applyAndRun, &QPushButton::clicked, this,
            [this, settings] { emit applyFix(settings, true); });
    layout->addWidget(apply);
    layout->addWidget(applyAndRun);
    return row;
}

QString FailurePanel::headline() const {
    return m_title->text();
}
QString FailurePanel::details() const {
    return m_details->text();
}

void FailurePanel::showRunEnd(const RunEnd& end) {
    if (end.status() != RunStatus::Oom && end.status() != RunStatus::Failed) {
        hide();
        return;
    }
    m_title->setText(end.status() == RunStatus::Oom ? tr("⚠ Out of memory")
                                                    : tr("⚠ The run failed"));
    QPalette palette = m_title->palette();
    palette.setColor(QPalette::WindowText, QColor(0xd6, 0x27, 0x28));
    m_title->setPalette(palette);
    m_details->setText(describeRunEnd(end));
    while (QLayoutItem* item = m_fixesLayout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    m_suggestionCount = static_cast<int>(end.fixes.size());
    if (end.status() == RunStatus::Oom) {
        m_fixesLayout->addWidget(new QLabel(end.fixes.empty()
                                                ? tr("<b>No change is predicted to fit</b>")
                                                : tr("<b>What to try</b> (cheapest first; each "
                                                     "is predicted to fit)"),
                                            m_fixes));
    }
    for (const OomFix& fix : end.fixes) {
        m_fixesLayout->addWidget(fixRow(fix));
    }
    show();
}

}  // namespace oomlab::ui
