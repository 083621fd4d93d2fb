// The loss plot: TensorBoard's smoothing of the training loss, and the latest validation
// accuracy written at its point, clear of the loss line.
#include <QtTest>
#include <cmath>

#include "common/formatting.h"
#include "live/loss_plot.h"
#include "metric_rows.h"
#include "plots/loss_smoothing.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;
using oomlab::ui::test::lossRow;
using oomlab::ui::test::sample;

class LossPlotTest : public QObject {
    Q_OBJECT

private slots:
    void smoothingIsTensorBoardsDebiasedAverage() {
        // w = 0.6 on 1, 2, 3: averages 0.4, 1.04, 1.824 divided by 1 - 0.6^n.
        LossSmoother smoother(0.6);
        QCOMPARE(smoother.next(1.0), 1.0);
        QVERIFY(qFuzzyCompare(smoother.next(2.0), 1.625));
        QVERIFY(std::isnan(smoother.next(std::nan(""))));           // shown as it is
        QVERIFY(qFuzzyCompare(smoother.next(3.0), 1.824 / 0.784));  // the NaN was skipped
        LossSmoother off;
        QCOMPARE(off.smooth({3.0, 1.0, 2.0}), (QVector<double>{3.0, 1.0, 2.0}));
    }

    void lossPlotSmoothsAndFadesTheRawLoss() {
        LossPlot plot;
        plot.appendRows({lossRow(1, 1.0), lossRow(2, 2.0)});
        QVERIFY(!plot.smoothedTrainLoss()->visible());
        plot.setSmoothing(0.6);  // existing points are smoothed at once
        QVERIFY(plot.smoothedTrainLoss()->visible());
        QVERIFY(plot.trainLoss()->pen().color().alphaF() < 0.5);
        plot.appendRows({lossRow(3, 3.0)});  // and new ones as they come
        QCOMPARE(plot.smoothedTrainLoss()->dataCount(), 3);
        QVERIFY(qFuzzyCompare((plot.smoothedTrainLoss()->data()->constEnd() - 1)->value,
                              1.824 / 0.784));
        QCOMPARE((plot.trainLoss()->data()->constEnd() - 1)->value, 3.0);
        plot.setSmoothing(5.0);  // clamped, never a flat line
        QCOMPARE(plot.smoothing(), LossSmoother::kMaxWeight);
        plot.setSmoothing(0);
        QVERIFY(!plot.smoothedTrainLoss()->visible());
        QCOMPARE(plot.trainLoss()->pen().color().alphaF(), 1.0);
    }

    // The latest validation accuracy is written at its point, not only in a hover tip.
    void lossPlotWritesTheLatestAccuracy() {
        LossPlot plot;
        QVERIFY(plot.latestAccuracyText().isEmpty());
        const auto eval = [](std::int64_t step, double accuracy) {
            MetricRow row = sample(step, "eval", double(step), 10);
            row.loss = 1.0;
            row.accuracy = accuracy;
            return row;
        };
        plot.appendRows({lossRow(1, 1.0), eval(1, 0.5)});
        QCOMPARE(plot.latestAccuracyText(), formatPercent(0.5));
        plot.appendRows({lossRow(2, 0.8), eval(2, 0.842), lossRow(3, 0.7)});
        QCOMPARE(plot.latestAccuracyText(), QStringLiteral("84.2\u00a0%"));
        plot.reset();
        QVERIFY(plot.latestAccuracyText().isEmpty());
    }

    // The accuracy's label keeps off the loss line: over its point where that is clear, under
    // it where the loss runs just above the point (it sat on the loss at a run's end).
    void theAccuracyLabelKeepsOffTheLossLine() {
        LossPlot plot;
        plot.resize(520, 260);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        std::vector<MetricRow> rows;
        for (int step = 1; step <= 100; ++step) {
            // 2.1, then 1.0, then a plateau at 1.55: half-way up the loss axis.
            rows.push_back(lossRow(step, step <= 10 ? 2.1 : step <= 20 ? 1.0 : 1.55));
        }
        MetricRow eval = sample(100, "eval", 100, 10);
        eval.loss = 2.1;
        eval.accuracy = 0.48;  // just under the plateau: a label over it sat on the loss
        rows.push_back(eval);
        plot.appendRows(rows);
        plot.renderNow();
        const QRectF label = plot.accuracyLabelRect();
        QVERIFY(plot.axisRect()->rect().contains(label.toRect()));
        for (const QCPGraphData& point : *plot.trainLoss()->data()) {
            const QPointF at(plot.xAxis->coordToPixel(point.key),
                             plot.yAxis->coordToPixel(point.value));
            QVERIFY2(!label.contains(at),
                     qPrintable(QStringLiteral("step %1 under the label").arg(point.key)));
        }
    }
};

OOMLAB_UI_TEST(LossPlotTest)
#include "loss_plot_test.moc"
