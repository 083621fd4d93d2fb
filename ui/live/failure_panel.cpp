#include "live/failure_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "live/oom_advice.h"

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

QString FailurePanel::headline() const {
    return m_title->text();
}
QString FailurePanel::details() const {
    return m_details->text();
}

void FailurePanel::showRunEnd(const RunEnd& end) {
    if (end.status != RunStatus::Oom && end.status != RunStatus::Failed) {
        hide();
        return;
    }
    m_title->setText(end.status == RunStatus::Oom ? tr("⚠ Out of memory") : tr("⚠ The run failed"));
    QPalette palette = m_title->palette();
    palette.setColor(QPalette::WindowText, QColor(0xd6, 0x27, 0x28));
    m_title->setPalette(palette);
    m_details->setText(describeRunEnd(end));
    while (QLayoutItem* item = m_fixesLayout->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    const QVector<Suggestion> fixes = suggestFixes(end);
    m_suggestionCount = fixes.size();
    if (!fixes.isEmpty()) {
        m_fixesLayout->addWidget(new QLabel(tr("<b>What to try</b>"), m_fixes));
    }
    for (const Suggestion& fix : fixes) {
        auto* row = new QWidget(m_fixes);
        auto* rowLayout = new QHBoxLayout(row);
        rowLayout->setContentsMargins(0, 0, 0, 0);
        auto* text = new QLabel(QStringLiteral("• ") + fix.text, row);
        text->setWordWrap(true);
        rowLayout->addWidget(text, 1);
        if (!fix.key.isEmpty()) {
            auto* apply = new QPushButton(QStringLiteral("%1=%2").arg(fix.key, fix.value), row);
            apply->setToolTip(tr("Set %1 to %2 in the experiment panel").arg(fix.key, fix.value));
            const QString key = fix.key;
            const QString value = fix.value;
            connect(apply, &QPushButton::clicked, this,
                    [this, key, value] { emit applySetting(key, value); });
            rowLayout->addWidget(apply);
        }
        m_fixesLayout->addWidget(row);
    }
    show();
}

}  // namespace oomlab::ui
