#include "window/plot_render.h"

#include <QFileInfo>

#include <memory>

#include "common/formatting.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "live/phase_plot.h"
#include "oomlab/common/files.h"
#include "oomlab/config/config_io.h"
#include "oomlab/store/run_store.h"
#include "plots/breakdown_chart.h"
#include "plots/plot_export.h"

namespace oomlab::ui {
namespace {

bool isImage(const std::string& path) {
    return file_starts_with(path, "\x89PNG") || file_starts_with(path, "%PDF") ||
           file_starts_with(path, "<?xml") || file_starts_with(path, "<svg");
}

std::unique_ptr<ThemedPlot> drawView(const QString& view, const RunRecord& run,
                                     const std::vector<MetricRow>& metrics,
                                     const std::vector<EventRow>& events, std::int64_t capBytes) {
    if (view == QLatin1String("loss")) {
        auto plot = std::make_unique<LossPlot>();
        plot->appendRows(metrics);
        return plot;
    }
    if (view == QLatin1String("memory")) {
        auto plot = std::make_unique<MemoryPlot>();
        plot->reset(capBytes);
        plot->setCpuDevice(run.device.rfind("cpu", 0) == 0);
        plot->appendRows(metrics);
        for (const EventRow& event : events) {
            plot->markEvent(event);
        }
        return plot;
    }
    if (view == QLatin1String("phases")) {
        auto plot = std::make_unique<PhasePlot>();
        plot->appendRows(metrics);
        plot->finish(run.outcome.status == RunStatus::Oom ? QObject::tr("OOM") : QString());
        return plot;
    }
    if (view == QLatin1String("breakdown")) {
        auto plot = std::make_unique<BreakdownChart>(Qt::Vertical);
        plot->setBars({{qs(run.name), run.outcome.breakdown}}, capBytes);
        return plot;
    }
    return nullptr;
}

}  // namespace

QString plotExportViews() {
    return QStringLiteral("loss, memory, phases or breakdown");
}

QString exportRunPlot(const PlotExport& request) {
    try {
        check_output_path(ss(request.file),
                          {"--out", {ss(request.databasePath)}, request.force, isImage});
        if (!QFileInfo::exists(request.databasePath)) {
            // A read never creates a database (a mistyped --db made an empty one).
            return QObject::tr("--db: there is no run database at %1; check the path")
                .arg(request.databasePath);
        }
        const RunStore store = RunStore::open(ss(request.databasePath));
        const std::optional<RunRecord> run = store.find_run(request.runId);
        if (!run) {
            return QObject::tr("--export-plot: there is no run %1 in %2")
                .arg(request.runId)
                .arg(request.databasePath);
        }
        const std::int64_t capBytes = [&] {
            ExperimentConfig config;
            try {
                config = parse_config_json(run->config_json, "run");
            } catch (const std::exception&) {
                // an old or edited config: no cap line
            }
            return config.memory.cap_bytes();
        }();
        const std::unique_ptr<ThemedPlot> plot =
            drawView(request.view, *run, store.thinned_metrics(run->id).rows, store.events(run->id),
                     capBytes);
        if (!plot) {
            return QObject::tr("--view: \"%1\" is not one of %2")
                .arg(request.view, plotExportViews());
        }
        plot->resize(request.size);
        plot->setTitle(
            QObject::tr("Run %1: %2 (%3)").arg(run->id).arg(qs(run->name), request.view));
        plot->renderNow();
        return savePlot(plot.get(), request.file, /*pngScale=*/1.0);  // --size in pixels
    } catch (const std::exception& error) {
        return qs(error.what());
    }
}

}  // namespace oomlab::ui
