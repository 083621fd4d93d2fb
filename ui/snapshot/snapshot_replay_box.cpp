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
    m_result = new WrappedLabel;
    m_result->setObjectName(QStringLiteral("snapshotReplayResult"));
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(new QLabel(tr("Allocator settings:")));
    row->addWidget(m_settings, 1);
    row->addWidget(m_replay);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(m_result);
    connect(m_replay, &QPushButton::clicked, this, [this] { replay(m_settings->text()); });
    connect(m_settings, &QLineEdit::returnPressed, this, [this] { replay(m_settings->text()); });
    connect(&m_watcher, &QFutureWatcher<Outcome>::finished, this, &SnapshotReplayBox::showOutcome);
}

void SnapshotReplayBox::setDevice(const SnapshotReport* report, int deviceIndex) {
    m_report = report;
    m_deviceIndex = deviceIndex;
    m_result->clear();
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
    m_watcher.setFuture(QtConcurrent::run([report = std::move(one), conf = ss(settings)] {
        Outcome outcome;
        try {
            const auto results = snapshot_whatif(
                report, conf.empty() ? std::nullopt : std::optional(conf), std::nullopt);
            outcome.text = qs(snapshot_whatif_text(report, results));
            if (!results.empty()) {
                outcome.reserved = results.front().replayed.reserved_line;
                outcome.settings = qs(results.front().conf);
            }
        } catch (const std::exception& error) {
            outcome.text = qs(error.what());
        }
        return outcome;
    }));
}

void SnapshotReplayBox::showOutcome() {
    const Outcome outcome = m_watcher.result();
    m_replay->setEnabled(true);
    m_result->setText(outcome.text.toHtmlEscaped().replace('\n', QStringLiteral("<br>")));
    emit replayed(outcome.reserved,
                  outcome.settings.isEmpty() ? tr("the recorded settings") : outcome.settings);
}

}  // namespace oomlab::ui
