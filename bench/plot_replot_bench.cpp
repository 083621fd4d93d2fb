// How long one replot of a live plot takes once a run is long: 4 series x 200,000 points.
//
//   QT_QPA_PLATFORM=offscreen build/bench/oomlab-plot-bench
//
// MemoryPlot is the live memory plot itself (allocated, reserved, step peak, device used)
// fed 200,000 step rows; the plain case is a ThemedPlot with 4 noisy series. Each iteration
// is one full replot into the widget (rpImmediateRefresh), as after a coalesced redraw.
#include <QApplication>
#include <QElapsedTimer>

#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "plots/series_colors.h"
#include "plots/themed_plot.h"

namespace {

constexpr int kPoints = 200000;
constexpr int kWidth = 1200;
constexpr int kHeight = 700;

std::vector<oomlab::MetricRow> stepRows(int count) {
    std::mt19937 random(7);
    std::normal_distribution<double> noise(0.0, 1.0);
    std::vector<oomlab::MetricRow> rows(static_cast<std::size_t>(count));
    double loss = 2.0;
    for (int i = 0; i < count; ++i) {
        oomlab::MetricRow& row = rows[static_cast<std::size_t>(i)];
        row.step = i + 1;
        row.phase = "step";
        row.wall_ms = i * 3.0;
        loss = std::max(0.05, loss * 0.99998 + 0.01 * noise(random));
        row.loss = loss;
        const std::int64_t base = (200 + (i % 97)) << 20;
        row.allocated_bytes = base;
        row.reserved_bytes = base + (64 << 20);
        row.peak_bytes = base + ((150 + static_cast<int>(20 * noise(random))) << 20);
        row.device_used_bytes = base + (900 << 20);
    }
    return rows;
}

void replotLoop(benchmark::State& state, QCustomPlot& plot) {
    plot.resize(kWidth, kHeight);
    plot.show();
    plot.replot(QCustomPlot::rpImmediateRefresh);  // lay out once
    for (auto _ : state) {
        plot.replot(QCustomPlot::rpImmediateRefresh);
    }
    state.counters["points"] = 4.0 * kPoints;
    state.SetLabel(QStringLiteral("%1x%2 px").arg(kWidth).arg(kHeight).toStdString());
}

void BM_MemoryPlotReplot(benchmark::State& state) {
    oomlab::ui::MemoryPlot plot;
    plot.reset(1024LL << 20);
    const auto rows = stepRows(kPoints);
    // Arrives in engine-sized batches, as during a run.
    for (std::size_t start = 0; start < rows.size(); start += 500) {
        const auto end = std::min(rows.size(), start + 500);
        plot.appendRows(
            {rows.begin() + static_cast<long>(start), rows.begin() + static_cast<long>(end)});
    }
    plot.markEvent(
        {std::int64_t(kPoints * 9 / 10), std::string(oomlab::event_kind::kOom), "out of memory"});
    // Let the coalescing timer fire once: it fits the axes to the whole run.
    QElapsedTimer waited;
    waited.start();
    while (plot.coalescedReplots() == 0 && waited.elapsed() < 5000) {
        QApplication::processEvents(QEventLoop::AllEvents, 10);
    }
    if (plot.xAxis->range().upper < kPoints) {
        state.SkipWithError("the axes did not follow the data");
        return;
    }
    replotLoop(state, plot);
}

void BM_FourNoisySeriesReplot(benchmark::State& state) {
    oomlab::ui::ThemedPlot plot;
    std::mt19937 random(11);
    std::normal_distribution<double> noise(0.0, 1.0);
    double low = 1e300, high = -1e300;
    for (int s = 0; s < 4; ++s) {
        QVector<double> keys(kPoints), values(kPoints);
        double value = 10.0 * s;
        for (int i = 0; i < kPoints; ++i) {
            keys[i] = i;
            value += noise(random);
            values[i] = value;
            low = std::min(low, value);
            high = std::max(high, value);
        }
        plot.addLineSeries(QStringLiteral("series %1").arg(s), oomlab::ui::seriesColor(s))
            ->addData(keys, values, true);
    }
    plot.xAxis->setRange(0, kPoints);
    plot.yAxis->setRange(low, high);
    plot.legend->setVisible(true);
    replotLoop(state, plot);
}

void BM_LossPlotAppendBatch(benchmark::State& state) {
    // What one metrics batch costs the GUI thread on arrival (append only, no replot).
    oomlab::ui::LossPlot plot;
    const auto rows = stepRows(kPoints);
    std::size_t start = 0;
    for (auto _ : state) {
        if (start + 100 > rows.size()) {
            state.PauseTiming();
            plot.reset();
            start = 0;
            state.ResumeTiming();
        }
        plot.appendRows({rows.begin() + static_cast<long>(start),
                         rows.begin() + static_cast<long>(start + 100)});
        start += 100;
    }
    state.SetItemsProcessed(state.iterations() * 100);
}

}  // namespace

BENCHMARK(BM_MemoryPlotReplot)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_FourNoisySeriesReplot)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_LossPlotAppendBatch)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
