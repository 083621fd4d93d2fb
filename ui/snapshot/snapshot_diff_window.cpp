#include "snapshot/snapshot_diff_window.h"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "common/formatting.h"
#include "common/freed_memory.h"
#include "common/wrapped_label.h"
#include "snapshot/snapshot_tables.h"

namespace oomlab::ui {
namespace {

QTableWidget* changeTable(const QString& objectName, const QString& firstColumn) {
    return snapshotTable(objectName, {firstColumn, QObject::tr("before"), QObject::tr("after"),
                                      QObject::tr("change")});
}

void fillChanges(QTableWidget* table, const std::vector<SnapshotChange>& changes) {
    table->setRowCount(int(changes.size()));
    for (int row = 0; row < int(changes.size()); ++row) {
        const SnapshotChange& change = changes[std::size_t(row)];
        setSnapshotRow(table, row,
                       {qs(change.where), formatBytes(change.before), formatBytes(change.after),
                        formatSignedBytes(change.change())});
    }
}

}  // namespace

SnapshotDiffWindow::~SnapshotDiffWindow() {
    giveFreedMemoryBackSoon();  // both snapshots' reports go with the window
}

SnapshotDiffWindow::SnapshotDiffWindow(QWidget* parent) : QWidget(parent, Qt::Window) {
    setObjectName(QStringLiteral("snapshotDiffWindow"));
    setAttribute(Qt::WA_DeleteOnClose);
    m_summary = new WrappedLabel(tr("Reading the snapshots…"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_device = new QComboBox;
    m_device->hide();
    m_kinds = changeTable(QStringLiteral("snapshotDiffKinds"), tr("alive at the peak, for"));
    m_lines = changeTable(QStringLiteral("snapshotDiffLines"), tr("alive at the peak, at"));
    auto* tables = new QSplitter(Qt::Vertical);
    tables->addWidget(m_kinds);
    tables->addWidget(m_lines);
    tables->setSizes({1000, 2000});
    auto* top = new QHBoxLayout;
    top->addWidget(m_summary, 1);
    top->addWidget(m_device, 0, Qt::AlignTop);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(tables, 1);
    resize(1000, 600);
    connect(&m_watcher, &QFutureWatcher<Loaded>::finished, this, &SnapshotDiffWindow::showLoaded);
    connect(m_device, qOverload<int>(&QComboBox::currentIndexChanged), this,
            &SnapshotDiffWindow::showDevice);
}

void SnapshotDiffWindow::open(const QString& before, const QString& after) {
    m_before = before;
    m_after = after;
    setWindowTitle(tr("%1 → %2 — memory snapshots")
                       .arg(QFileInfo(before).fileName(), QFileInfo(after).fileName()));
    m_watcher.setFuture(QtConcurrent::run([first = ss(before), second = ss(after)] {
        Loaded loaded;
        try {
            loaded.devices =
                diff_snapshots(read_snapshot_report(first), read_snapshot_report(second));
        } catch (const std::exception& error) {
            loaded.error = qs(error.what());
        }
        return loaded;
    }));
}

void SnapshotDiffWindow::showLoaded() {
    Loaded read = m_watcher.result();
    m_error = read.error;
    m_devices = std::move(read.devices);
    if (!m_error.isEmpty() || m_devices.empty()) {
        m_summary->setText(m_error.isEmpty() ? tr("Neither snapshot holds a device's memory.")
                                             : m_error.toHtmlEscaped());
        emit loaded();
        return;
    }
    const QSignalBlocker quiet(m_device);
    m_device->clear();
    for (const SnapshotDeviceDiff& device : m_devices) {
        m_device->addItem(qs(snapshot_device_name(device.index)));
    }
    m_device->setVisible(m_devices.size() > 1);
    showDevice(0);
    emit loaded();
}

void SnapshotDiffWindow::showDevice(int index) {
    if (index < 0 || index >= int(m_devices.size())) {
        return;
    }
    const SnapshotDeviceDiff& d = m_devices[std::size_t(index)];
    m_summary->setText(
        tr("%1: <b>peak %2 → %3 allocated (%4)</b>, %5 → %6 reserved then; before: %7, after: "
           "%8. What was alive at %9 of each, the largest changes first:")
            .arg(qs(snapshot_device_name(d.index)), formatBytes(d.peak_before),
                 formatBytes(d.peak_after), formatSignedBytes(d.peak_after - d.peak_before),
                 formatBytes(d.reserved_before), formatBytes(d.reserved_after),
                 QFileInfo(m_before).fileName().toHtmlEscaped(),
                 QFileInfo(m_after).fileName().toHtmlEscaped(), qs(d.moment)));
    setAliveHeaders(m_kinds, m_lines, tr("alive at %1").arg(qs(d.moment)));
    fillChanges(m_kinds, d.kinds);
    fillChanges(m_lines, d.lines);
}

QString SnapshotDiffWindow::summaryText() const {
    return m_summary->text();
}

}  // namespace oomlab::ui
