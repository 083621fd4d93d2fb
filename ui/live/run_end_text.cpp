#include "live/run_end_text.h"

#include <QObject>

#include "common/formatting.h"
#include "oomlab/run/fragmentation.h"

namespace oomlab::ui {

QString describeRunEnd(const RunEnd& end) {
    switch (end.status()) {
        case RunStatus::Oom: {
            QString text = QObject::tr("The run ran out of memory: %1").arg(end.error());
            const MemoryBreakdown& b = end.outcome.breakdown;
            if (b.total() > 0) {
                QStringList parts;
                for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
                    const std::int64_t bytes = breakdown_field(b, i);
                    if (bytes > 0) {
                        parts << QStringLiteral("%1 %2").arg(
                            QString::fromLatin1(kBreakdownKeys[i].data(),
                                                int(kBreakdownKeys[i].size()))
                                .replace('_', ' '),
                            formatBytes(bytes));
                    }
                }
                text += QObject::tr("\nResident at the failure: %1.")
                            .arg(parts.join(QStringLiteral(", ")));
            }
            // Whether the memory was missing or only in pieces, where the allocator told.
            if (const auto& free_space = end.outcome.fragmentation) {
                text += QStringLiteral("\n") +
                        QString::fromStdString(
                            describe_fragmentation(*free_space, end.config.memory.alloc_conf)) +
                        QStringLiteral(".");
            }
            return text;
        }
        case RunStatus::Failed:
            return end.badInput ? QObject::tr(
                                      "The run could not start: %1\nFix the setting or file it "
                                      "names, then run again; the form marks invalid values.")
                                      .arg(end.error())
                                : QObject::tr(
                                      "The run failed after %1: %2\nThe run and its "
                                      "metrics up to the failure are saved in the Runs tab.")
                                      .arg(formatSteps(end.outcome.steps))
                                      .arg(end.error());
        case RunStatus::Cancelled:
            return QObject::tr("Stopped: %1.").arg(end.error());
        case RunStatus::Completed:
            return QObject::tr("Completed %1 in %2.")
                .arg(formatSteps(end.outcome.steps))
                .arg(formatDuration(end.outcome.wall_seconds));
        default:
            return end.error();
    }
}

}  // namespace oomlab::ui
