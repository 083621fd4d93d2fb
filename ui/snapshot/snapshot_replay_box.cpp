#include "snapshot/snapshot_replay_box.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent>

#include "common/formatting.h"
#include "common/wrapped_label.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "snapshot/program_rerun.h"

namespace oomlab::ui {

SnapshotReplayBox::SnapshotReplayBox(QWidget* parent) : QWidget(parent) {
    m_settings = new QLineEdit;
    m_settings->setObjectName(QStringLiteral("snapshotAllocConf"));
    m_settings->setPlaceholderText(QStringLiteral("expandable_segments:True"));
    m_settings->setToolTip(
        tr("PYTORCH_CUDA_ALLOC_CONF as PyTorch reads it: expandable_segments, "
           "max_split_size_mb, roundup_power2_divisions, garbage_collection_threshold"));
    m_replay = new QPushButton(tr("Replay"));
    m_replay->setObjectName(QStringLiteral("snapshotReplay"));
    m_replay->setToolTip(
        tr("Replay the trace through a model of PyTorch's caching allocator under these "
           "settings: what it would have reserved, and whether its out-of-memory errors "
           "would still happen"));
    m_deviceMemory = new QLineEdit;
    m_deviceMemory->setObjectName(QStringLiteral("snapshotDeviceMemory"));
    m_deviceMemory->setPlaceholderText(tr("as recorded"));
    m_deviceMemory->setMaximumWidth(fontMetrics().horizontalAdvance(QStringLiteral("M")) * 9);
    m_deviceMemory->setToolTip(
        tr("The device's memory to replay under, e.g. 80GiB. Empty: what the program had "
           "reserved when it ran out of memory (or no limit when it never did)"));
    m_showAll = new QPushButton(tr("Show all"));
    m_showAll->setObjectName(QStringLiteral("snapshotReplayShowAll"));
    m_showAll->setToolTip(
        tr("List every request where the model's decision differs from the trace's"));
    m_showAll->hide();
    m_rerun = new ProgramRerun;
    m_result = new WrappedLabel;
    m_result->setObjectName(QStringLiteral("snapshotReplayResult"));
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Allocator settings:")));
    row->addWidget(m_settings, 1);
    row->addWidget(new QLabel(tr("Device memory:")));
    row->addWidget(m_deviceMemory);
    row->addWidget(m_replay);
    row->addWidget(m_rerun->button());
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(m_result);
    layout->addWidget(m_showAll, 0, Qt::AlignLeft);
    layout->addWidget(m_rerun);
    connect(m_rerun->button(), &QPushButton::clicked, this,
            [this] { m_rerun->run(m_settings->text()); });
    connect(m_replay, &QPushButton::clicked, this, [this] { replay(m_settings->text()); });
    connect(m_settings, &QLineEdit::returnPressed, this, [this] { replay(m_settings->text()); });
    connect(m_deviceMemory, &QLineEdit::returnPressed, this,
            [this] { replay(m_settings->text()); });
    connect(m_showAll, &QPushButton::clicked, this, [this] {
        m_showAll->hide();
        showText();
    });
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, &SnapshotReplayBox::showOutcome);
}

void SnapshotReplayBox::setDevice(const SnapshotReport* report, int deviceIndex) {
    m_report = report;
    m_deviceIndex = deviceIndex;
    m_outcome = {};
    m_showAll->hide();
    m_result->clear();
}

void SnapshotReplayBox::setRecord(const QString& path) {
    m_rerun->setRecord(path);
}

QString SnapshotReplayBox::resultText() const {
    return m_result->text();
}

void SnapshotReplayBox::replay(const QString& settings) {
    if (!m_report || m_watcher.isRunning()) {
        return;
    }
    m_replay->setEnabled(false);
    m_result->setText(tr("Replaying the trace…"));
    // A copy of the one device, so the worker reads nothing the window may replace.
    SnapshotReport one;
    one.source = m_report->source;
    one.alloc_conf = m_report->alloc_conf;
    for (const SnapshotDevice& device : m_report->devices) {
        if (device.index == m_deviceIndex) {
            one.devices.push_back(device);
        }
    }
    const std::string memory = ss(m_deviceMemory->text().trimmed());
    m_watcher.setFuture(QtConcurrent::run([report = std::move(one), conf = ss(settings), memory] {
        Outcome outcome;
        outcome.source.source = report.source;
        try {
            outcome.results = snapshot_whatif(
                report, conf.empty() ? std::nullopt : std::optional(conf),
                memory.empty() ? std::nullopt
                               : std::optional(device_memory_bytes(memory, "Device memory")));
            if (!outcome.results.empty()) {
                outcome.reserved = outcome.results.front().replayed.reserved_line;
                outcome.settings = qs(outcome.results.front().conf);
            }
        } catch (const std::exception& error) {
            outcome.error = qs(error.what());
        }
        return outcome;
    }));
}

void SnapshotReplayBox::showOutcome() {
    m_outcome = m_watcher.result();
    m_replay->setEnabled(true);
    constexpr std::size_t kMissesShown = 5;
    bool more = false;
    for (const SnapshotWhatIf& result : m_outcome.results) {
        more |= result.fidelity.misses.size() > kMissesShown;
    }
    m_showAll->setVisible(more);
    showText();
    emit replayed(m_outcome.reserved,
                  m_outcome.settings.isEmpty() ? tr("the recorded settings") : m_outcome.settings);
}

// The what-if in the words of this box: its own controls, never a command's options.
void SnapshotReplayBox::showText() {
    WhatIfControls controls;
    controls.device_memory = ss(tr("the Device memory field"));
    controls.all_misses = ss(tr("Show all"));
    controls.misses_shown = m_showAll->isHidden() ? SIZE_MAX : 5;
    const QString text =
        m_outcome.error.isEmpty()
            ? qs(snapshot_whatif_text(m_outcome.source, m_outcome.results, controls))
            : m_outcome.error;
    m_result->setText(text.toHtmlEscaped().replace('\n', QStringLiteral("<br>")));
}

}  // namespace oomlab::ui
