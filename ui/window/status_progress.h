// The status bar's run indicator: the preparation stage, a progress bar over the steps and
// the estimated time left.
#pragma once

#include <QWidget>

#include "common/run_types.h"

class QLabel;
class QProgressBar;

namespace oomlab::ui {

class StatusProgress : public QWidget {
    Q_OBJECT

public:
    explicit StatusProgress(QWidget* parent = nullptr);

    QProgressBar* bar() const { return m_bar; }
    QString etaText() const;
    QString stageText() const;

    void onRunStarted(const QString& name);
    void onPrepare(const QString& stage, double fraction);
    void onProgress(const oomlab::TrainProgress& progress);
    void onFinished(const oomlab::ui::RunEnd& end);
    void clear();
    // Held after a step (Step, F10): said here, in place of the time left, which would count
    // the wait between steps; the run's figures again once it goes on.
    void setHeld(bool held);

private:
    void showProgress();

    oomlab::TrainProgress m_last;
    bool m_training = false;
    bool m_held = false;
    QLabel* m_stage = nullptr;
    QProgressBar* m_bar = nullptr;
    QLabel* m_eta = nullptr;
};

}  // namespace oomlab::ui
