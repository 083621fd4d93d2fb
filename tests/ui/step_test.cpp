// Run, Pause and Step, driven through the real window's keys: Step (F10) with no run starts
// one and holds it after its first optimizer step, its phases drawn; Step again trains exactly
// one more; Pause (F6) lets it go on to the end.
#include <QSignalSpy>
#include <QStatusBar>
#include <QtTest>

#include <qcustomplot.h>
#include "experiment/experiment_panel.h"
#include "live/live_page.h"
#include "live/phase_plot.h"
#include "live/run_controller.h"
#include "ui_test_support.h"
#include "window/main_menus.h"
#include "window/main_window.h"
#include "window/status_progress.h"

using namespace oomlab;
using namespace oomlab::ui;

namespace {

std::int64_t lastStep(const QSignalSpy& progress) {
    return progress.isEmpty() ? 0 : progress.last().at(0).value<TrainProgress>().step;
}

// The last optimizer-phase sample on the phase plot: where the run's drawing has come to.
double lastOptimizerSample(LivePage* page) {
    const QCPGraph* graph = page->phasePlot()->phase(QStringLiteral("optimizer"));
    return graph && !graph->data()->isEmpty() ? (graph->data()->constEnd() - 1)->key : 0;
}

}  // namespace

class StepTest : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_dir;

private slots:
    void stepTrainsOneStepAtATime() {
        MainWindow window(test::windowOptions(m_dir.filePath("step.sqlite")));
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.experimentPanel()->setConfig(test::tinyConfig(6));
        QSignalSpy progress(window.controller(), &RunController::progressChanged);
        QSignalSpy finished(window.controller(), &RunController::runFinished);

        QTest::keyClick(&window, Qt::Key_F10);
        QTRY_COMPARE_WITH_TIMEOUT(lastStep(progress), std::int64_t(1), 60000);
        QVERIFY(window.controller()->isHeld());
        QVERIFY(window.menus()->pauseAction()->isChecked());
        QTest::qWait(400);  // held: no second step comes
        QCOMPARE(lastStep(progress), std::int64_t(1));
        // Said in the run's indicator, without a time left that would count the wait, and no
        // message of the status bar beside it to run under it.
        StatusProgress* status = window.statusProgress();
        QTRY_VERIFY2(status->stageText().startsWith(QStringLiteral("Held after step 1")),
                     qPrintable(status->stageText()));
        QVERIFY2(status->etaText().contains(QStringLiteral("F10")) &&
                     !status->etaText().contains(QStringLiteral("ETA")),
                 qPrintable(status->etaText()));
        QVERIFY2(window.statusBar()->currentMessage().isEmpty(),
                 qPrintable(window.statusBar()->currentMessage()));
        QTRY_VERIFY(lastOptimizerSample(window.livePage()) > 0);  // step 1's phases drawn
        QVERIFY(lastOptimizerSample(window.livePage()) <= 1);

        QTest::keyClick(&window, Qt::Key_F10);
        QTRY_COMPARE_WITH_TIMEOUT(lastStep(progress), std::int64_t(2), 30000);
        QTest::qWait(400);
        QCOMPARE(lastStep(progress), std::int64_t(2));
        QTRY_VERIFY(lastOptimizerSample(window.livePage()) > 1);
        QCOMPARE(finished.count(), 0);

        QTest::keyClick(&window, Qt::Key_F6);  // Pause again: go on
        QTRY_VERIFY(!status->stageText().startsWith(QStringLiteral("Held")));
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QCOMPARE(lastStep(progress), std::int64_t(6));
        QVERIFY(!window.controller()->isHeld());
        QVERIFY(!window.menus()->pauseAction()->isChecked());
        QVERIFY(!window.menus()->pauseAction()->isEnabled());  // no run to hold
    }
};

OOMLAB_UI_TEST(StepTest)
#include "step_test.moc"
