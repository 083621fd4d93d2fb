// The GUI never blocks on training: over three seconds of a run and its stop, the GUI
// thread's event loop never goes more than 50 ms without serving a 10 ms timer, while
// metrics arrive, the plots append and replot, and progress updates the status bar.
#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "live/live_page.h"
#include "live/loss_plot.h"
#include "live/run_controller.h"
#include "plots/themed_plot.h"
#include "ui_test_support.h"
#include "window/main_window.h"

using namespace oomlab;
using namespace oomlab::ui;

class EventLoopStallTest : public QObject {
    Q_OBJECT

private slots:
    void eventLoopNeverStallsDuringARun() {
        QTemporaryDir dir;
        // More epochs than any machine trains in three seconds; the probe stops the run then,
        // so the measured time does not depend on how fast this machine trains.
        constexpr qint64 kMeasureMs = 3000;
        ExperimentConfig config = test::tinyConfig(0);
        config.train.max_steps = 0;
        config.train.epochs = 1000;
        config.eval.every = 100;
        MainWindow window(test::windowOptions(dir.filePath("runs.sqlite"), config));
        window.resize(1400, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));

        QSignalSpy created(window.controller(), &RunController::runCreated);
        QSignalSpy finished(window.controller(), &RunController::runFinished);
        QElapsedTimer clock;
        qint64 last = -1;
        qint64 maxGap = 0;
        int ticks = 0;
        qint64 firstTick = -1;
        qint64 lastTick = -1;
        bool stopped = false;
        // How long each redraw of the live plots takes (they are the GUI thread's work).
        qint64 longestReplot = 0;
        QElapsedTimer replotClock;
        for (ThemedPlot* plot : window.livePage()->plots()) {
            connect(plot, &QCustomPlot::beforeReplot, this, [&] { replotClock.start(); });
            connect(plot, &QCustomPlot::afterReplot, this,
                    [&] { longestReplot = std::max(longestReplot, replotClock.elapsed()); });
        }
        QTimer probe;
        probe.setTimerType(Qt::PreciseTimer);
        probe.setInterval(10);
        connect(&probe, &QTimer::timeout, this, [&] {
            const qint64 now = clock.elapsed();
            if (last >= 0 && created.count() > 0 && finished.isEmpty()) {
                maxGap = std::max(maxGap, now - last);
                if (firstTick < 0) {
                    firstTick = last;
                }
                lastTick = now;
                ++ticks;
                if (lastTick - firstTick >= kMeasureMs && !stopped) {
                    stopped = true;
                    window.controller()->stop();
                }
            }
            last = now;
        });
        clock.start();
        probe.start();
        QVERIFY(window.startRun());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 150000);
        probe.stop();
        const double seconds = (lastTick - firstTick) / 1000.0;
        qInfo(
            "training measured for %.1f s (%d timer ticks): longest event-loop gap %lld ms; "
            "longest live-plot replot %lld ms; %d coalesced replots of the loss plot",
            seconds, ticks, maxGap, longestReplot,
            window.livePage()->lossPlot()->coalescedReplots());
        QVERIFY2(stopped, "the run ended before it was measured for three seconds");
        QVERIFY2(maxGap < 50, qPrintable(QStringLiteral("event loop stalled %1 ms").arg(maxGap)));
        // Redraws were coalesced: far fewer replots than metric batches would have caused.
        QVERIFY(window.livePage()->lossPlot()->coalescedReplots() <=
                int(seconds * 1000 / ThemedPlot::kReplotIntervalMs) + 5);
    }
};

OOMLAB_UI_TEST_MAIN(EventLoopStallTest)
#include "event_loop_stall_test.moc"
