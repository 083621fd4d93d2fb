#include "runs/class_window.h"

#include <QDateTime>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTime>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <cmath>
#include <optional>

#include "common/formatting.h"
#include "export/tracker_send.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/trackers/mlflow_export.h"
#include "plots/series_colors.h"
#include "runs/class_plot.h"
#include "runs/prediction_tally.h"
#include "runs/run_database.h"

namespace oomlab::ui {
namespace {

constexpr int kDefaultRefreshSeconds = 10;
enum Column { Student, Run, Status, Step, Loss, Reserved, Accuracy, kColumns };

std::optional<trackers::StepValue> last(const trackers::StepSeries& series) {
    return series.empty() ? std::nullopt : std::optional(series.back());
}

}  // namespace

ClassWindow::ClassWindow(RunDatabase* database, QWidget* parent)
    : QWidget(parent, Qt::Window),
      m_database(database),
      m_uri(new QLineEdit(this)),
      m_experiment(new QLineEdit(this)),
      m_every(new QSpinBox(this)),
      m_followButton(new QPushButton(tr("Follow"), this)),
      m_status(new QLabel(this)),
      m_notesLabel(new QLabel(this)),
      m_notesButton(new QPushButton(this)),
      m_table(new QTableWidget(0, kColumns, this)),
      m_lossPlot(new ClassPlot(ClassPlot::Series::Loss, this)),
      m_memoryPlot(new ClassPlot(ClassPlot::Series::Memory, this)),
      m_revealButton(new QPushButton(tr("Show the class's predictions"), this)),
      m_predictions(new QTextBrowser(this)),
      m_compare(new QPushButton(tr("Compare selected"), this)) {
    setWindowTitle(tr("Class runs"));
    const TrackerTarget remembered = TrackerTarget::remembered();
    m_uri->setText(remembered.trackingUri);
    m_experiment->setText(remembered.experiment);
    m_every->setRange(2, 300);
    m_every->setSuffix(tr(" s"));
    m_every->setValue(kDefaultRefreshSeconds);
    m_status->setWordWrap(true);
    m_notesLabel->setObjectName(QStringLiteral("classNotesText"));
    m_notesLabel->setWordWrap(true);
    m_notesLabel->hide();
    // What the server lacks is for the lecturer, not the room: under a button, not in the way.
    m_notesButton->setObjectName(QStringLiteral("classNotes"));
    m_notesButton->setCheckable(true);
    m_notesButton->hide();
    m_status->setText(
        tr("Follow the MLflow server your students' workbenches send to "
           "(Send to tracker…, Also send each run here when it ends)."));
    m_table->setHorizontalHeaderLabels({tr("Student"), tr("Run"), tr("Status"), tr("Step"),
                                        tr("Loss"), tr("Reserved"), tr("Val acc")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_compare->setEnabled(false);

    auto* form = new QFormLayout;
    form->addRow(tr("Tracking URI"), m_uri);
    form->addRow(tr("Experiment"), m_experiment);
    auto* every = new QHBoxLayout;
    every->addWidget(m_every);
    every->addStretch();
    every->addWidget(m_followButton);
    form->addRow(tr("Refresh every"), every);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_notesButton);
    buttons->addStretch(1);
    buttons->addWidget(m_revealButton);
    buttons->addWidget(m_compare);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_status);
    // The plots above, given the room a projector's back row needs; the table under them.
    auto* plots = new QWidget(this);
    auto* side = new QHBoxLayout(plots);
    side->setContentsMargins(0, 0, 0, 0);
    side->addWidget(m_lossPlot);
    side->addWidget(m_memoryPlot);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(plots);
    split->addWidget(m_table);
    split->addWidget(m_predictions);
    m_predictions->setObjectName(QStringLiteral("classPredictions"));
    m_predictions->hide();
    m_revealButton->setCheckable(true);
    m_revealButton->setToolTip(
        tr("What each student predicted before their lesson's runs, counted, against what "
           "their runs measured: show it after the lesson's reveal"));
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);
    layout->addWidget(split, 1);
    layout->addLayout(buttons);
    layout->addWidget(m_notesLabel);

    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &ClassWindow::refreshNow);
    connect(&m_watcher, &QFutureWatcher<Refresh>::finished, this, &ClassWindow::onRefreshed);
    connect(m_followButton, &QPushButton::clicked, this, [this] { follow(!m_following); });
    connect(m_revealButton, &QPushButton::toggled, this, &ClassWindow::revealPredictions);
    connect(m_notesButton, &QPushButton::toggled, this,
            [this](bool on) { m_notesLabel->setVisible(on && !m_notesLabel->text().isEmpty()); });
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
            [this] { m_compare->setEnabled(selectedRuns().size() >= 1); });
    connect(m_compare, &QPushButton::clicked, this,
            [this] { emit compareRequested(selectedRuns()); });
    connect(m_table, &QTableWidget::cellDoubleClicked, this,
            [this] { emit compareRequested(selectedRuns()); });
}

// An import under way is not waited for (a server that stalls would hold the window for up to
// its time limit): it owns its own connection to the database and writes each run whole.
ClassWindow::~ClassWindow() {
    *m_stop = true;
}

void ClassWindow::setRefreshSeconds(int seconds) {
    m_every->setValue(seconds);
}

void ClassWindow::follow(bool on) {
    if (on) {
        try {
            trackers::check_tracking_uri(m_uri->text().trimmed().toStdString(),
                                         trackerFields().uri);
        } catch (const BadInput& error) {
            m_status->setText(QStringLiteral("⚠ ") + QString::fromStdString(error.what()));
            return;
        }
        if (!m_database->isOpen()) {
            m_status->setText(
                tr("⚠ Open a run database first (File → Open or create database…): "
                   "the class's runs are imported into it."));
            return;
        }
    }
    // Another server or experiment: what the last one said and listed goes at once.
    const QString followed = m_uri->text().trimmed() + QChar('\n') + m_experiment->text().trimmed();
    if (on && followed != m_followed) {
        m_followed = followed;
        m_notes.clear();
        m_notesLabel->clear();
        m_notesLabel->hide();
        m_notesButton->hide();
        m_withoutSummary.clear();
        showClass({}, {});
    }
    m_following = on;
    m_followButton->setText(on ? tr("Stop following") : tr("Follow"));
    m_uri->setEnabled(!on);
    m_experiment->setEnabled(!on);
    m_timer.stop();
    if (on && !m_watcher.isRunning()) {
        refreshNow();
    }
}

void ClassWindow::refreshNow() {
    if (!m_following || m_watcher.isRunning()) {
        return;
    }
    const std::string path = m_database->path().toStdString();
    trackers::MlflowSource source;
    source.tracking_uri = m_uri->text().trimmed().toStdString();
    source.experiment = m_experiment->text().trimmed().toStdString();
    source.named = trackerFields();
    m_status->setText(tr("Reading the class's runs from %1…").arg(m_uri->text().trimmed()));
    m_watcher.setFuture(QtConcurrent::run([path, source, stop = m_stop]() mutable {
        source.control.stop = stop.get();
        Refresh refresh;
        try {
            RunStore store = RunStore::open(path);
            refresh.progress = trackers::read_class_progress(source);
            const auto holds = [&] {
                refresh.ids.clear();
                bool every_whole_one = true;
                for (const trackers::ClassRun& run : refresh.progress.runs) {
                    refresh.ids.push_back(store.run_with_uid(run.uid).value_or(0));
                    every_whole_one = every_whole_one && (!run.whole || refresh.ids.back() != 0);
                }
                return every_whole_one;
            };
            // The import searches the class's runs again: only once one was sent whole that is
            // not here yet (while a class trains, most refreshes find none).
            if (!holds()) {
                refresh.imported = trackers::import_from_mlflow(store, source);
                holds();
            }
        } catch (const std::exception& error) {
            refresh.error = QString::fromStdString(error.what());
        }
        return refresh;
    }));
}

void ClassWindow::onRefreshed() {
    const Refresh refresh = m_watcher.result();
    const QString next = m_following ? tr("; again in %1 s").arg(m_every->value()) : QString();
    const QString at = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    if (!refresh.error.isEmpty()) {
        // The runs listed stay: what was imported before is in the database.
        m_status->setText(tr("⚠ %1 (%2)%3").arg(refresh.error, at, next));
    } else {
        const trackers::MlflowImport& imported = refresh.imported;
        // The runs without a summary are counted over every refresh, in one note.
        const std::string withoutSummary =
            imported.without_summary.empty()
                ? std::string()
                : trackers::without_summary_note(imported.without_summary);
        m_withoutSummary.insert(m_withoutSummary.end(), imported.without_summary.begin(),
                                imported.without_summary.end());
        std::vector<std::string> said = imported.notes;
        said.insert(said.end(), refresh.progress.notes.begin(), refresh.progress.notes.end());
        for (const std::string& note : said) {
            if (note != withoutSummary && !m_notes.contains(QString::fromStdString(note))) {
                m_notes << QString::fromStdString(note);
            }
        }
        showClass(refresh.progress, refresh.ids);
        QString text = tr("%1; %2 new; read at %3%4")
                           .arg(QString::fromStdString(trackers::class_counts(
                               refresh.progress, QDateTime::currentMSecsSinceEpoch())))
                           .arg(imported.added.size())
                           .arg(at, next);
        QStringList notes = m_notes;
        if (!m_withoutSummary.empty()) {
            notes.prepend(QString::fromStdString(trackers::without_summary_note(m_withoutSummary)));
        }
        const std::vector<LessonTally> tallies = class_predictions(refresh.progress);
        if (!tallies.empty() && !predictionsRevealed()) {
            text += tr("; %1 (shown when you show the class's predictions)")
                        .arg(predictionsWaiting(tallies));
        }
        m_status->setText(text);
        m_notesLabel->setText(notes.isEmpty() ? QString()
                                              : tr("Note: ") + notes.join(QLatin1String("; ")));
        m_notesButton->setText(tr("Notes (%1)").arg(notes.size()));
        m_notesButton->setVisible(!notes.isEmpty());
        m_notesLabel->setVisible(!notes.isEmpty() && m_notesButton->isChecked());
        if (!imported.added.empty()) {
            m_database->notifyRunsChanged();
        }
    }
    if (m_following) {
        m_timer.start(m_every->value() * 1000);
    }
    emit refreshed();
}

void ClassWindow::showClass(const trackers::ClassProgress& progress,
                            const std::vector<std::int64_t>& ids) {
    m_progress = progress;
    showPredictions();
    m_lossPlot->showClass(progress);
    m_memoryPlot->showClass(progress);
    const QVector<qint64> selected = selectedRuns();
    m_listed.clear();
    m_table->setRowCount(0);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (std::size_t i = 0; i < progress.runs.size(); ++i) {
        const trackers::ClassRun& run = progress.runs[i];
        const auto loss = last(run.loss);
        const auto memory = last(run.memory);
        const std::optional<RunRecord> imported =
            ids[i] ? m_database->store().find_run(ids[i]) : std::nullopt;
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        const QStringList cells = {
            QString::fromStdString(run.student),
            QString::fromStdString(run.name),
            QString::fromStdString(trackers::class_state(run, now)),
            QString::number(std::max(loss ? loss->step : 0, memory ? memory->step : 0)),
            loss ? QString::number(loss->value, 'f', 4) : QString(),
            memory ? formatBytes(std::llround(memory->value * kBytesPerMiB)) : QString(),
            imported ? formatPercent(imported->outcome.val_accuracy) : QString()};
        for (int column = 0; column < kColumns; ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            item->setData(Qt::UserRole, qint64(imported ? ids[i] : 0));
            if (run.status == RunStatus::Oom) {
                item->setForeground(warningColor());
            }
            m_table->setItem(row, column, item);
        }
        if (!imported) {
            continue;  // not yet whole in the database: nothing to compare
        }
        m_listed << ids[i];
        if (selected.contains(ids[i])) {
            m_table->selectionModel()->select(
                m_table->model()->index(row, 0),
                QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
    }
}

QVector<qint64> ClassWindow::selectedRuns() const {
    QVector<qint64> ids;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
        if (const qint64 id =
                m_table->item(index.row(), Student)->data(Qt::UserRole).toLongLong()) {
            ids << id;  // a run still training is not in the database yet
        }
    }
    return ids;
}

void ClassWindow::revealPredictions(bool on) {
    const QSignalBlocker quiet(m_revealButton);
    m_revealButton->setChecked(on);
    m_revealButton->setText(on ? tr("Hide the predictions") : tr("Show the class's predictions"));
    // On a projector the counts take the table's place; hiding them brings it back.
    m_predictions->setVisible(on);
    m_table->setVisible(!on);
    showPredictions();
}

bool ClassWindow::predictionsRevealed() const {
    return m_revealButton->isChecked();
}

QString ClassWindow::predictionsText() const {
    return predictionsRevealed() ? m_predictions->toPlainText() : QString();
}

void ClassWindow::showPredictions() {
    if (predictionsRevealed()) {
        m_predictions->setHtml(
            predictionTallyHtml(class_predictions(m_progress), seriesColor(0).name()));
    }
}

QString ClassWindow::status() const {
    return m_status->text();
}

QString ClassWindow::notes() const {
    return m_notesLabel->text();
}

}  // namespace oomlab::ui
