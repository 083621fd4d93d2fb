// The GUI thread does no long work for training: over three seconds of a run and its stop,
// while metrics arrive, the plots append and replot and progress updates the status bar, the
// work between two ticks of a 10 ms timer is at most one redraw of each live plot, and redraws
// are coalesced. Work counted, not timed: a loaded machine moved a limit on the thread's CPU
// time (50.99 ms against 50), though the work was the same. The thread's CPU time and the
// wall-clock gaps between the ticks are printed beside it, for a person watching.
#include <time.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
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

namespace {

double threadCpuMs() {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e3 + double(now.tv_nsec) / 1e6;
}

}  // namespace

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
        // The GUI thread's own CPU time between two ticks: its work, whatever the load.
        double lastCpu = 0;
        double maxCpuBetweenTicks = 0;
        int ticks = 0;
        qint64 firstTick = -1;
        qint64 lastTick = -1;
        bool stopped = false;
        // How long each redraw of the live plots takes (they are the GUI thread's work), on
        // the clock and in the thread's CPU time.
        qint64 longestReplot = 0;
        double longestReplotCpu = 0;
        int replotsSinceTick = 0;
        int mostReplotsBetweenTicks = 0;
        QElapsedTimer replotClock;
        double replotCpuStart = 0;
        for (ThemedPlot* plot : window.livePage()->plots()) {
            connect(plot, &QCustomPlot::beforeReplot, this, [&] {
                replotClock.start();
                replotCpuStart = threadCpuMs();
            });
            connect(plot, &QCustomPlot::afterReplot, this, [&] {
                if (created.count() > 0 && finished.isEmpty()) {
                    ++replotsSinceTick;
                    longestReplot = std::max(longestReplot, replotClock.elapsed());
                    longestReplotCpu = std::max(longestReplotCpu, threadCpuMs() - replotCpuStart);
                }
            });
        }
        QTimer probe;
        probe.setTimerType(Qt::PreciseTimer);
        probe.setInterval(10);
        connect(&probe, &QTimer::timeout, this, [&] {
            const qint64 now = clock.elapsed();
            const double cpuNow = threadCpuMs();
            if (last >= 0 && created.count() > 0 && finished.isEmpty()) {
                maxGap = std::max(maxGap, now - last);
                maxCpuBetweenTicks = std::max(maxCpuBetweenTicks, cpuNow - lastCpu);
                mostReplotsBetweenTicks = std::max(mostReplotsBetweenTicks, replotsSinceTick);
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
            lastCpu = cpuNow;
            replotsSinceTick = 0;
        });
        clock.start();
        probe.start();
        QVERIFY(window.startRun());
        // A real event loop, as the application runs one (QTest's waits poll and sleep).
        QEventLoop loop;
        connect(window.controller(), &RunController::runFinished, &loop, &QEventLoop::quit);
        QTimer::singleShot(150000, &loop, &QEventLoop::quit);
        if (finished.isEmpty()) {
            loop.exec();
        }
        QCOMPARE(finished.count(), 1);
        probe.stop();
        const double seconds = (lastTick - firstTick) / 1000.0;
        qInfo(
            "training measured for %.1f s (%d timer ticks): most CPU time between two ticks "
            "%.1f ms; longest wall-clock gap of the 10 ms timer %lld ms; longest live-plot replot "
            "%lld ms (%.1f ms of CPU); %d coalesced replots of the loss plot",
            seconds, ticks, maxCpuBetweenTicks, maxGap, longestReplot, longestReplotCpu,
            window.livePage()->lossPlot()->coalescedReplots());
        QVERIFY2(stopped, "the run ended before it was measured for three seconds");
        // Each replot lies between two ticks: the measure sees the work done there.
        QVERIFY2(maxCpuBetweenTicks >= longestReplotCpu,
                 "the CPU time between ticks misses the replots'");
        const int plots = int(window.livePage()->plots().size());
        QVERIFY2(mostReplotsBetweenTicks <= plots,
                 qPrintable(QStringLiteral("%1 redraws between two ticks, of %2 live plots")
                                .arg(mostReplotsBetweenTicks)
                                .arg(plots)));
        // Redraws were coalesced: far fewer replots than metric batches would have caused.
        QVERIFY(window.livePage()->lossPlot()->coalescedReplots() <=
                int(seconds * 1000 / ThemedPlot::kReplotIntervalMs) + 5);
    }
};

OOMLAB_UI_TEST_MAIN(EventLoopStallTest)
#include "event_loop_stall_test.moc"
