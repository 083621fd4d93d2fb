// A class's runs in one place, live, for a projector: the lecturer follows the MLflow server the
// students' workbenches send to while they train. Every refresh imports the runs sent whole
// (`runs import --from mlflow`), then reads every run's loss and memory so far (`runs class`,
// a bulk request per series); the window plots them (a thin line a student, the class's median
// bold, a cross where a run ran out of memory) and lists them by student, running, done or out
// of memory, the imported ones ready to open in Compare. One refresh at a time, on a worker
// thread, a fixed pause after each; a server that is down is said, and tried again.
#pragma once

#include <QFutureWatcher>
#include <QTimer>
#include <QVector>
#include <QWidget>
#include <atomic>
#include <memory>

#include "oomlab/trackers/mlflow_class.h"
#include "oomlab/trackers/mlflow_import.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QTextBrowser;

namespace oomlab::ui {

class ClassPlot;
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
    // The imported runs listed, in the table's order; those selected.
    QVector<qint64> listedRuns() const { return m_listed; }
    QVector<qint64> selectedRuns() const;
    // The last refresh's counts, or what went wrong; notes() what the server lacks.
    QString status() const;
    QString notes() const;
    QLineEdit* uriField() const { return m_uri; }
    QLineEdit* experimentField() const { return m_experiment; }
    QTableWidget* table() const { return m_table; }
    // The class as the last refresh read it.
    const trackers::ClassProgress& progress() const { return m_progress; }
    ClassPlot* lossPlot() const { return m_lossPlot; }
    // What the class predicted for its lessons against what was measured: hidden until the
    // lecturer reveals it (after the lesson's own reveal), then kept current at each refresh.
    void revealPredictions(bool on);
    bool predictionsRevealed() const;
    QString predictionsText() const;
    ClassPlot* memoryPlot() const { return m_memoryPlot; }

signals:
    void compareRequested(const QVector<qint64>& runIds);
    // A refresh ended (read, or failed and said in the status).
    void refreshed();

private:
    struct Refresh {
        trackers::MlflowImport imported;
        trackers::ClassProgress progress;
        std::vector<std::int64_t> ids;  // each run's id in the database, 0 until imported
        QString error;
    };
    void refreshNow();
    void onRefreshed();
    void showClass(const trackers::ClassProgress& progress, const std::vector<std::int64_t>& ids);
    void showPredictions();

    RunDatabase* m_database;
    QLineEdit* m_uri;
    QLineEdit* m_experiment;
    QSpinBox* m_every;
    QPushButton* m_followButton;
    QLabel* m_status;
    QLabel* m_notesLabel;        // what the server lacks, said once each
    QPushButton* m_notesButton;  // shows them
    QTableWidget* m_table;
    ClassPlot* m_lossPlot;
    ClassPlot* m_memoryPlot;
    QPushButton* m_revealButton;
    QTextBrowser* m_predictions;
    QPushButton* m_compare;
    QTimer m_timer;
    QFutureWatcher<Refresh> m_watcher;
    // Set when the window goes: a refresh waiting on a busy server ends at once (the refresh
    // holds it too, as it may outlive the window).
    std::shared_ptr<std::atomic<bool>> m_stop = std::make_shared<std::atomic<bool>>(false);
    bool m_following = false;
    QVector<qint64> m_listed;
    trackers::ClassProgress m_progress;
    QStringList m_notes;                        // said once each
    std::vector<std::string> m_withoutSummary;  // MLflow's ids of runs without summary.json
    QString m_followed;                         // the server and experiment last followed
};

}  // namespace oomlab::ui
