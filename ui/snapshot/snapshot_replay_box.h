// The snapshot window's what-if: PYTORCH_CUDA_ALLOC_CONF settings typed in, the device's trace
// replayed through the model of PyTorch's caching allocator under them (on a worker thread),
// and what it would have reserved: as `oomlab-cli snapshot whatif` says it, and as a line
// for the timeline.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <cstdint>
#include <utility>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

class QLineEdit;
class QPushButton;

namespace oomlab::ui {

class ProgramRerun;
class WrappedLabel;

class SnapshotReplayBox : public QWidget {
    Q_OBJECT

public:
    explicit SnapshotReplayBox(QWidget* parent = nullptr);

    // The report (kept by the caller while shown) and the device to replay; clears the result.
    void setDevice(const SnapshotReport* report, int deviceIndex);
    void replay(const QString& settings);

    QLineEdit* settings() const { return m_settings; }
    // The device's memory to replay under ("80GiB"); empty: what the program reserved when it
    // ran out of memory, or none.
    QLineEdit* deviceMemory() const { return m_deviceMemory; }
    // Lists every place the model's decisions differ from the trace's, not the first five.
    QPushButton* showAllButton() const { return m_showAll; }
    // The record shown, whose program Run it runs again when it is known.
    void setRecord(const QString& path);
    ProgramRerun* rerun() const { return m_rerun; }
    QString resultText() const;

signals:
    // Reserved after the trace's events, replayed under `settings`; empty when it failed.
    void replayed(const std::vector<std::pair<std::size_t, std::int64_t>>& reserved,
                  const QString& settings);

private:
    struct Outcome {
        QString error;          // why there is no what-if
        SnapshotReport source;  // the report's name only
        std::vector<SnapshotWhatIf> results;
        QString settings;
        std::vector<std::pair<std::size_t, std::int64_t>> reserved;
    };
    void showOutcome();
    void showText();

    const SnapshotReport* m_report = nullptr;
    int m_deviceIndex = 0;
    QLineEdit* m_settings = nullptr;
    QLineEdit* m_deviceMemory = nullptr;
    QPushButton* m_replay = nullptr;
    QPushButton* m_showAll = nullptr;
    Outcome m_outcome;
    WrappedLabel* m_result = nullptr;
    ProgramRerun* m_rerun = nullptr;
    QFutureWatcher<Outcome> m_watcher;
};

}  // namespace oomlab::ui
