// Two memory snapshots side by side, before and after a fix (the snapshot window's "Compare
// with…", or `oomlab-cli snapshot diff`): for each device the peaks, and what was alive at each
// by what it was for and by source line, the largest changes first.
#pragma once

#include <QFutureWatcher>
#include <QWidget>

#include <vector>

#include "oomlab/snapshot_reader/snapshot_diff.h"

class QComboBox;
class QTableWidget;

namespace oomlab::ui {

class WrappedLabel;

class SnapshotDiffWindow : public QWidget {
    Q_OBJECT

public:
    explicit SnapshotDiffWindow(QWidget* parent = nullptr);
    ~SnapshotDiffWindow() override;

    // Reads both files on a worker thread; loaded() when the difference is shown, or the error.
    void open(const QString& before, const QString& after);

    QString error() const { return m_error; }
    const std::vector<SnapshotDeviceDiff>& devices() const { return m_devices; }
    QString summaryText() const;
    QTableWidget* kinds() const { return m_kinds; }
    QTableWidget* lines() const { return m_lines; }

signals:
    void loaded();

private:
    void showLoaded();
    void showDevice(int index);

    struct Loaded {
        std::vector<SnapshotDeviceDiff> devices;
        QString error;
    };
    QFutureWatcher<Loaded> m_watcher;
    QString m_before;
    QString m_after;
    QString m_error;
    std::vector<SnapshotDeviceDiff> m_devices;
    WrappedLabel* m_summary = nullptr;
    QComboBox* m_device = nullptr;
    QTableWidget* m_kinds = nullptr;
    QTableWidget* m_lines = nullptr;
};

}  // namespace oomlab::ui
