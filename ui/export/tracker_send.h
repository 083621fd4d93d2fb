// Saved runs sent to a team's tracker from the workbench: MLflow (a tracking server's URI and
// an experiment) or TensorBoard (a log folder), the same exports as `oomlab-cli runs export
// --to`. The target is remembered, and so is whether each run is sent when it ends.
#pragma once

#include <QDialog>
#include <QFutureWatcher>
#include <QList>
#include <QString>
#include <QVector>
#include <atomic>
#include <map>
#include <memory>
#include <optional>

#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/request_control.h"

namespace oomlab::trackers {
class MlflowLiveRun;
}

class QCheckBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QLineEdit;
class QRadioButton;

namespace oomlab::ui {

struct TrackerTarget {
    bool mlflow = true;  // else TensorBoard
    QString trackingUri;
    QString experiment;
    QString logDir;
    bool sendEachRun = false;  // after every run the workbench trains
    QString user;  // the name runs are sent under (a student's in a class); empty: login name

    static TrackerTarget remembered();
    void remember() const;
    // Why it cannot be sent to (a URI that is not http, no folder); empty when it can.
    QString problem() const;
    QString describe() const;  // "MLflow at URI, experiment E" or "TensorBoard in DIR"
};

// The workbench's fields for a tracker's address and experiment, as its messages name them
// (the command line's options otherwise).
trackers::TrackerFields trackerFields();

// The MLflow server and experiment of `target`, as the engine sends to them.
trackers::MlflowTarget mlflowTarget(const TrackerTarget& target,
                                    const trackers::RequestControl& control = {});

// Sends the runs of the database at `databasePath` (opened here: safe in a worker thread).
// Returns what was sent, a line per run; throws nothing: a failure is the last line, after
// "error: ". `control`: notes while a busy MLflow server is asked again, and a stop. `sent`:
// what MLflow got of the (one) run while it trained, the export going on in that MLflow run.
QString sendRunsToTracker(const QString& databasePath, const QVector<qint64>& runIds,
                          const TrackerTarget& target, const trackers::RequestControl& control = {},
                          const std::optional<trackers::MlflowSentWhileTraining>& sent = {});

// Sends in a worker thread, one request after another, so that the window (and a run that
// trains) never waits on a tracker.
class TrackerSender : public QObject {
    Q_OBJECT

public:
    explicit TrackerSender(QObject* parent = nullptr);
    ~TrackerSender() override;

    // `interactive`: asked for by the user (shown in a message), else after a run ended.
    void send(const QString& databasePath, const QVector<qint64>& runIds,
              const TrackerTarget& target, bool interactive);
    // Run `runId` of `databasePath` is on `target` (an MLflow server) while it trains: its
    // steps every 2 s, from a thread of its own that training never waits for.
    void sendWhileTraining(const QString& databasePath, qint64 runId, const TrackerTarget& target);
    // Run `runId`, sent while it trained, has ended: the rest is sent to the same server, in
    // the same MLflow run, whatever the target is now. False when it was not sent so.
    bool sendEndOfLive(qint64 runId);
    bool busy() const { return m_watcher.isRunning() || !m_queue.isEmpty(); }

signals:
    // `report`: sendRunsToTracker's lines; `failed` when its last line is an error.
    void sent(const QString& report, bool failed, bool interactive);
    // A busy server is to be asked again: what, and when ("… asking again in 4 s (2 of 7)").
    void waiting(const QString& note);

private:
    struct Job {
        QString databasePath;
        QVector<qint64> runIds;
        TrackerTarget target;
        bool interactive = false;
        std::shared_ptr<trackers::MlflowLiveRun> live;  // ended, then gone on from, in the worker
    };
    void startNext();

    QList<Job> m_queue;
    std::map<qint64, Job> m_live;  // runs sent while they train, by id: their end's job
    bool m_interactive = false;
    std::atomic<bool> m_stop{false};  // set when the sender goes: a busy server is not waited for
    QFutureWatcher<QString> m_watcher;
};

class TrackerDialog : public QDialog {
    Q_OBJECT

public:
    // `runCount`: how many runs the dialog sends (0: only the choice of target is edited).
    TrackerDialog(int runCount, QWidget* parent = nullptr);

    TrackerTarget target() const;
    // OK: remembers the target and closes, or says what is wrong with it and stays open.
    void acceptIfValid();
    QString problemShown() const;  // what it said, empty when nothing

    // Sends the runs itself on OK: it shows that it is sending while the tracker answers,
    // then closes; on an error it stays open and says it, so the target can be corrected and
    // sent to again. Closed while sending, the answer comes as a background send's does.
    void sendWith(TrackerSender* sender, const QString& databasePath,
                  const QVector<qint64>& runIds);
    bool sending() const { return m_sending; }
    QString report() const { return m_report; }  // what was sent, once it closed after sending

private:
    void updateEnabled();
    void showSent(const QString& report, bool failed);
    void showProblem(const QString& problem);

    QRadioButton* m_mlflow;
    QRadioButton* m_tensorboard;
    QLineEdit* m_uri;
    QLineEdit* m_experiment;
    QLineEdit* m_user;
    QLineEdit* m_logDir;
    QCheckBox* m_sendEachRun;
    QLabel* m_problem;
    QLabel* m_sendingText;     // "Sending 2 runs to MLflow at …"
    QString m_sendingHeading;  // "Sending the run to …", above a note while a server is busy
    QProgressBar* m_progress;  // busy while the tracker answers
    QPushButton* m_ok;
    TrackerSender* m_sender = nullptr;
    QString m_databasePath;
    QVector<qint64> m_runIds;
    bool m_sending = false;
    QString m_report;
};

}  // namespace oomlab::ui
