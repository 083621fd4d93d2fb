#include "snapshot/snapshot_window.h"

#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "common/formatting.h"
#include "common/freed_memory.h"
#include "common/wrapped_label.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/freed_memory.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_sql.h"
#include "plots/series_colors.h"
#include "snapshot/snapshot_diff_window.h"
#include "snapshot/snapshot_replay_box.h"
#include "snapshot/snapshot_tables.h"
#include "snapshot/snapshot_timeline.h"

namespace oomlab::ui {

QString snapshotFileFilter() {
    return QObject::tr(
        "Memory snapshots and profiler traces (*.pickle *.pkl *.gz *.json *.html);;All files (*)");
}

namespace {

QTableWidget* groupTable(const QString& objectName, const QString& firstColumn, FirstColumn first) {
    return snapshotTable(objectName, {firstColumn, QObject::tr("bytes"), QObject::tr("blocks")},
                         first);
}

void fillGroups(QTableWidget* table, const std::vector<SnapshotLine>& groups) {
    table->setRowCount(int(groups.size()));
    for (int row = 0; row < int(groups.size()); ++row) {
        const SnapshotLine& group = groups[std::size_t(row)];
        setSnapshotRow(table, row,
                       {qs(group.where), formatBytes(line_bytes_held(group)),
                        group.blocks > 0 ? QString::number(group.blocks) : QStringLiteral("—")});
        // What was asked for, where the allocator's rounding shows in print: in the count's
        // tooltip, which keeps the figures' columns narrow enough for a small screen.
        if (group.blocks > 0) {
            table->item(row, 2)->setToolTip(qs(line_blocks_words(group)));
        }
    }
}

// The peak inside each stage the program annotated, the highest first, each shaded on the
// timeline named in its colour; and those running at the peak.
QString stagesText(const SnapshotDevice& d) {
    if (!d.stages_problem.empty()) {
        return QObject::tr("<br>Stages: %1.").arg(qs(d.stages_problem).toHtmlEscaped());
    }
    if (d.stages.empty()) {
        return {};
    }
    const std::vector<SnapshotAnnotatedStage> stages = stages_by_peak(d);
    QStringList peaks;
    for (std::size_t i = 0; i < stages.size() && i < 10; ++i) {
        const QString name = qs(stages[i].name).toHtmlEscaped();
        const QString ran = stages[i].spans == 1 ? QObject::tr("once")
                                                 : QObject::tr("%1 times").arg(stages[i].spans);
        peaks << (stages[i].events == 0 ? QObject::tr("%1 %2 (ran %3, allocating nothing)")
                                        : QObject::tr("%1 %2 (ran %3)"))
                     .arg(i < SnapshotTimeline::kShadedStages
                              ? QStringLiteral("<b style='color:%1'>%2</b>")
                                    .arg(seriesColor(3 + int(i)).name(), name)
                              : name,
                          formatBytes(stages[i].peak_allocated), ran);
    }
    if (stages.size() > 10) {
        peaks << QObject::tr("%1 more").arg(stages.size() - 10);
    }
    QStringList running;
    for (const std::string& name : stages_at(d, d.peak_event)) {
        running << qs(name).toHtmlEscaped();
    }
    return QObject::tr(
               "<br><b>Peak allocated by stage</b> (the program's annotations; the "
               "highest shaded on the timeline, a line where one ran between two events): %1. "
               "At the peak allocated: %2.")
        .arg(peaks.join(QStringLiteral(", ")),
             running.isEmpty() ? QObject::tr("no annotated stage") : running.join(", "));
}

}  // namespace

SnapshotWindow::SnapshotWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
    setObjectName(QStringLiteral("snapshotWindow"));
    setAttribute(Qt::WA_DeleteOnClose);
    m_summary = new WrappedLabel(tr("Reading the snapshot…"));
    m_summary->setTextFormat(Qt::RichText);  // escaped text: never guessed as plain
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("snapshotProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setFormat(tr("Reading…"));
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setObjectName(QStringLiteral("snapshotCancel"));
    m_cancel->hide();
    m_device = new QComboBox;
    m_device->setObjectName(QStringLiteral("snapshotDevice"));
    m_device->hide();
    m_advice = new WrappedLabel;
    m_advice->setObjectName(QStringLiteral("snapshotAdvice"));
    m_advice->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_timeline = new SnapshotTimeline;
    m_kinds = groupTable(QStringLiteral("snapshotKinds"), tr("alive at the peak, for"),
                         FirstColumn::Names);
    m_lines = groupTable(QStringLiteral("snapshotLines"), tr("alive at the peak, at"),
                         FirstColumn::SourceLines);
    m_moment = new QLabel;
    m_moment->setObjectName(QStringLiteral("snapshotMoment"));
    m_toPeak = new QPushButton(tr("Show the peak"));
    m_toPeak->hide();
    m_compare = new QPushButton(tr("Compare with another snapshot…"));
    m_compare->setToolTip(
        tr("Before and after a fix: the peaks and what was alive at each, by "
           "what it was for and by source line"));
    m_saveDatabase = new QPushButton(tr("Save as SQLite…"));
    m_saveDatabase->setObjectName(QStringLiteral("snapshotSaveSqlite"));
    m_saveDatabase->setToolTip(
        tr("Its devices, every event, the stacks, segments and blocks as SQLite tables, for "
           "sqlite3 or oomlab-cli snapshot sql"));
    m_loadExperiment = new QPushButton(tr("Load the experiment that recorded it"));
    m_loadExperiment->setToolTip(
        tr("Its settings into the experiment panel, to run it again "
           "with a fix and measure the difference"));
    m_loadExperiment->hide();
    m_replayBox = new SnapshotReplayBox;
    auto* tables = new QSplitter(Qt::Horizontal);
    tables->addWidget(m_kinds);
    tables->addWidget(m_lines);
    tables->setSizes({1000, 2000});  // source lines are long
    auto* momentRow = new QHBoxLayout;
    momentRow->setContentsMargins(0, 0, 0, 0);
    momentRow->addWidget(m_moment, 1);
    momentRow->addWidget(m_toPeak);
    auto* lower = new QWidget;
    auto* lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addLayout(momentRow);
    lowerLayout->addWidget(tables, 1);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_timeline);
    split->addWidget(lower);
    split->setSizes({3000, 2000});
    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_device, 0, Qt::AlignTop);
    auto* reading = new QHBoxLayout;
    reading->setContentsMargins(0, 0, 0, 0);
    reading->addWidget(m_progress, 1);
    reading->addWidget(m_cancel);
    auto* actions = new QHBoxLayout;
    actions->setContentsMargins(0, 0, 0, 0);
    actions->addWidget(m_compare);
    actions->addWidget(m_saveDatabase);
    actions->addWidget(m_loadExperiment);
    actions->addStretch(1);
    // Inside a scroll area: at a projector's text size the window still fits a small screen,
    // and what does not fit scrolls.
    auto* content = new QWidget;
    auto* scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("snapshotScroll"));
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);
    m_reportView = new QWidget;
    m_reportView->hide();
    auto* reportLayout = new QVBoxLayout(m_reportView);
    reportLayout->setContentsMargins(0, 0, 0, 0);
    reportLayout->addWidget(m_advice);
    reportLayout->addLayout(actions);
    reportLayout->addWidget(m_replayBox);
    reportLayout->addWidget(split, 1);
    auto* layout = new QVBoxLayout(content);
    layout->addLayout(top);
    layout->addLayout(reading);
    layout->addWidget(m_reportView, 1);
    // Room for the window manager's title bar and frame, which it adds outside the window.
    const QSize room =
        screen() ? screen()->availableGeometry().size() - QSize(16, 64) : QSize(1000, 700);
    resize(QSize(1000, 700).boundedTo(room));

    connect(&m_watcher, &QFutureWatcher<Loaded>::finished, this, &SnapshotWindow::showLoaded);
    connect(m_cancel, &QPushButton::clicked, this, &SnapshotWindow::cancel);
    m_progressTimer.setInterval(100);
    connect(&m_progressTimer, &QTimer::timeout, this, &SnapshotWindow::showProgress);
    connect(m_device, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &SnapshotWindow::showDevice);
    connect(m_timeline, &SnapshotTimeline::momentChosen, this,
            [this](std::size_t event) { showMoment(event); });
    connect(m_replayBox, &SnapshotReplayBox::replayed, m_timeline, &SnapshotTimeline::setReplayed);
    connect(m_toPeak, &QPushButton::clicked, this, [this] { showMoment(std::nullopt); });
    connect(m_compare, &QPushButton::clicked, this, [this] {
        const QString after =
            QFileDialog::getOpenFileName(this, tr("Compare with a memory snapshot"),
                                         QFileInfo(m_path).absolutePath(), snapshotFileFilter());
        if (!after.isEmpty()) {
            compareWith(after);
        }
    });
    connect(m_saveDatabase, &QPushButton::clicked, this, [this] {
        const QFileInfo snapshot(m_path);
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Save the snapshot as SQLite"),
            snapshot.absoluteDir().filePath(snapshot.completeBaseName() + QStringLiteral(".db")),
            tr("SQLite databases (*.db *.sqlite)"));
        if (path.isEmpty()) {
            return;
        }
        if (const QString error = saveAsDatabase(path); !error.isEmpty()) {
            QMessageBox::warning(this, tr("Save as SQLite"), error);
        }
    });
    connect(m_loadExperiment, &QPushButton::clicked, this,
            [this] { emit experimentRequested(qs(m_report.experiment_json), m_path); });
}

SnapshotDiffWindow* SnapshotWindow::compareWith(const QString& after) {
    auto* window = new SnapshotDiffWindow(parentWidget());
    window->open(m_path, after);
    window->show();
    return window;
}

SnapshotWindow::~SnapshotWindow() {
    cancel();
    // A report of millions of events, freed where each arena gives its top back as it goes.
    give_back_memory_freed_by([this] { m_report = SnapshotReport(); });
    giveFreedMemoryBackSoon();  // its replays and the tables go with the window
}

void SnapshotWindow::open(const QString& path) {
    cancel();  // a read still going for another file
    m_path = path;
    m_reportView->hide();
    m_replayBox->setRecord(path);
    setWindowTitle(tr("%1 — memory snapshot").arg(QFileInfo(path).fileName()));
    m_reading = std::make_shared<Reading>();
    m_progress->setValue(0);
    m_progress->show();
    m_cancel->show();
    m_cancel->setEnabled(true);
    m_progressTimer.start();
    m_watcher.setFuture(QtConcurrent::run([file = ss(path), reading = m_reading] {
        Loaded loaded;
        try {
            loaded.report = read_snapshot_report(file, [&](const SnapshotStage& stage) {
                reading->phase = stage.phase;
                reading->read = stage.done;
                reading->size = stage.total;
                if (reading->cancelled) {
                    throw Cancelled();
                }
            });
        } catch (const Cancelled&) {
            loaded.error = tr("Reading %1 was cancelled.").arg(qs(file));
        } catch (const std::exception& error) {
            loaded.error = qs(error.what());
        }
        return loaded;
    }));
}

void SnapshotWindow::cancel() {
    if (m_reading) {
        m_reading->cancelled = true;
        m_cancel->setEnabled(false);
    }
}

void SnapshotWindow::showProgress() {
    const std::uint64_t size = m_reading ? m_reading->size.load() : 0;
    if (size == 0) {
        return;
    }
    const std::uint64_t read = std::min(m_reading->read.load(), size);
    m_progress->setValue(int(read * 1000 / size));
    const QString phase = QString::fromLatin1(m_reading->phase.load());
    if (phase == QLatin1String("reading")) {
        m_progress->setFormat(
            tr("Reading… %1 of %2")
                .arg(formatBytes(std::int64_t(read)), formatBytes(std::int64_t(size))));
    } else {
        m_progress->setFormat(
            (phase == QLatin1String("collecting") ? tr("Collecting the trace… %1 of %2 events")
                                                  : tr("Replaying the trace… %1 of %2 events"))
                .arg(QLocale().toString(qulonglong(read)), QLocale().toString(qulonglong(size))));
    }
}

void SnapshotWindow::showLoaded() {
    m_progressTimer.stop();
    m_progress->hide();
    m_cancel->hide();
    m_reading.reset();
    giveFreedMemoryBackSoon();  // what reading the file took beyond the report
    // Taken, not copied: a trace of millions of events is held once.
    Loaded read = m_watcher.future().takeResult();
    m_error = read.error;
    m_report = std::move(read.report);
    m_reportView->setVisible(m_error.isEmpty() && !m_report.devices.empty());
    if (!m_error.isEmpty() || m_report.devices.empty()) {
        m_summary->setText(m_error.isEmpty()
                               ? tr("%1 holds no device's memory.").arg(m_path.toHtmlEscaped())
                               : m_error.toHtmlEscaped());
        emit loaded();
        return;
    }
    const QSignalBlocker quiet(m_device);
    m_device->clear();
    for (const SnapshotDevice& device : m_report.devices) {
        m_device->addItem(qs(snapshot_device_name(device.index)));
    }
    m_device->setVisible(m_report.devices.size() > 1);
    m_loadExperiment->setVisible(!m_report.experiment_json.empty());
    showDevice(0);
    emit loaded();
}

void SnapshotWindow::showDevice(int index) {
    if (index < 0 || index >= int(m_report.devices.size())) {
        return;
    }
    const SnapshotDevice& d = m_report.devices[std::size_t(index)];
    m_replayBox->setDevice(&m_report, d.index);
    // The figures in the words snapshot show gives them, as far as the file records them.
    const QString free = qs(snapshot_free_words(d)).toHtmlEscaped();
    QString summary =
        tr("<b>%1</b>, %2: %3; <b>%4</b>%5.")
            .arg(QFileInfo(m_path).fileName().toHtmlEscaped(), qs(snapshot_device_name(d.index)),
                 qs(snapshot_end_words(d)).toHtmlEscaped(),
                 qs(snapshot_peak_words(d)).toHtmlEscaped(),
                 free.isEmpty() ? QString() : QStringLiteral("; ") + free);
    for (const SnapshotOom& oom : d.ooms) {
        summary += tr("<br><span style='color:%1'>Out of memory at event %2</span>: asked %3 "
                      "with %4 free on the device, %5 allocated and %6 reserved.")
                       .arg(warningColor().name())
                       .arg(event_number(oom.event))
                       .arg(formatBytes(oom.requested), formatBytes(oom.device_free),
                            formatBytes(oom.allocated), formatBytes(oom.reserved));
        if (QString limit = qs(process_limit_note(oom)); !limit.isEmpty()) {
            limit[0] = limit[0].toUpper();
            summary += QStringLiteral(" %1.").arg(limit.toHtmlEscaped());
        }
    }
    for (const std::string& note : snapshot_end_notes(d)) {
        QString text = qs(note);
        text[0] = text[0].toUpper();
        summary += QStringLiteral("<br>%1.").arg(text.toHtmlEscaped());
    }
    for (const std::string& problem : d.trace_problems) {
        summary += tr("<br><i>The trace does not add up</i>: %1.").arg(qs(problem).toHtmlEscaped());
    }
    if (const std::optional<GpuEstimate> gpu = gpu_estimate(d)) {
        summary += tr("<br><b>On a GPU, an estimate</b>: these requests would hold %5 at most "
                      "and PyTorch's caching allocator would reserve %1 (%2 segments; %3 with "
                      "expandable segments); %4.")
                       .arg(formatBytes(gpu->peak_reserved))
                       .arg(gpu->segments_at_peak)
                       .arg(formatBytes(gpu->peak_reserved_expandable),
                            qs(kGpuEstimateLeavesOut).toHtmlEscaped(),
                            formatBytes(gpu->gpu_peak_allocated));
    }
    summary += stagesText(d);
    m_summary->setText(summary);
    QStringList advice;
    for (const SnapshotAdvice& item : snapshot_advice(d, m_report.alloc_conf)) {
        advice << tr("• <b>%1</b>: %2")
                      .arg(qs(item.what).toHtmlEscaped(), qs(item.why).toHtmlEscaped());
    }
    m_advice->setText(advice.isEmpty()
                          ? tr("Nothing in this snapshot calls for a change.")
                          : tr("<b>What to do</b><br>") + advice.join(QStringLiteral("<br>")));
    m_timeline->setDevice(d);
    showMoment(std::nullopt);
}

const SnapshotDevice* SnapshotWindow::currentDevice() const {
    const int index = m_device->currentIndex();
    return index >= 0 && index < int(m_report.devices.size())
               ? &m_report.devices[std::size_t(index)]
               : nullptr;
}

QString SnapshotWindow::saveAsDatabase(const QString& path) {
    // On this thread: the report is the window's, and a database of millions of events takes
    // seconds (docs/benchmarks.md), told by the cursor.
    QApplication::setOverrideCursor(Qt::WaitCursor);
    QString error;
    try {
        check_output_path(ss(path), {"the database", {ss(m_path)}, false, is_snapshot_database});
        write_snapshot_database(m_report, ss(path));
    } catch (const std::exception& refused) {
        error = qs(refused.what());
    }
    QApplication::restoreOverrideCursor();
    return error;
}

void SnapshotWindow::showMoment(std::optional<std::size_t> event) {
    const SnapshotDevice* d = currentDevice();
    if (!d) {
        return;
    }
    m_timeline->showMoment(event);
    m_toPeak->setVisible(event.has_value());
    if (!event) {
        m_moment->setText(d->events == 0
                              ? tr("At the dump: the snapshot holds no trace of events, so what "
                                   "was alive at its end is all it tells.")
                              : tr("At the peak, after event %1. Click the timeline to see "
                                   "another moment.")
                                    .arg(d->peak_event));
        setAliveHeaders(m_kinds, m_lines, tr("alive at %1").arg(qs(peak_moment(*d))));
        fillGroups(m_kinds, d->at_peak_by_kind);
        fillGroups(m_lines, d->at_peak);
        return;
    }
    const SnapshotMoment moment = snapshot_moment(*d, *event);
    m_moment->setText(tr("After event %1 of %2: %3 allocated, %4 reserved.")
                          .arg(moment.event)
                          .arg(d->events)
                          .arg(formatBytes(moment.allocated), formatBytes(moment.reserved)));
    setAliveHeaders(m_kinds, m_lines, tr("alive then"));
    fillGroups(m_kinds, moment.by_kind);
    fillGroups(m_lines, moment.by_line);
}

QString SnapshotWindow::momentText() const {
    return m_moment->text();
}

QString SnapshotWindow::summaryText() const {
    return m_summary->text();
}

QString SnapshotWindow::adviceText() const {
    return m_advice->text();
}

}  // namespace oomlab::ui
