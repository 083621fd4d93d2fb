#include "runs/class_window.h"

#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QTime>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <set>

#include "common/formatting.h"
#include "export/tracker_send.h"
#include "oomlab/common/errors.h"
#include "oomlab/trackers/mlflow_export.h"
#include "runs/run_database.h"

namespace oomlab::ui {
namespace {

constexpr int kDefaultRefreshSeconds = 10;
enum Column { Student, Run, Status, Steps, Peak, Accuracy, kColumns };

// "alice: batch 64" -> {"alice", "batch 64"}: an imported run is named after its student.
std::pair<QString, QString> studentAndRun(const QString& name) {
    const int colon = name.indexOf(QLatin1String(": "));
    return colon < 0 ? std::pair{QString(), name}
                     : std::pair{name.left(colon), name.mid(colon + 2)};
}

QString counted(std::size_t n, const QString& one, const QString& many) {
    return QString::number(n) + QLatin1Char(' ') + (n == 1 ? one : many);
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
      m_table(new QTableWidget(0, kColumns, this)),
      m_compare(new QPushButton(tr("Compare selected"), this)) {
    setWindowTitle(tr("Class runs"));
    const TrackerTarget remembered = TrackerTarget::remembered();
    m_uri->setText(remembered.trackingUri);
    m_experiment->setText(remembered.experiment);
    m_every->setRange(2, 300);
    m_every->setSuffix(tr(" s"));
    m_every->setValue(kDefaultRefreshSeconds);
    m_status->setWordWrap(true);
    m_status->setText(
        tr("Follow the MLflow server your students' workbenches send to "
           "(Send to tracker…, Also send each run here when it ends)."));
    m_table->setHorizontalHeaderLabels(
        {tr("Student"), tr("Run"), tr("Status"), tr("Steps"), tr("Peak"), tr("Val acc")});
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->hide();
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
    buttons->addStretch();
    buttons->addWidget(m_compare);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);
    layout->addLayout(buttons);

    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &ClassWindow::refreshNow);
    connect(&m_watcher, &QFutureWatcher<Refresh>::finished, this, &ClassWindow::onRefreshed);
    connect(m_followButton, &QPushButton::clicked, this, [this] { follow(!m_following); });
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
        m_withoutSummary.clear();
        showRuns({});
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
            refresh.imported = trackers::import_from_mlflow(store, source);
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
        for (const std::string& note : imported.notes) {
            if (note != withoutSummary && !m_notes.contains(QString::fromStdString(note))) {
                m_notes << QString::fromStdString(note);
            }
        }
        showRuns(imported.present);
        std::set<QString> students;
        for (int row = 0; row < m_table->rowCount(); ++row) {
            students.insert(m_table->item(row, Student)->text());
        }
        QString text = tr("%1 from %2, %3 new; read at %4%5")
                           .arg(counted(imported.present.size(), tr("run"), tr("runs")),
                                counted(students.size(), tr("student"), tr("students")))
                           .arg(imported.added.size())
                           .arg(at, next);
        if (imported.being_sent) {
            text += tr("; %1 still being sent").arg(imported.being_sent);
        }
        QStringList notes = m_notes;
        if (!m_withoutSummary.empty()) {
            notes.prepend(QString::fromStdString(trackers::without_summary_note(m_withoutSummary)));
        }
        if (!notes.isEmpty()) {
            text += QStringLiteral("\n") + tr("Note: ") + notes.join(QLatin1String("; "));
        }
        m_status->setText(text);
        if (!imported.added.empty()) {
            m_database->notifyRunsChanged();
        }
    }
    if (m_following) {
        m_timer.start(m_every->value() * 1000);
    }
}

void ClassWindow::showRuns(const std::vector<std::int64_t>& ids) {
    const std::set<std::int64_t> wanted(ids.begin(), ids.end());
    const QVector<qint64> selected = selectedRuns();
    m_listed.clear();
    m_table->setRowCount(0);
    for (const RunRecord& run : m_database->store().list_runs()) {
        if (!wanted.count(run.id)) {
            continue;
        }
        const auto [student, name] = studentAndRun(QString::fromStdString(run.name));
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        const QStringList cells = {student,
                                   name,
                                   statusName(run.outcome.status),
                                   QString::number(run.outcome.steps),
                                   formatBytes(run.outcome.peak_bytes),
                                   formatPercent(run.outcome.val_accuracy)};
        for (int column = 0; column < kColumns; ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            item->setData(Qt::UserRole, qint64(run.id));
            m_table->setItem(row, column, item);
        }
        m_listed << run.id;
        if (selected.contains(run.id)) {
            m_table->selectionModel()->select(
                m_table->model()->index(row, 0),
                QItemSelectionModel::Select | QItemSelectionModel::Rows);
        }
    }
    m_table->resizeColumnsToContents();
}

QVector<qint64> ClassWindow::selectedRuns() const {
    QVector<qint64> ids;
    for (const QModelIndex& index : m_table->selectionModel()->selectedRows()) {
        ids << m_table->item(index.row(), Student)->data(Qt::UserRole).toLongLong();
    }
    return ids;
}

QString ClassWindow::status() const {
    return m_status->text();
}

}  // namespace oomlab::ui
