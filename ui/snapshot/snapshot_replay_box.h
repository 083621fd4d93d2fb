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

class QLineEdit;
class QPushButton;

namespace oomlab::ui {

class WrappedLabel;

class SnapshotReplayBox : public QWidget {
    Q_OBJECT

public:
    explicit SnapshotReplayBox(QWidget* parent = nullptr);

    // The report (kept by the caller while shown) and the device to replay; clears the result.
    void setDevice(const SnapshotReport* report, int deviceIndex);
    void replay(const QString& settings);

    QLineEdit* settings() const { return m_settings; }
    QString resultText() const;

signals:
    // Reserved after the trace's events, replayed under `settings`; empty when it failed.
    void replayed(const std::vector<std::pair<std::size_t, std::int64_t>>& reserved,
                  const QString& settings);

private:
    struct Outcome {
        QString text;  // the what-if, or why there is none
        QString settings;
        std::vector<std::pair<std::size_t, std::int64_t>> reserved;
    };
    void showOutcome();

    const SnapshotReport* m_report = nullptr;
    int m_deviceIndex = 0;
    QLineEdit* m_settings = nullptr;
    QPushButton* m_replay = nullptr;
    WrappedLabel* m_result = nullptr;
    QFutureWatcher<Outcome> m_watcher;
};

}  // namespace oomlab::ui
