#include "window/status_progress.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

#include "common/formatting.h"

namespace oomlab::ui {

StatusProgress::StatusProgress(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("statusProgress"));
    m_stage = new QLabel(this);
    m_bar = new QProgressBar(this);
    m_bar->setObjectName(QStringLiteral("runProgress"));
    m_bar->setMaximumWidth(260);
    m_bar->setMinimumWidth(160);
    m_bar->setTextVisible(true);
    m_bar->hide();
    m_eta = new QLabel(this);
    m_eta->setObjectName(QStringLiteral("runEta"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stage);
    layout->addWidget(m_bar);
    layout->addWidget(m_eta);
}

QString StatusProgress::etaText() const {
    return m_eta->text();
}

QString StatusProgress::stageText() const {
    return m_stage->text();
}

void StatusProgress::setHeld(bool held) {
    m_held = held;
    if (m_training) {
        showProgress();
    }
}

void StatusProgress::onRunStarted(const QString& name) {
    m_training = false;
    m_stage->setText(tr("Preparing %1…").arg(name.isEmpty() ? tr("the run") : name));
    m_bar->setRange(0, 0);  // busy until the step count is known
    m_bar->show();
    m_eta->clear();
}

void StatusProgress::onPrepare(const QString& stage, double fraction) {
    m_stage->setText(stage);
    m_bar->setRange(0, 100);
    m_bar->setFormat(QStringLiteral("%p %"));
    m_bar->setValue(qRound(fraction * 100));
}

void StatusProgress::onProgress(const TrainProgress& progress) {
    m_last = progress;
    m_training = true;
    showProgress();
}

void StatusProgress::showProgress() {
    const TrainProgress& progress = m_last;
    m_stage->setText(m_held
                         ? tr("Held after step %1, epoch %2").arg(progress.step).arg(progress.epoch)
                         : tr("Training, epoch %1").arg(progress.epoch));
    const int total = static_cast<int>(std::max<std::int64_t>(1, progress.total_steps));
    m_bar->setRange(0, total);
    m_bar->setFormat(tr("step %v / %m"));
    m_bar->setValue(static_cast<int>(std::min<std::int64_t>(progress.step, total)));
    if (m_held) {
        m_eta->setText(tr("F10: one more step · F6: go on"));
    } else {
        m_eta->setText(progress.eta_seconds >= 0
                           ? tr("ETA %1 · elapsed %2")
                                 .arg(formatDuration(progress.eta_seconds),
                                      formatDuration(progress.elapsed_seconds))
                           : tr("elapsed %1").arg(formatDuration(progress.elapsed_seconds)));
    }
}

void StatusProgress::onFinished(const RunEnd& end) {
    m_training = false;
    m_bar->hide();
    m_eta->clear();
    m_stage->setText(end.runId > 0 ? tr("Run %1 %2").arg(end.runId).arg(statusName(end.status()))
                                   : tr("The run could not start"));
}

}  // namespace oomlab::ui

namespace oomlab::ui {

void StatusProgress::clear() {
    m_training = false;
    m_bar->hide();
    m_eta->clear();
    m_stage->clear();
}

}  // namespace oomlab::ui
