// A class's runs in one place: the lecturer follows the MLflow server the students' workbenches
// send to; every refresh imports the runs not yet here (`runs import --from mlflow`) and the
// window lists them by student, ready to open in Compare. One import at a time, on a worker
// thread, a fixed pause after each; a server that is down is said, and tried again.
#pragma once

#include <QFutureWatcher>
#include <QTimer>
#include <QVector>
#include <QWidget>
#include <atomic>
#include <memory>

#include "oomlab/trackers/mlflow_import.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace oomlab::ui {

class RunDatabase;

class ClassWindow : public QWidget {
    Q_OBJECT

public:
    explicit ClassWindow(RunDatabase* database, QWidget* parent = nullptr);
    ~ClassWindow() override;

    // Starts following the server in the form (after checking its address), or stops.
    void follow(bool on);
    bool following() const { return m_following; }
    void setRefreshSeconds(int seconds);
    // The runs listed, in the table's order; those selected.
    QVector<qint64> listedRuns() const { return m_listed; }
    QVector<qint64> selectedRuns() const;
    QString status() const;
    QLineEdit* uriField() const { return m_uri; }
    QLineEdit* experimentField() const { return m_experiment; }

signals:
    void compareRequested(const QVector<qint64>& runIds);

private:
    struct Refresh {
        trackers::MlflowImport imported;
        QString error;
    };
    void refreshNow();
    void onRefreshed();
    void showRuns(const std::vector<std::int64_t>& ids);

    RunDatabase* m_database;
    QLineEdit* m_uri;
    QLineEdit* m_experiment;
    QSpinBox* m_every;
    QPushButton* m_followButton;
    QLabel* m_status;
    QTableWidget* m_table;
    QPushButton* m_compare;
    QTimer m_timer;
    QFutureWatcher<Refresh> m_watcher;
    // Set when the window goes: a refresh waiting on a busy server ends at once (the refresh
    // holds it too, as it may outlive the window).
    std::shared_ptr<std::atomic<bool>> m_stop = std::make_shared<std::atomic<bool>>(false);
    bool m_following = false;
    QVector<qint64> m_listed;
    QStringList m_notes;                        // said once each
    std::vector<std::string> m_withoutSummary;  // MLflow's ids of runs without summary.json
    QString m_followed;                         // the server and experiment last followed
};

}  // namespace oomlab::ui
