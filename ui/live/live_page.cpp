#include "live/live_page.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <iterator>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "common/tab_sizing.h"
#include "common/wrapped_label.h"
#include "live/failure_panel.h"
#include "live/loss_plot.h"
#include "live/memory_plot.h"
#include "live/module_view.h"
#include "live/phase_plot.h"
#include "oomlab/session/run_session.h"
#include "plots/module_chart.h"
#include "plots/series_colors.h"
#include "plots/smoothing_box.h"

namespace oomlab::ui {

LivePage::LivePage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("livePage"));
    m_header = new WrappedLabel(
        tr("Press <b>Run</b> (Ctrl+R) to train the experiment in the Experiment panel; "
           "loss and memory appear here as it trains."),
        this);
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_failure = new FailurePanel(this);
    m_loss = new LossPlot;
    m_memory = new MemoryPlot;
    m_phases = new PhasePlot;
    m_modules = new ModuleView;
    m_staircase = new StaircaseChart;
    // The run's memory three ways: inside each step, by part of the model at the peak, and
    // stage by stage from an empty device.
    m_memoryTabs = new QTabWidget;
    m_memoryTabs->setObjectName(QStringLiteral("liveMemoryTabs"));
    m_memoryTabs->setDocumentMode(true);
    m_memoryTabs->addTab(m_phases, tr("By phase"));
    m_memoryTabs->addTab(m_modules, tr("By module"));
    m_memoryTabs->addTab(m_staircase, tr("Staircase"));
    m_memoryTabs->setCurrentIndex(AppSettings::value(QStringLiteral("live/memoryTab"), 0).toInt());
    sizeTabsToCurrentPage(m_memoryTabs);
    connect(m_memoryTabs, &QTabWidget::currentChanged, this,
            [](int index) { AppSettings::setValue(QStringLiteral("live/memoryTab"), index); });
    m_log = new QPlainTextEdit;
    m_log->setObjectName(QStringLiteral("eventLog"));
    m_log->setReadOnly(true);
    m_log->setMaximumBlockCount(500);
    // Each event whole in view, wrapped at the log's width (sideways scrolling hid the end of
    // every line); never so narrow that it wraps one word per line.
    m_log->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_log->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    m_log->setMinimumWidth(m_log->fontMetrics().averageCharWidth() * 18);
    m_log->setPlaceholderText(tr("Events of the run (evaluations, out-of-memory, adaptations)"));

    auto* plotsTop = new QSplitter(Qt::Horizontal);
    m_plotPair = plotsTop;
    plotsTop->addWidget(m_loss);
    plotsTop->addWidget(m_memory);
    auto* bottom = new QSplitter(Qt::Horizontal);
    m_detailPair = bottom;
    bottom->addWidget(m_memoryTabs);
    bottom->addWidget(m_log);
    bottom->setStretchFactor(0, 3);
    bottom->setStretchFactor(1, 1);
    bottom->setSizes({3000, 1000});
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName(QStringLiteral("liveSplitter"));
    split->addWidget(plotsTop);
    split->addWidget(bottom);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({3000, 2000});
    split->restoreState(AppSettings::value(QStringLiteral("live/splitter")).toByteArray());
    connect(split, &QSplitter::splitterMoved, this, [split] {
        AppSettings::setValue(QStringLiteral("live/splitter"), split->saveState());
    });

    m_smoothing = createSmoothingBox();
    connect(m_smoothing, qOverload<double>(&QDoubleSpinBox::valueChanged), m_loss,
            &LossPlot::setSmoothing);
    m_loss->setSmoothing(m_smoothing->value());
    auto* top = new QHBoxLayout;
    top->addWidget(m_header, 1);
    top->addWidget(m_smoothing, 0, Qt::AlignTop);

    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_failure);
    layout->addWidget(split, 1);
    connect(m_failure, &FailurePanel::applyFix, this, &LivePage::applyFix);
}

QList<ThemedPlot*> LivePage::plots() const {
    return {m_loss, m_memory, m_phases, m_modules->chart(), m_staircase};
}

QString LivePage::header() const {
    return m_header->text();
}

void LivePage::onRunStarted(const ExperimentConfig& config, const QString& name) {
    m_runId = 0;
    m_runsCreated = 0;
    m_lessonRuns.clear();
    m_loss->earlierRuns().clear();
    m_memory->earlierRuns().clear();
    m_name = name;
    m_capBytes = config.memory.cap_bytes();
    m_datasetName = qs(dataset_name(config));
    m_header->setToolTip(QString());
    resetPlots();
    m_log->clear();
    setHeader(tr("Preparing %1…").arg(name.isEmpty() ? tr("the run") : name.toHtmlEscaped()));
}

void LivePage::onLessonStarted(const QStringList& runLabels) {
    m_lessonRuns = runLabels;
}

void LivePage::onPrepareProgress(const QString& stage, double fraction) {
    if (m_runId == 0) {
        setHeader(
            tr("Preparing: %1 (%2 %)").arg(stage.toHtmlEscaped()).arg(qRound(fraction * 100)));
    }
}

void LivePage::resetPlots() {
    m_loss->reset();
    m_memory->reset(m_capBytes);
    m_phases->reset();
    m_modules->setModules({}, tr("Memory by module appears here when the run ends."));
    m_staircase->setStages({});
    m_failure->hide();
}

void LivePage::onRunCreated(qint64 runId, const ExperimentInfo& info) {
    if (m_runId != 0 && runId != m_runId) {  // the next run of a lesson
        const QString label = m_lessonRuns.value(m_runsCreated - 1);
        const QString earlier =
            label.isEmpty() ? tr("run %1").arg(m_runId) : tr("run %1 (%2)").arg(m_runId).arg(label);
        m_loss->keepAsEarlierRun(earlier);
        m_memory->keepAsEarlierRun(earlier);
        resetPlots();
    }
    m_runId = runId;
    ++m_runsCreated;
    m_memory->setCpuDevice(info.device.rfind("cpu", 0) == 0);
    // One short line (it must fit a projector at presentation size); the full
    // descriptions of the data and the vectors are in its tooltip.
    setHeader(tr("<b>Run %1</b> on %2 · %3 · %4 train / %5 validation · %6")
                  .arg(runId)
                  .arg(qs(info.device).toHtmlEscaped(), m_datasetName.toHtmlEscaped(),
                       formatCount(info.train_examples), formatCount(info.valid_examples),
                       formatSteps(info.total_steps)));
    m_header->setToolTip(
        tr("%1 (%2 labels)\n%3\ntable %4 × %5 · %6 parameters (%7 trainable)")
            .arg(qs(info.dataset))
            .arg(info.label_names.size())
            .arg(qs(info.embeddings), formatCount(info.vocab_size))
            .arg(info.embedding_dim)
            .arg(formatCount(info.parameters), formatCount(info.trainable_parameters)));
    const QString run = tr("Run %1 (%2)").arg(runId).arg(m_datasetName);
    m_loss->setExportTitle(tr("%1: loss and validation").arg(run));
    m_memory->setExportTitle(tr("%1: memory per step").arg(run));
    m_phases->setExportTitle(tr("%1: memory by phase").arg(run));
    m_modules->chart()->setExportTitle(tr("%1: memory by module at the peak").arg(run));
    m_staircase->setExportTitle(tr("%1: memory stage by stage").arg(run));
    log(tr("run %1 created").arg(runId));
}

void LivePage::onMetrics(const MetricBatch& batch) {
    if (batch.runId != m_runId) {
        return;
    }
    m_memory->appendRows(batch.rows);  // every rank's memory
    // Loss and phases are rank 0's: the ranks' evaluations are combined, their losses alike.
    std::vector<MetricRow> rankZero;
    std::copy_if(batch.rows.begin(), batch.rows.end(), std::back_inserter(rankZero),
                 [](const MetricRow& row) { return row.rank == 0; });
    m_loss->appendRows(rankZero);
    m_phases->appendRows(rankZero);
}

void LivePage::onEvent(qint64 runId, const EventRow& event) {
    if (runId != m_runId) {
        return;
    }
    m_memory->markEvent(event);
    if (event.kind == event_kind::kOom) {
        m_loss->markers().addMarker(static_cast<double>(event.step), tr("OOM"), warningColor());
    }
    log(QStringLiteral("[%1] step %2: %3")
            .arg(qs(event.kind))
            .arg(event.step)
            .arg(qs(event.message)));
}

void LivePage::onRunFinished(const RunEnd& end) {
    if (end.runId != 0 && end.runId != m_runId) {
        return;
    }
    m_phases->finish(end.status() == RunStatus::Oom ? tr("OOM") : QString());
    m_modules->setModules(end.outcome.by_module,
                          tr("This run recorded no memory by module (it ended before its "
                             "first step)."));
    m_modules->setPrediction(end.prediction, end.outcome);
    m_staircase->setStages(end.outcome.staircase, m_capBytes);
    for (ThemedPlot* plot : plots()) {
        plot->requestReplot();
    }
    m_failure->showRunEnd(end);
    if (end.runId == 0) {
        setHeader(tr("The run could not start."));
        return;
    }
    log(end.error().isEmpty()
            ? tr("run %1 %2").arg(end.runId).arg(statusName(end.status()))
            : tr("run %1 %2: %3").arg(end.runId).arg(statusName(end.status()), end.error()));
    QString ending =
        tr("<b style='color:%1'>%2</b> after %3 in %4 · peak %5")
            .arg(statusColor(end.status()).name(), statusName(end.status()),
                 formatSteps(end.outcome.steps), formatDuration(end.outcome.wall_seconds),
                 formatBytes(end.outcome.peak_bytes));
    if (end.outcome.val_accuracy) {
        ending += tr(" · validation accuracy %1").arg(formatPercent(end.outcome.val_accuracy));
    }
    const BatchShape planned = plannedBatch(end.config);
    if (batch_adapted(end.outcome, planned)) {
        const BatchShape ended = ended_batch(end.outcome, planned);
        ending += tr(" · <b>adapted</b>: micro-batch %1 × accumulation %2 became %3 × %4")
                      .arg(planned.batch_size)
                      .arg(planned.accumulation)
                      .arg(ended.batch_size)
                      .arg(ended.accumulation);
    }
    setHeader(m_header->text() + QStringLiteral("<br>") + ending);
}

void LivePage::addHeaderLine(const QString& text) {
    if (!text.isEmpty()) {
        setHeader(m_header->text() + QStringLiteral("<br>") + text.toHtmlEscaped());
    }
}

void LivePage::setHeader(const QString& text) {
    m_header->setText(text);
}

void LivePage::log(const QString& line) {
    m_log->appendPlainText(line);
}

void LivePage::fitWidth(int width) {
    const QMargins margins = layout() ? layout()->contentsMargins() : QMargins();
    const int available = width - margins.left() - margins.right();
    for (QSplitter* pair : {m_plotPair, m_detailPair}) {
        int needed = pair->handleWidth() * (pair->count() - 1);
        for (int i = 0; i < pair->count(); ++i) {
            needed += pair->widget(i)->minimumSizeHint().width();
        }
        // Stacked, the page may scroll down and its scroll bar take some width: side by side
        // again only with that width to spare, or the two would take turns.
        const int spare = pair->orientation() == Qt::Vertical
                              ? style()->pixelMetric(QStyle::PM_ScrollBarExtent)
                              : 0;
        const Qt::Orientation fits = needed + spare <= available ? Qt::Horizontal : Qt::Vertical;
        if (pair->orientation() != fits) {
            pair->setOrientation(fits);
        }
    }
}

bool LivePage::event(QEvent* event) {
    if (event->type() == QEvent::ParentAboutToChange && parentWidget()) {
        parentWidget()->removeEventFilter(this);
    } else if (event->type() == QEvent::ParentChange && parentWidget()) {
        parentWidget()->installEventFilter(this);  // a scroll area's viewport, once placed
    }
    return QWidget::event(event);
}

bool LivePage::eventFilter(QObject* watched, QEvent* event) {
    if (watched == parentWidget() && !m_fitPending &&
        (event->type() == QEvent::Resize || event->type() == QEvent::LayoutRequest)) {
        // Once the layouts have settled: arranging the pairs resizes the viewport again.
        m_fitPending = true;
        QMetaObject::invokeMethod(
            this,
            [this] {
                m_fitPending = false;
                if (parentWidget()) {
                    fitWidth(parentWidget()->width());
                }
            },
            Qt::QueuedConnection);
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace oomlab::ui
