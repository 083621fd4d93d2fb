#include "export/tracker_send.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRadioButton>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "common/wrapped_label.h"
#include "oomlab/common/errors.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/mlflow_live.h"
#include "oomlab/trackers/tensorboard_export.h"

namespace oomlab::ui {
namespace {

QString setting(const char* key, const QString& fallback = {}) {
    return AppSettings::value(QStringLiteral("trackers/") + QLatin1String(key), fallback)
        .toString();
}

void setSetting(const char* key, const QVariant& value) {
    AppSettings::setValue(QStringLiteral("trackers/") + QLatin1String(key), value);
}

// Runs of this database killed while they were sent as they trained (nothing sent their end):
// ended on the server now; what was done, a line each. The runs sent are sent whatever
// becomes of these.
QStringList endRunsLeftRunning(const RunStore& store, const trackers::MlflowTarget& mlflow) {
    QStringList lines;
    try {
        for (const std::int64_t ended : trackers::end_runs_left_running(store, mlflow)) {
            lines << QObject::tr(
                         "run %1 stopped without its end while it was sent (its process "
                         "was killed): it is ended on MLflow now")
                         .arg(ended);
        }
    } catch (const std::exception& error) {
        lines << QObject::tr("the runs left running on MLflow were not ended there: %1")
                     .arg(QString::fromStdString(error.what()));
    }
    return lines;
}

}  // namespace

TrackerTarget TrackerTarget::remembered() {
    TrackerTarget target;
    target.mlflow = setting("kind", QStringLiteral("mlflow")) == QLatin1String("mlflow");
    target.trackingUri = setting("mlflowUri", QStringLiteral("http://127.0.0.1:5000"));
    target.experiment = setting("mlflowExperiment", QStringLiteral("OOM Lab"));
    target.logDir = setting("tensorboardDir");
    target.user = setting("userName");
    target.sendEachRun = AppSettings::value(QStringLiteral("trackers/sendEachRun"), false).toBool();
    return target;
}

void TrackerTarget::remember() const {
    setSetting("kind", mlflow ? QStringLiteral("mlflow") : QStringLiteral("tensorboard"));
    setSetting("mlflowUri", trackingUri);
    setSetting("mlflowExperiment", experiment);
    setSetting("tensorboardDir", logDir);
    setSetting("userName", user);
    setSetting("sendEachRun", sendEachRun);
}

QString TrackerTarget::problem() const {
    if (!mlflow) {
        return logDir.trimmed().isEmpty() ? QObject::tr("Choose the log folder TensorBoard reads.")
                                          : QString();
    }
    try {
        trackers::check_tracking_uri(trackingUri.trimmed().toStdString(), trackerFields().uri);
    } catch (const BadInput& error) {
        return QString::fromStdString(error.what());
    }
    return experiment.trimmed().isEmpty() ? QObject::tr("Name the MLflow experiment.") : QString();
}

QString TrackerTarget::describe() const {
    return mlflow ? QObject::tr("MLflow at %1, experiment \"%2\"").arg(trackingUri, experiment)
                  : QObject::tr("TensorBoard in %1").arg(logDir);
}

trackers::TrackerFields trackerFields() {
    return {QObject::tr("Tracking URI").toStdString(),
            QObject::tr("the Experiment field").toStdString()};
}

trackers::MlflowTarget mlflowTarget(const TrackerTarget& target,
                                    const trackers::RequestControl& control) {
    trackers::MlflowTarget mlflow;
    mlflow.tracking_uri = target.trackingUri.trimmed().toStdString();
    mlflow.experiment = target.experiment.trimmed().toStdString();
    mlflow.control = control;
    mlflow.named = trackerFields();
    mlflow.user = target.user.trimmed().toStdString();
    return mlflow;
}

QString sendRunsToTracker(const QString& databasePath, const QVector<qint64>& runIds,
                          const TrackerTarget& target, const trackers::RequestControl& control,
                          const std::optional<trackers::MlflowSentWhileTraining>& sent) {
    QStringList lines;
    try {
        const RunStore store = RunStore::open(databasePath.toStdString());
        for (const qint64 id : runIds) {
            const trackers::TrackedRun tracked = trackers::tracked_run(store, id);
            if (target.mlflow) {
                trackers::MlflowTarget mlflow = mlflowTarget(target, control);
                if (runIds.size() == 1) {
                    mlflow.sent_while_training = sent;
                }
                lines << QString::fromStdString(
                    describe(tracked, mlflow, trackers::export_to_mlflow(tracked, mlflow)));
                if (id == runIds.back()) {
                    lines << endRunsLeftRunning(store, mlflow);
                }
            } else {
                lines << QString::fromStdString(describe(
                    tracked,
                    trackers::export_to_tensorboard(tracked, target.logDir.toStdString())));
            }
        }
    } catch (const std::exception& error) {
        lines << QStringLiteral("error: ") + QString::fromStdString(error.what());
    }
    return lines.join(QLatin1Char('\n'));
}

TrackerSender::TrackerSender(QObject* parent) : QObject(parent) {
    connect(&m_watcher, &QFutureWatcher<QString>::finished, this, [this] {
        const QString report = m_watcher.result();
        const bool failed =
            report.section(QLatin1Char('\n'), -1).startsWith(QLatin1String("error: "));
        emit sent(report, failed, m_interactive);
        startNext();
    });
}

TrackerSender::~TrackerSender() {
    m_queue.clear();
    m_live.clear();  // each stops, a request under way ended
    m_stop = true;   // a request under way, or a wait to ask again, ends now
    m_watcher.waitForFinished();
}

void TrackerSender::send(const QString& databasePath, const QVector<qint64>& runIds,
                         const TrackerTarget& target, bool interactive) {
    m_queue.append({databasePath, runIds, target, interactive, {}});
    if (!m_watcher.isRunning()) {
        startNext();
    }
}

void TrackerSender::startNext() {
    if (m_queue.isEmpty()) {
        return;
    }
    const Job job = m_queue.takeFirst();
    m_interactive = job.interactive;
    trackers::RequestControl control;
    control.stop = &m_stop;  // the sender waits for this job before it goes (~TrackerSender)
    control.on_wait = [this](const std::string& note) {
        QMetaObject::invokeMethod(
            this, [this, note = QString::fromStdString(note)] { emit waiting(note); },
            Qt::QueuedConnection);
    };
    m_watcher.setFuture(QtConcurrent::run([job, control] {
        // Its last round waited for here, off the window's thread (a slow server's request).
        const std::optional<trackers::MlflowSentWhileTraining> sent =
            job.live ? job.live->finish() : std::nullopt;
        return sendRunsToTracker(job.databasePath, job.runIds, job.target, control, sent);
    }));
}

void TrackerSender::sendWhileTraining(const QString& databasePath, qint64 runId,
                                      const TrackerTarget& target) {
    auto live =
        std::make_shared<trackers::MlflowLiveRun>(mlflowTarget(target), databasePath.toStdString());
    live->start(runId);
    m_live[runId] = {databasePath, {runId}, target, /*interactive=*/false, std::move(live)};
}

bool TrackerSender::sendEndOfLive(qint64 runId) {
    const auto live = m_live.find(runId);
    if (live == m_live.end()) {
        return false;
    }
    m_queue.append(std::move(live->second));
    m_live.erase(live);
    if (!m_watcher.isRunning()) {
        startNext();
    }
    return true;
}

TrackerDialog::TrackerDialog(int runCount, QWidget* parent) : QDialog(parent) {
    setObjectName(QStringLiteral("trackerDialog"));
    setWindowTitle(runCount > 0 ? plural(runCount, tr("Send the run to a tracker"),
                                         tr("Send %n runs to a tracker"))
                                : tr("Tracker"));
    const TrackerTarget saved = TrackerTarget::remembered();
    m_mlflow = new QRadioButton(tr("MLflow tracking server"));
    m_tensorboard = new QRadioButton(tr("TensorBoard log folder"));
    (saved.mlflow ? m_mlflow : m_tensorboard)->setChecked(true);
    m_uri = new QLineEdit(saved.trackingUri);
    m_uri->setObjectName(QStringLiteral("trackerUri"));
    m_experiment = new QLineEdit(saved.experiment);
    m_experiment->setObjectName(QStringLiteral("trackerExperiment"));
    m_user = new QLineEdit(saved.user);
    m_user->setObjectName(QStringLiteral("trackerUser"));
    m_user->setPlaceholderText(QString::fromStdString(trackers::sender_name({})) +
                               tr(" (the login name)"));
    m_user->setToolTip(
        tr("The name your runs are sent under: a class's view lists its "
           "students by it. Set it once on a shared lab account."));
    m_logDir = new QLineEdit(saved.logDir);
    m_logDir->setObjectName(QStringLiteral("trackerLogDir"));
    auto* browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("TensorBoard log folder"), m_logDir->text());
        if (!dir.isEmpty()) {
            m_logDir->setText(dir);
        }
    });
    m_sendEachRun = new QCheckBox(tr("Also send each run here when it ends"));
    m_sendEachRun->setObjectName(QStringLiteral("trackerSendEachRun"));
    m_sendEachRun->setChecked(saved.sendEachRun);
    m_sendEachRun->setToolTip(
        tr("After each run the workbench trains, in the background: a tracker that is down "
           "never stops or slows a run, and the run stays saved here."));

    auto* form = new QFormLayout;
    form->addRow(m_mlflow);
    form->addRow(tr("Tracking URI"), m_uri);
    form->addRow(tr("Experiment"), m_experiment);
    form->addRow(tr("Your name"), m_user);
    form->addRow(m_tensorboard);
    auto* folder = new QHBoxLayout;
    folder->addWidget(m_logDir, 1);
    folder->addWidget(browse);
    form->addRow(tr("Log folder"), folder);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    m_ok = buttons->button(QDialogButtonBox::Ok);
    m_ok->setText(runCount > 0 ? tr("Send") : tr("Save"));
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("trackerProgress"));
    m_progress->setRange(0, 0);  // busy: a tracker tells nothing until it answers
    m_progress->hide();
    // Labels that ask for the height their lines take: a plain wrapped label asks for one
    // line, so a long error squashed the form and was cut.
    m_sendingText = new WrappedLabel;
    m_sendingText->setObjectName(QStringLiteral("trackerSending"));
    m_sendingText->hide();
    m_problem = new WrappedLabel;
    m_problem->setObjectName(QStringLiteral("trackerProblem"));
    m_problem->setStyleSheet(QStringLiteral("color: palette(highlight); font-weight: bold"));
    m_problem->hide();
    connect(buttons, &QDialogButtonBox::accepted, this, &TrackerDialog::acceptIfValid);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_sendEachRun);
    layout->addWidget(m_problem);
    layout->addWidget(m_sendingText);
    layout->addWidget(m_progress);
    layout->addWidget(buttons);
    connect(m_mlflow, &QRadioButton::toggled, this, &TrackerDialog::updateEnabled);
    updateEnabled();
}

TrackerTarget TrackerDialog::target() const {
    TrackerTarget target;
    target.mlflow = m_mlflow->isChecked();
    target.trackingUri = m_uri->text().trimmed();
    target.experiment = m_experiment->text().trimmed();
    target.logDir = m_logDir->text().trimmed();
    target.user = m_user->text().trimmed();
    target.sendEachRun = m_sendEachRun->isChecked();
    return target;
}

void TrackerDialog::acceptIfValid() {
    if (m_sending) {
        return;
    }
    const QString problem = target().problem();
    showProblem(problem);
    if (!problem.isEmpty()) {
        return;
    }
    target().remember();
    if (!m_sender) {
        accept();
        return;
    }
    m_sending = true;
    m_ok->setEnabled(false);
    m_sendingHeading =
        plural(m_runIds.size(), tr("Sending the run to %1…"), tr("Sending %n runs to %1…"))
            .arg(target().describe());
    m_sendingText->setText(m_sendingHeading);
    m_sendingText->show();
    m_progress->show();
    m_sender->send(m_databasePath, m_runIds, target(), /*interactive=*/true);
}

void TrackerDialog::sendWith(TrackerSender* sender, const QString& databasePath,
                             const QVector<qint64>& runIds) {
    m_sender = sender;
    m_databasePath = databasePath;
    m_runIds = runIds;
    connect(sender, &TrackerSender::waiting, this, [this](const QString& note) {
        if (m_sending) {
            m_sendingText->setText(m_sendingHeading + QLatin1Char('\n') + note);
        }
    });
    connect(sender, &TrackerSender::sent, this,
            [this](const QString& report, bool failed, bool interactive) {
                if (m_sending && interactive) {
                    showSent(report, failed);
                }
            });
}

void TrackerDialog::showSent(const QString& report, bool failed) {
    m_sending = false;
    m_ok->setEnabled(true);
    m_sendingText->hide();
    m_progress->hide();
    if (failed) {
        // The runs sent before the error, then the error: the target is there to correct.
        showProblem(report);
        return;
    }
    m_report = report;
    accept();
}

void TrackerDialog::showProblem(const QString& problem) {
    m_problem->setText(problem);
    m_problem->setVisible(!problem.isEmpty());
    if (!problem.isEmpty()) {
        (m_mlflow->isChecked() ? m_uri : m_logDir)->setFocus();
    }
}

QString TrackerDialog::problemShown() const {
    return m_problem->isVisibleTo(this) ? m_problem->text() : QString();
}

void TrackerDialog::updateEnabled() {
    const bool mlflow = m_mlflow->isChecked();
    m_uri->setEnabled(mlflow);
    m_experiment->setEnabled(mlflow);
    m_user->setEnabled(mlflow);
    m_logDir->setEnabled(!mlflow);
}

}  // namespace oomlab::ui
