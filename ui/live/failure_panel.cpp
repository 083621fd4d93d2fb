#include "live/failure_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

#include "common/formatting.h"
#include "live/run_end_text.h"
#include "plots/series_colors.h"

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
    // What happened and the fixes scroll when the screen is short, so the panel never
    // pushes the plots below their minimum size.
    auto* body = new QWidget;
    m_details = new QLabel(body);
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fixes = new QWidget(body);
    m_fixesLayout = new QVBoxLayout(m_fixes);
    m_fixesLayout->setContentsMargins(0, 0, 0, 0);
    m_fixesLayout->setSpacing(2);
    auto* bodyLayout = new QVBoxLayout(body);
    bodyLayout->setContentsMargins(0, 0, 0, 0);
    bodyLayout->addWidget(m_details);
    bodyLayout->addWidget(m_fixes);
    bodyLayout->addStretch(1);  // room to spare goes under the text, not between its parts
    m_scroll = new QScrollArea(this);
    m_scroll->setObjectName(QStringLiteral("failureScroll"));
    m_scroll->setFrameShape(QFrame::NoFrame);
    m_scroll->setWidgetResizable(true);
    m_scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_scroll->setWidget(body);
    layout->addWidget(m_title);
    layout->addWidget(m_scroll, 1);
    hide();
}

QSize FailurePanel::minimumSizeHint() const {
    // The title and two lines of the body; the rest scrolls.
    const int line = fontMetrics().height();
    const QMargins margins = contentsMargins() + layout()->contentsMargins();
    return {QFrame::minimumSizeHint().width(), m_title->sizeHint().height() + layout()->spacing() +
                                                   3 * line + margins.top() + margins.bottom()};
}

QSize FailurePanel::sizeHint() const {
    // All of it when there is room.
    return {QFrame::sizeHint().width(), textHeight(width())};
}

void FailurePanel::resizeEvent(QResizeEvent* event) {
    QFrame::resizeEvent(event);
    if (event->size().width() != event->oldSize().width()) {
        fitHeightToText();
    }
}

// Never taller than its text at its width: the plots under it keep the rest of the page.
void FailurePanel::fitHeightToText() {
    setMaximumHeight(std::max(minimumSizeHint().height(), textHeight(width())));
    updateGeometry();
}

int FailurePanel::textHeight(int width) const {
    QWidget* body = m_scroll->widget();
    const QMargins outer = contentsMargins() + layout()->contentsMargins();
    const int bodyWidth = std::max(width - outer.left() - outer.right(), 1);
    const int bodyHeight = body->layout()->hasHeightForWidth()
                               ? body->layout()->heightForWidth(bodyWidth)
                               : body->sizeHint().height();
    return m_title->sizeHint().height() + layout()->spacing() + bodyHeight + outer.top() +
           outer.bottom();
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
    palette.setColor(QPalette::WindowText, warningColor());
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
    fitHeightToText();
}

}  // namespace oomlab::ui
