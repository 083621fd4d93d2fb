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

    void onRunStarted(const QString& name);
    void onPrepare(const QString& stage, double fraction);
    void onProgress(const oomlab::TrainProgress& progress);
    void onFinished(const oomlab::ui::RunEnd& end);
    void clear();

private:
    QLabel* m_stage = nullptr;
    QProgressBar* m_bar = nullptr;
    QLabel* m_eta = nullptr;
};

}  // namespace oomlab::ui
