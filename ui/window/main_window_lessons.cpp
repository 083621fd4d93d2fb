// The main window's lessons: a lesson's window, its runs, and what they showed.
#include <QStatusBar>

#include "common/formatting.h"
#include "compare/compare_page.h"
#include "experiment/config_form.h"
#include "experiment/experiment_panel.h"
#include "lessons/lesson_flow.h"
#include "lessons/lesson_text.h"
#include "live/run_controller.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/lessons/lesson.h"
#include "window/main_window.h"

namespace oomlab::ui {

void MainWindow::runLesson(const Lesson& lesson, RunController::Pace pace,
                           const LessonAnswer& prediction) {
    if (m_controller->isRunning()) {
        statusBar()->showMessage(tr("A run is going; stop it first (Esc)."), 5000);
        return;
    }
    if (!haveDatabase()) {
        return;
    }
    m_paceBeforeLesson = m_controller->pace();
    std::int64_t steps = 0;
    for (const LessonRun& run : lesson.runs) {
        steps += lesson_config(lesson, run).train.max_steps;
    }
    m_controller->setLessonPace(pace, steps);
    showPage(LiveTab);
    if (prediction.run != LessonAnswer::kNotChosen) {
        m_predictedLesson = PredictedLesson{lesson, prediction, 0};
    }
    if (!m_controller->startLesson(lesson)) {
        m_predictedLesson.reset();
    }
}

LessonFlow* MainWindow::openLesson(const Lesson& lesson) {
    if (m_lessonFlow) {
        m_lessonFlow->close();
    }
    auto* flow = new LessonFlow(lesson, this);
    flow->setAttribute(Qt::WA_DeleteOnClose);
    // The lesson's view of the form while its window is open; the whole form after.
    QStringList hidden;
    for (const std::string& key : lesson.hide) {
        hidden << qs(key);
    }
    // A locked setting shows what the lesson trains with, not the user's own value.
    QHash<QString, QStringList> locked;
    for (const std::string& key : lesson.lock) {
        QStringList& values = locked[qs(key)];
        for (const LessonRun& run : lesson.runs) {
            const QString value = qs(get_config_value(lesson_config(lesson, run), key));
            if (!values.contains(value)) {
                values << value;
            }
        }
    }
    m_panel->form()->setLessonView(hidden, locked);
    connect(flow, &QDialog::finished, m_panel->form(),
            [form = m_panel->form()] { form->setLessonView({}, {}); });
    connect(flow, &LessonFlow::runRequested, this, [this, flow](RunController::Pace pace) {
        runLesson(flow->lesson(), pace, flow->prediction());
    });
    m_lessonFlow = flow;
    flow->show();
    return flow;
}

void MainWindow::onLessonFinished(const LessonEnd& end) {
    m_controller->setPace(m_paceBeforeLesson);
    // The last run's end went with the controller's runFinished (onRunFinished); the others'.
    QVector<qint64> others = end.runIds;
    others.removeAll(end.last.runId);
    sendRunEnds(others);
    m_predictedLesson.reset();
    if (end.runIds.size() >= 2) {
        // Behind a lesson's window the comparison waits for its claims to be revealed there;
        // it says them once they are, or once the window is closed.
        LessonEnd untold = end;
        if (m_lessonFlow) {
            untold.checks.clear();
            untold.holds.clear();
            const auto tell = [this, end] { m_compare->setNote(lessonEndHtml(end), end.runIds); };
            connect(m_lessonFlow, &LessonFlow::revealedAll, m_compare, tell);
            connect(m_lessonFlow, &QDialog::finished, m_compare, tell);
        }
        m_compare->setNote(lessonEndHtml(untold), end.runIds);
        compareRuns(end.runIds);
    }
    if (m_lessonFlow) {
        m_lessonFlow->onLessonFinished(end);
    }
    if (end.runIds.size() < 2 && !end.error.isEmpty()) {
        statusBar()->showMessage(tr("Lesson %1: %2").arg(end.title, end.error), 10000);
    }
}

}  // namespace oomlab::ui
