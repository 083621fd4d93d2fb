// The plot building blocks: coalesced redraws, following the data until the user zooms,
// the system palette, legend toggling, memory axes, the stacked bars (breakdown, modules,
// staircase) and the live plots' handling of metric batches (sorted appends, the per-phase
// placement, OOM markers). The loss plot's own: loss_plot_test.cpp.
#include <QApplication>
#include <QToolTip>

#include <QtTest>
#include <cmath>

#include "common/formatting.h"
#include "compare/compare_plots.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "live/phase_plot.h"
#include "metric_rows.h"
#include "plots/breakdown_chart.h"
#include "plots/graph_thinning.h"
#include "plots/memory_axis.h"
#include "plots/module_chart.h"
#include "plots/themed_plot.h"
#include "ui_test_support.h"

using namespace oomlab;
using namespace oomlab::ui;
using oomlab::ui::test::lossRow;
using oomlab::ui::test::sample;

namespace {

// The pixel at which `plot` draws (key, value) of `graph`.
QPointF pixelOf(const QCPGraph* graph, double key, double value) {
    return {graph->keyAxis()->coordToPixel(key), graph->valueAxis()->coordToPixel(value)};
}

}  // namespace

class PlotsTest : public QObject {
    Q_OBJECT

private slots:
    void redrawsAreCoalesced() {
        ThemedPlot plot;
        plot.show();
        QCOMPARE(plot.coalescedReplots(), 0);
        for (int i = 0; i < 100; ++i) {
            plot.requestReplot();
        }
        QTRY_COMPARE(plot.coalescedReplots(), 1);
        QTest::qWait(3 * ThemedPlot::kReplotIntervalMs);
        QCOMPARE(plot.coalescedReplots(), 1);  // nothing more was asked for
    }

    void followsThePaletteAndTheData() {
        ThemedPlot plot;
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        plot.setPalette(dark);
        QCOMPARE(plot.xAxis->tickLabelColor(), QColor(230, 230, 230));
        QCOMPARE(plot.xAxis->basePen().color(), QColor(230, 230, 230));
        QCOMPARE(plot.axisRect()->backgroundBrush().color(), QColor(30, 30, 30));
        QSignalSpy follow(&plot, &ThemedPlot::followDataChanged);
        plot.setFollowData(false);
        QCOMPARE(follow.count(), 1);
        QVERIFY(!plot.followsData());
    }

    void memoryPlotAppendsStepsAndMarksOom() {
        MemoryPlot plot;
        plot.reset(64LL << 20);
        QVERIFY(plot.capVisible());
        QCOMPARE(plot.capMiB(), 64.0);
        plot.appendRows(
            {sample(1, "batch", 1, 3), sample(1, "step", 2, 10), sample(2, "step", 4, 12)});
        plot.appendRows({sample(3, "step", 6, 11)});
        QCOMPARE(plot.allocated()->dataCount(), 3);  // step rows only
        QCOMPARE(plot.peak()->dataCount(), 3);
        QCOMPARE((plot.allocated()->data()->constEnd() - 1)->value, 11.0);
        QCOMPARE((plot.peak()->data()->constBegin())->value, 15.0);
        // Outside the allocator: device used (500 MiB) minus reserved (allocated + 2).
        QCOMPARE(plot.outsideAllocator()->dataCount(), 3);
        QCOMPARE((plot.outsideAllocator()->data()->constEnd() - 1)->value, 500.0 - 13.0);
        QVERIFY(plot.outsideAllocator()->visible());
        plot.markEvent({4, "oom", "out of memory at step 4 during forward"});
        plot.markEvent({4, "eval", "not marked"});
        QCOMPARE(plot.markers().markerCount(), 1);
        QCOMPARE(plot.markers().markerX(0), 4.0);
        // On the CPU, device used is the process RSS: named so and hidden until clicked.
        plot.setCpuDevice(true);
        QVERIFY(!plot.deviceUsed()->visible());
        QCOMPARE(plot.deviceUsed()->name(), QStringLiteral("process RSS"));
        QVERIFY(!plot.outsideAllocator()->visible());
        plot.setSeriesVisible(plot.deviceUsed(), true);
        QVERIFY(plot.deviceUsed()->visible());
        // The axes follow the data (and the cap) after a coalesced redraw.
        QTRY_VERIFY(plot.coalescedReplots() > 0);
        QVERIFY(plot.yAxis->range().upper >= 500.0);
        QVERIFY(plot.xAxis->range().upper >= 4.0);
    }

    // A long run as it trains: 200,000 steps in batches, as the live page appends them. Each
    // graph stays within its bound, and the one spike and the last step are still drawn.
    void aLongLiveRunStaysDrawableWithItsPeak() {
        MemoryPlot plot;
        plot.reset(0);
        for (std::int64_t batch = 0; batch < 200; ++batch) {
            std::vector<MetricRow> rows;
            for (std::int64_t i = 1; i <= 1000; ++i) {
                const std::int64_t step = batch * 1000 + i;
                rows.push_back(
                    sample(step, "step", double(step), step == 123457 ? 900 : 10 + step % 5));
            }
            plot.appendRows(rows);
            if (batch % 20 == 0) {
                plot.renderNow();  // as the coalesced redraws do while it trains
            }
        }
        plot.renderNow();
        QVERIFY2(plot.allocated()->dataCount() <= kMostGraphPoints,
                 qPrintable(QString::number(plot.allocated()->dataCount())));
        double most = 0;
        for (const QCPGraphData& point : *plot.allocated()->data()) {
            most = std::max(most, point.value);
        }
        QCOMPARE(most, 900.0);
        QCOMPARE((plot.allocated()->data()->constEnd() - 1)->key, 200000.0);
    }

    // The cap's label is drawn whole inside the axes and clear of an OOM marker at the run's
    // last step, also when the peak touches the cap (it was cut at the top and overlapped the
    // marker's "OOM"), on a plot of usual height and on a very low one.
    void memoryPlotsCapLabelIsWholeAndClearOfTheOomMarker() {
        for (const int height : {260, 130}) {
            MemoryPlot plot;
            plot.resize(520, height);
            plot.show();
            QVERIFY(QTest::qWaitForWindowExposed(&plot));
            plot.reset(12LL << 20);
            plot.setCpuDevice(true);  // the process RSS hidden: the cap is near the top
            plot.appendRows({sample(1, "step", 2, 5), sample(2, "step", 4, 7)});  // peak 12 MiB
            plot.markEvent({3, "oom", "out of memory at step 3 during backward"});
            QTRY_VERIFY(plot.coalescedReplots() > 0);
            plot.replot(QCustomPlot::rpImmediateRefresh);
            const QRectF axes = plot.axisRect()->rect();
            const QRectF cap = plot.capLabelRect();
            const QRectF oom = plot.markers().markerLabelRect(0);
            const auto where = [](const QRectF& r) {
                return QStringLiteral("%1,%2 %3x%4")
                    .arg(r.x())
                    .arg(r.y())
                    .arg(r.width())
                    .arg(r.height());
            };
            const QString state = QStringLiteral("height %1: axes %2, cap label %3, OOM label %4")
                                      .arg(height)
                                      .arg(where(axes), where(cap), where(oom));
            QVERIFY2(axes.adjusted(-1, -1, 1, 1).contains(cap), qPrintable(state));
            QVERIFY2(!cap.intersects(oom), qPrintable(state));
            QVERIFY2(cap.height() >= plot.fontMetrics().height(), qPrintable(state));
        }
    }

    // An OOM at the last step of a run whose memory climbs to it: the marker's label goes down
    // its line to where it covers none of the lines (at the top it sat on the device's used
    // memory, the highest line).
    void anOomMarkersLabelCoversNoCurve() {
        MemoryPlot plot;
        plot.resize(520, 260);
        plot.show();
        QVERIFY(QTest::qWaitForWindowExposed(&plot));
        plot.reset(0);
        std::vector<MetricRow> rows;
        for (std::int64_t step = 1; step <= 40; ++step) {
            rows.push_back(sample(step, "step", double(step), step));
        }
        plot.appendRows(rows);
        plot.markEvent({40, "oom", "out of memory at step 40 during backward"});
        QTRY_VERIFY(plot.coalescedReplots() > 0);
        plot.replot(QCustomPlot::rpImmediateRefresh);
        const QRectF oom = plot.markers().markerLabelRect(0);
        QVERIFY(QRectF(plot.axisRect()->rect()).adjusted(-1, -1, 1, 1).contains(oom));
        QVector<const QCPGraph*> lines;
        for (int i = 0; i < plot.graphCount(); ++i) {
            lines << plot.graph(i);
        }
        QCOMPARE(PlotMarkers::linesThrough(oom, lines), 0);
    }

    // A run out of memory at its first step: the marker's label is beside its line inside
    // the axes (left of it, it was cut at the axes' edge) and clear of the cap's, in large
    // text too.
    void anOomAtTheFirstStepIsLabelledInsideTheAxes() {
        for (const int pointSize : {9, 16}) {
            MemoryPlot plot;
            QFont font = plot.font();
            font.setPointSize(pointSize);
            plot.setFont(font);
            plot.resize(520, 260);
            plot.show();
            QVERIFY(QTest::qWaitForWindowExposed(&plot));
            plot.reset(12LL << 20);
            plot.setCpuDevice(true);
            plot.appendRows({sample(1, "step", 10, 11)});
            plot.markEvent({1, "oom", "out of memory at step 1 during forward"});
            plot.replot(QCustomPlot::rpImmediateRefresh);
            const QRectF axes = plot.axisRect()->rect();
            const QRectF oom = plot.markers().markerLabelRect(0);
            QVERIFY2(oom.left() >= axes.left() && oom.right() <= axes.right() + 1,
                     qPrintable(QStringLiteral("point size %1: OOM label %2..%3, axes %4..%5")
                                    .arg(pointSize)
                                    .arg(oom.left())
                                    .arg(oom.right())
                                    .arg(axes.left())
                                    .arg(axes.right())));
            QVERIFY(!oom.intersects(plot.capLabelRect()));
        }
    }

    // A data-parallel run: rank 0's rows make the series, each other rank its own step peak;
    // a new run starts without them. The comparison does the same per run.
    void memoryOfEveryRankIsPlotted() {
        MemoryPlot plot;
        plot.reset(0);
        MetricRow rank1 = sample(1, "step", 2, 20);
        rank1.rank = 1;
        plot.appendRows({sample(1, "step", 2, 10), rank1, sample(2, "step", 4, 12)});
        QCOMPARE(plot.peak()->dataCount(), 2);
        QVERIFY(plot.rankPeak(1) != nullptr);
        QVERIFY(plot.rankPeak(2) == nullptr);
        QCOMPARE(plot.rankPeak(1)->dataCount(), 1);
        QCOMPARE(plot.rankPeak(1)->data()->constBegin()->value, 25.0);
        QCOMPARE(plot.rankPeak(1)->name(), QStringLiteral("step peak, rank 1"));
        plot.reset(0);
        QVERIFY(plot.rankPeak(1) == nullptr);
        QCOMPARE(plot.graphCount(), 5);  // allocated, reserved, peak, device used, outside

        ComparePlot compare(ComparePlot::Quantity::PeakMemory);
        CompareRun run;
        run.record.id = 7;
        run.record.name = "data parallel";
        run.metrics = {sample(1, "step", 2, 10), rank1};
        compare.setRuns({run});
        // Rank 0's line and rank 1's, dotted; one legend entry says what dotted lines are.
        QCOMPARE(compare.graphCount(), 3);
        QCOMPARE(compare.graph(1)->dataCount(), 1);
        QVERIFY(compare.graph(1)->name().endsWith(QStringLiteral("(rank 1)")));
        QVERIFY(!compare.legend->hasItemWithPlottable(compare.graph(1)));
        QCOMPARE(compare.graph(2)->name(), QStringLiteral("other ranks (dotted)"));
        QCOMPARE(compare.legend->itemCount(), 2);
        compare.setQuantity(ComparePlot::Quantity::Loss);
        for (int i = 0; i < compare.graphCount(); ++i) {
            QVERIFY(!compare.graph(i)->name().contains(QStringLiteral("rank")));
        }
    }

    // The compare view's memory plot draws each cap of its runs once, naming the runs it
    // holds for when not all have it; the loss plot has none.
    void compareMemoryShowsTheRunsCaps() {
        const auto run = [](std::int64_t id, std::int64_t capMb) {
            CompareRun compared;
            compared.record.id = id;
            compared.record.name = "run " + std::to_string(id);
            compared.config.memory.cap_mb = capMb;
            compared.configRead = true;
            compared.metrics = {sample(1, "step", 2, 5), sample(2, "step", 4, 6)};
            return compared;
        };
        ComparePlot compare(ComparePlot::Quantity::PeakMemory);
        compare.setRuns({run(1, 16), run(2, 16), run(3, 0)});
        QCOMPARE(compare.markers().levelCount(), 1);
        QCOMPARE(compare.markers().levelY(0), 16.0);
        QCOMPARE(compare.markers().levelText(0), QStringLiteral("cap 16.0 MiB (runs 1, 2)"));
        QVERIFY(compare.yAxis->range().upper >= 16.0);  // in view over peaks of 11 MiB
        compare.setRuns({run(1, 16), run(2, 32)});
        QCOMPARE(compare.markers().levelCount(), 2);
        QCOMPARE(compare.markers().levelText(0), QStringLiteral("cap 16.0 MiB (run 1)"));
        compare.setRuns({run(1, 16), run(2, 16)});
        QCOMPARE(compare.markers().levelText(0), QStringLiteral("cap 16.0 MiB"));
        compare.setQuantity(ComparePlot::Quantity::Loss);
        QCOMPARE(compare.markers().levelCount(), 0);
    }

    // A run out of memory in its first step has no step's row: it is a dot where it was
    // last measured, with its OOM marker, on the memory plot; the loss plot marks it too.
    void aRunOutOfMemoryInItsFirstStepIsShown() {
        CompareRun completed;
        completed.record.id = 1;
        completed.record.name = "fits";
        completed.metrics = {sample(1, "step", 2, 5), sample(2, "step", 4, 6)};
        CompareRun failed;
        failed.record.id = 2;
        failed.record.name = "out of memory";
        failed.record.outcome.status = RunStatus::Oom;
        failed.metrics = {sample(1, "batch", 1, 3), sample(1, "forward", 2, 40)};
        ComparePlot compare(ComparePlot::Quantity::PeakMemory);
        compare.setRuns({completed, failed});
        QCOMPARE(compare.runGraph(1)->dataCount(), 1);
        QCOMPARE(compare.runGraph(1)->data()->constBegin()->value, 45.0);  // forward's peak
        QVERIFY(compare.runGraph(1)->scatterStyle().shape() != QCPScatterStyle::ssNone);
        QCOMPARE(compare.markers().markerCount(), 1);
        QVERIFY(compare.yAxis->range().upper >= 45.0);
        compare.setQuantity(ComparePlot::Quantity::Loss);
        QCOMPARE(compare.markers().markerCount(), 1);
    }

    void phasesArePlacedInsideTheirStep() {
        PhasePlot plot;
        // Step 1 runs from 0 to 10 ms: batch at 2, forward at 5, backward at 8.
        plot.appendRows({sample(1, "batch", 2, 4), sample(1, "forward", 5, 9)});
        QCOMPARE(plot.allocated()->dataCount(), 0);  // waits for the step's end
        plot.appendRows(
            {sample(1, "backward", 8, 7), sample(1, "step", 10, 5), sample(2, "batch", 12, 6)});
        QCOMPARE(plot.allocated()->dataCount(), 4);  // 3 phases + the step end
        QCOMPARE(plot.phase(QStringLiteral("forward"))->dataCount(), 1);
        QCOMPARE(plot.phase(QStringLiteral("forward"))->data()->constBegin()->key, 0.5);
        QCOMPARE(plot.phase(QStringLiteral("backward"))->data()->constBegin()->key, 0.8);
        QCOMPARE((plot.allocated()->data()->constEnd() - 1)->key, 1.0);
        // The run ends inside step 2 (an OOM): its samples are placed and the end marked.
        plot.finish(QStringLiteral("OOM"));
        QCOMPARE(plot.phase(QStringLiteral("batch"))->dataCount(), 2);
        QCOMPARE(plot.markers().markerCount(), 1);
        QVERIFY(plot.markers().markerX(0) > 1.0 && plot.markers().markerX(0) < 2.0);
    }

    // A step held before it ran (Step, F10 held down) keeps its sawtooth: the wait counts for
    // no more than the step itself (its phases were squeezed against its end, a spike).
    void aStepHeldBeforeItRanKeepsItsSawtooth() {
        PhasePlot plot;
        plot.appendRows({sample(1, "step", 10, 5), sample(2, "batch", 10010, 6),
                         sample(2, "forward", 10015, 9), sample(2, "backward", 10025, 7),
                         sample(2, "step", 10030, 5)});
        const auto at = [&](const char* phase) {
            return plot.phase(QString::fromLatin1(phase))->data()->constBegin()->key;
        };
        QCOMPARE(at("batch"), 1.5);
        QCOMPARE(at("forward"), 1.625);
        QCOMPARE(at("backward"), 1.875);
    }

    // Steps the engine did not sample (between the first steps and every 50th) are a gap in
    // the lines, not a straight line across them; consecutive steps stay joined.
    void stepsNotSampledAreAGap() {
        PhasePlot plot;
        plot.appendRows({sample(1, "step", 10, 5), sample(2, "step", 20, 6),
                         sample(50, "batch", 500, 4), sample(50, "step", 510, 7)});
        const QCPGraphDataContainer& line = *plot.allocated()->data();
        QCOMPARE(line.size(), 5);  // steps 1 and 2, the gap, step 50's batch and end
        QVERIFY(!qIsNaN(line.at(1)->value));
        QVERIFY(qIsNaN(line.at(2)->value));
        QVERIFY2(line.at(2)->key > 2.0 && line.at(2)->key < 49.0,
                 qPrintable(QString::number(line.at(2)->key)));
        QCOMPARE(line.at(3)->value, 4.0);
    }

    // Memory axes read in GiB from 10 GiB up (a GPU's 140 GiB is "140", not "143360" or
    // "1.4·10⁵"), in MiB below; an axis made plain again reads its numbers as they are.
    void largeMemoryReadsInGiB() {
        ThemedPlot plot;
        plot.resize(400, 300);
        useMemoryAxis(plot.yAxis);
        plot.yAxis->setRange(0, 150 * 1024);
        plot.replot();
        QCOMPARE(plot.yAxis->label(), QStringLiteral("GiB"));
        const QVector<QString> labels = plot.yAxis->tickVectorLabels();
        QVERIFY(!labels.isEmpty());
        for (const QString& label : labels) {
            bool number = false;
            const double gib = label.toDouble(&number);
            QVERIFY2(number && gib >= 0 && gib <= 150 && std::fmod(gib, 0.5) == 0,
                     qPrintable(label));
        }
        plot.yAxis->setRange(0, 500);
        plot.replot();
        QCOMPARE(plot.yAxis->label(), QStringLiteral("MiB"));
        QVERIFY(plot.yAxis->tickVectorLabels().contains(QStringLiteral("500")) ||
                plot.yAxis->tickVectorLabels().contains(QStringLiteral("400")));
        usePlainAxis(plot.yAxis, QStringLiteral("loss"));
        plot.yAxis->setRange(0, 150 * 1024);
        plot.replot();
        QCOMPARE(plot.yAxis->label(), QStringLiteral("loss"));
    }

    void breakdownBarsStack() {
        BreakdownChart chart(Qt::Vertical);
        MemoryBreakdown a;
        a.embedding_table = 10 << 20;
        a.activations = 30 << 20;
        MemoryBreakdown b;
        b.gradients = 5 << 20;
        chart.setBars({{QStringLiteral("#1"), a}, {QStringLiteral("#2"), b}}, 64LL << 20);
        QCOMPARE(chart.barCount(), 2);
        QCOMPARE(chart.valueMiB(0, 0), 10.0);
        QCOMPARE(chart.valueMiB(0, 5), 30.0);
        QCOMPARE(chart.valueMiB(1, 2), 5.0);
        QCOMPARE(chart.valueMiB(1, 0), 0.0);
        QVERIFY(chart.yAxis->range().upper >= 64.0);  // the cap is in view
    }

    void moduleBarsReadTopDownAndSkipEmptyModules() {
        ModuleChart chart;
        chart.resize(400, 300);
        std::vector<ModuleMemory> modules(3);
        modules[0] = {"embeddings", 40 << 20, 0, 0, 1 << 20};
        modules[1] = {"pooling", 0, 0, 0, 0};          // held nothing at the peak: no bar
        modules[2] = {"loss", 0, 0, 0, std::nullopt};  // not measured counts nothing
        modules.push_back({"output", 2 << 20, 2 << 20, 4 << 20, 3 << 20});
        modules.push_back({"optimizer", 0, 0, 0, 2 << 20});  // the update's temporaries
        chart.setModules(modules);
        QCOMPARE(chart.barCount(), 3);
        QCOMPARE(chart.valueMiB(2, ModuleChart::Activations), 0.0);
        QCOMPARE(chart.valueMiB(2, ModuleChart::Temporaries), 2.0);
        QCOMPARE(chart.valueMiB(1, ModuleChart::Temporaries), 0.0);
        QCOMPARE(chart.valueMiB(0, ModuleChart::Parameters), 40.0);
        QCOMPARE(chart.valueMiB(0, ModuleChart::Activations), 1.0);
        QCOMPARE(chart.valueMiB(1, ModuleChart::OptimizerState), 4.0);
        QCOMPARE(chart.valueMiB(1, ModuleChart::Activations), 3.0);
        // Forward order from the top: the first module's bar is above the second's.
        chart.renderNow();
        QVERIFY(chart.yAxis->coordToPixel(1) < chart.yAxis->coordToPixel(2));
        const QString hover =
            chart.valuesAt(QPointF(chart.xAxis->coordToPixel(1), chart.yAxis->coordToPixel(2)));
        QVERIFY2(hover.startsWith(QStringLiteral("<b>output</b> · 11.0 MiB")), qPrintable(hover));
    }

    void staircaseSplitsEachStageIntoHeldAndAdded() {
        StaircaseChart chart;
        chart.setStages({{"empty", 0, std::nullopt},
                         {"weights", 10 << 20, std::nullopt},
                         {"first step peak", 25 << 20, std::nullopt},
                         {"steady state", 20 << 20, std::nullopt}},
                        32LL << 20);
        QCOMPARE(chart.barCount(), 4);
        QCOMPARE(chart.valueMiB(1, StaircaseChart::Before), 0.0);
        QCOMPARE(chart.valueMiB(1, StaircaseChart::Added), 10.0);
        QCOMPARE(chart.valueMiB(2, StaircaseChart::Before), 10.0);
        QCOMPARE(chart.valueMiB(2, StaircaseChart::Added), 15.0);
        // Steady state below the first peak: all of it was held before, nothing added.
        QCOMPARE(chart.valueMiB(3, StaircaseChart::Before), 20.0);
        QCOMPARE(chart.valueMiB(3, StaircaseChart::Added), 0.0);
        QVERIFY(chart.yAxis->range().upper >= 32.0);
    }

    void hoverNamesTheValuesUnderTheCursor() {
        LossPlot loss;
        loss.resize(640, 400);
        loss.appendRows({lossRow(1, 2.0), lossRow(2, 1.5), lossRow(3, 1.25)});
        loss.renderNow();
        const QString atTwo = loss.valuesAt(pixelOf(loss.trainLoss(), 2, 1.5));
        QVERIFY2(atTwo.startsWith(QStringLiteral("<b>optimizer step 2</b>")), qPrintable(atTwo));
        QVERIFY2(atTwo.contains(QStringLiteral("training loss: 1.5")), qPrintable(atTwo));
        QVERIFY(!atTwo.contains(QStringLiteral("validation")));  // no such points yet
        QVERIFY(loss.valuesAt(QPointF(1, 1)).isEmpty());         // outside the axes

        MemoryPlot memory;
        memory.resize(640, 400);
        memory.reset(0);
        memory.appendRows({sample(1, "step", 1, 10), sample(2, "step", 2, 12)});
        memory.renderNow();
        const QString atOne = memory.valuesAt(pixelOf(memory.allocated(), 1, 10));
        QVERIFY2(atOne.contains(QStringLiteral("allocated: 10.00 MiB")), qPrintable(atOne));
        QVERIFY2(atOne.contains(QStringLiteral(": 15.00 MiB")), qPrintable(atOne));  // the peak

        // Moving the mouse there shows the same text as a tooltip.
        loss.show();
        QVERIFY(QTest::qWaitForWindowExposed(&loss));
        QTest::mouseMove(&loss, pixelOf(loss.trainLoss(), 2, 1.5).toPoint());
        QTRY_COMPARE(QToolTip::text(), atTwo);
    }

    void hoverOverABarListsItsCategories() {
        BreakdownChart chart(Qt::Vertical);
        chart.resize(400, 400);
        MemoryBreakdown a;
        a.embedding_table = 10 << 20;
        a.activations = 30 << 20;
        chart.setBars({{QStringLiteral("run #1"), a}});
        chart.renderNow();
        // The middle of the activations, which sit above the embedding table.
        const QPointF activations(chart.xAxis->coordToPixel(1), chart.yAxis->coordToPixel(25));
        const QString text = chart.valuesAt(activations);
        QVERIFY2(text.startsWith(QStringLiteral("<b>run #1</b> · 40.0 MiB")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("(25 %)")), qPrintable(text));
        QVERIFY2(
            text.contains(QRegularExpression(QStringLiteral("<b>[^<]*30.0 MiB \\(75 %\\)</b>"))),
            qPrintable(text));
        const QPointF beside(chart.xAxis->coordToPixel(1.5), chart.yAxis->coordToPixel(25));
        QVERIFY(chart.valuesAt(beside).isEmpty());  // between bars
    }
};

OOMLAB_UI_TEST(PlotsTest)
#include "plots_test.moc"
