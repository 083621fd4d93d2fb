// A memory snapshot of any PyTorch program, opened in the workbench (File → Open memory
// snapshot…): for each device the timeline of allocated and reserved memory with the peak and
// the out-of-memory events, what was alive at the peak (or at the moment clicked on the
// timeline) by what it was for and by source line, fragmentation, and what to do; compared with
// another snapshot (before and after a fix), and for the engine's own snapshots, the experiment
// that recorded it, to load and run again with a fix; its trace replayed under other
// allocator settings (SnapshotReplayBox).
#pragma once

#include <QFutureWatcher>
#include <QTimer>
#include <QWidget>

#include <atomic>
#include <memory>
#include <optional>

#include "oomlab/snapshot_reader/snapshot_report.h"

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace oomlab::ui {

class SnapshotDiffWindow;
class SnapshotReplayBox;
class SnapshotTimeline;
class WrappedLabel;

// The open dialogs' filter: the files `snapshot show` reads (a pickle, a JSON snapshot or trace,
// gzipped or not, memory_viz's page).
QString snapshotFileFilter();

class SnapshotWindow : public QWidget {
    Q_OBJECT

public:
    explicit SnapshotWindow(QWidget* parent = nullptr);
    ~SnapshotWindow() override;

    // Reads `path` on a worker thread, with its progress shown and a Cancel; loaded() when it
    // is shown, or the error (or the cancel) in its place. Closing the window stops the read.
    void open(const QString& path);
    // Stops a read in progress within a chunk of the file (a megabyte).
    void cancel();

    QString error() const { return m_error; }
    const SnapshotReport& report() const { return m_report; }
    SnapshotTimeline* timeline() const { return m_timeline; }
    QTableWidget* kinds() const { return m_kinds; }
    QTableWidget* lines() const { return m_lines; }
    QString summaryText() const;
    QString adviceText() const;
    QString momentText() const;
    // The tables show what was alive after `event` events (as a click on the timeline does),
    // or at the peak.
    void showMoment(std::optional<std::size_t> event);
    // A window with this snapshot as "before" and `after` beside it.
    SnapshotDiffWindow* compareWith(const QString& after);
    QPushButton* loadExperimentButton() const { return m_loadExperiment; }
    // The snapshot as SQLite tables in `path` (oomlab-cli snapshot sql's); the error, if any.
    // A file there that is not such a database is left as it is.
    QString saveAsDatabase(const QString& path);
    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* cancelButton() const { return m_cancel; }
    SnapshotReplayBox* replayBox() const { return m_replayBox; }

signals:
    void loaded();
    // The settings of the run that recorded it (JSON), asked to be loaded into the panel.
    void experimentRequested(const QString& configJson, const QString& source);

private:
    void showLoaded();
    void showDevice(int index);
    const SnapshotDevice* currentDevice() const;

    void showProgress();

    struct Loaded {
        SnapshotReport report;
        QString error;  // why the file could not be read
    };
    // Shared with the worker, which may outlive the window by a chunk.
    struct Reading {
        std::atomic<const char*> phase{"reading"};  // a SnapshotStage's
        std::atomic<std::uint64_t> read{0};
        std::atomic<std::uint64_t> size{0};
        std::atomic<bool> cancelled{false};
    };
    std::shared_ptr<Reading> m_reading;
    QTimer m_progressTimer;
    QFutureWatcher<Loaded> m_watcher;
    QString m_path;
    QString m_error;
    SnapshotReport m_report;
    WrappedLabel* m_summary = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QComboBox* m_device = nullptr;
    SnapshotTimeline* m_timeline = nullptr;
    QTableWidget* m_kinds = nullptr;
    QTableWidget* m_lines = nullptr;
    WrappedLabel* m_advice = nullptr;
    QLabel* m_moment = nullptr;
    QPushButton* m_toPeak = nullptr;
    QPushButton* m_compare = nullptr;
    QPushButton* m_saveDatabase = nullptr;
    QPushButton* m_loadExperiment = nullptr;
    SnapshotReplayBox* m_replayBox = nullptr;
    // What shows a report (the advice, the actions, the replay, the plot and tables): hidden
    // while none is read, so that a file that could not be read shows its message alone.
    QWidget* m_reportView = nullptr;
};

}  // namespace oomlab::ui
