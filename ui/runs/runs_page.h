// Browse the saved runs: filter, sort, rename, annotate, delete, re-run, export, and pick
// two or more to compare.
#pragma once

#include <QStringList>
#include <QVector>
#include <QWidget>

#include "common/run_types.h"
#include "oomlab/config/experiment_config.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QAction;
class QTableView;

namespace oomlab::ui {

class FittedColumns;

class RunDatabase;
class RunsFilterModel;
class RunsModel;
class TrackerDialog;
class TrackerSender;

class RunsPage : public QWidget {
    Q_OBJECT

public:
    explicit RunsPage(RunDatabase* database, QWidget* parent = nullptr);

    RunsModel* model() const { return m_model; }
    RunsFilterModel* filterModel() const { return m_filter; }
    QTableView* view() const { return m_view; }

    QVector<qint64> selectedRunIds() const;
    void selectRuns(const QVector<qint64>& runIds);
    void setFilterText(const QString& text);

    void compareSelected();
    // Load config and Re-run: refused, with the reason in a message and in reuseRefusal(),
    // when the run's stored config cannot be read or its processes are more than the
    // workbench starts (never a different config, or fewer processes, in its place).
    void loadSelected();
    void rerunSelected();
    const QString& reuseRefusal() const { return m_reuseRefusal; }
    QString detailsText() const;  // what the details pane says about the selection
    // What a double-click on run `runId` opens: the run with the runs that tried its fixes,
    // or, for a run that tried one, the run it fixes with every fix tried; in id order.
    QVector<qint64> runWithItsFixes(qint64 runId) const;
    // False when none was deleted; why each refused one was not is in deleteRefusals() (and,
    // with `confirm`, in a message box).
    bool deleteSelected(bool confirm = true);
    const QStringList& deleteRefusals() const { return m_deleteRefusals; }
    void renameCurrent();
    void exportSelected();
    // Asks where (TrackerDialog), then sends the selected runs in the background.
    void sendSelected();
    TrackerSender* trackerSender() const { return m_sender; }
    const QString& lastSendReport() const { return m_lastSendReport; }

    // Presenting, the columns a room needs least are left out where they do not all fit.
    void setPresenting(bool on);

signals:
    void compareRequested(const QVector<qint64>& runIds);
    // `processes`: how many the run trained with (its world size).
    void rerunRequested(const oomlab::ExperimentConfig& config, const QString& name, int processes);
    // Load into the panel: the settings and how many processes trained them.
    void configRequested(const oomlab::ExperimentConfig& config, int processes);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    void updateDetails();
    // An out-of-memory run's fixes and the runs that tried them; a fix run's link.
    QString fixesHtml(const RunRecord& run) const;
    void saveNotes();
    // Columns read whole (fitted_columns.h): when the rows are new and when the text size
    // changes (presentation mode); a new width fits them by itself.
    void fitColumns();
    void showSent(const QString& report, bool failed, bool interactive);
    int currentSourceRow() const;
    // Why the run in `row` cannot be loaded or run again; empty when it can.
    QString whyNotReusable(int row) const;
    // The current run's config and process count, or null after telling why not.
    const ExperimentConfig* reusableConfig(const QString& action, int* processes);

    RunDatabase* m_database;
    TrackerSender* m_sender = nullptr;
    TrackerDialog* m_sendDialog = nullptr;  // open, sending the selected runs itself
    QAction* m_sendToTracker = nullptr;
    QString m_lastSendReport;
    QStringList m_deleteRefusals;
    QString m_reuseRefusal;
    RunsModel* m_model = nullptr;
    RunsFilterModel* m_filter = nullptr;
    QTableView* m_view = nullptr;
    QLineEdit* m_search = nullptr;
    QComboBox* m_status = nullptr;
    QAction* m_compare = nullptr;
    QAction* m_rerun = nullptr;
    QAction* m_delete = nullptr;
    QAction* m_export = nullptr;
    QLabel* m_details = nullptr;
    QPlainTextEdit* m_notes = nullptr;
    QLabel* m_databaseLabel = nullptr;
    qint64 m_notesRunId = 0;
    FittedColumns* m_columns = nullptr;
};

}  // namespace oomlab::ui
