#include "common/formatting.h"

#include <QLocale>
#include <QObject>

#include "oomlab/common/format.h"

namespace oomlab::ui {

QString formatBytes(std::int64_t bytes) {
    return qs(format_bytes(bytes));
}

QString formatSignedBytes(std::int64_t bytes) {
    return (bytes > 0 ? QStringLiteral("+") : QString()) + formatBytes(bytes);
}

QString formatDuration(double seconds) {
    return qs(format_duration(seconds));
}

QString formatOptional(const std::optional<double>& value, int decimals) {
    return value ? QString::number(*value, 'f', decimals) : QStringLiteral("—");
}

QString formatPercent(const std::optional<double>& fraction) {
    // A no-break space: "45.5" and "%" never end up on two lines.
    return fraction ? QStringLiteral("%1\u00a0%").arg(*fraction * 100.0, 0, 'f', 1)
                    : QStringLiteral("—");
}

QString formatCount(std::int64_t count) {
    return QLocale().toString(static_cast<qlonglong>(count));
}

QString formatSteps(std::int64_t steps) {
    return plural(steps, QObject::tr("%n step"), QObject::tr("%n steps"));
}

QString plural(std::int64_t count, const QString& one, const QString& many) {
    QString text = count == 1 ? one : many;
    return text.replace(QStringLiteral("%n"), formatCount(count));
}

QString memoryFigureName(const std::string& module, const std::string& category) {
    const QString kind = qs(category).replace(QLatin1Char('_'), QLatin1Char(' '));
    return module.empty() ? kind : QStringLiteral("%1 · %2").arg(qs(module), kind);
}

namespace {

QString batchText(int micro, int accumulation) {
    return accumulation > 1 ? QStringLiteral("%1×%2").arg(micro).arg(accumulation)
                            : QString::number(micro);
}

}  // namespace

BatchShape plannedBatch(const ExperimentConfig& config) {
    return {config.train.batch_size, config.train.accumulation};
}

QString endedBatchText(const RunRecord& run, const ExperimentConfig& config) {
    const BatchShape planned = plannedBatch(config);
    const QString plannedText = batchText(planned.batch_size, planned.accumulation);
    if (!batch_adapted(run.outcome, planned)) {
        return plannedText;
    }
    const BatchShape ended = ended_batch(run.outcome, planned);
    return QObject::tr("%1 (adapted from %2)")
        .arg(batchText(ended.batch_size, ended.accumulation), plannedText);
}

QString statusName(RunStatus status) {
    return qs(run_status_name(status));
}

QColor statusColor(RunStatus status) {
    switch (status) {
        case RunStatus::Completed:
            return QColor(0x2e, 0x9d, 0x5b);
        case RunStatus::Oom:
            return QColor(0xd5, 0x3e, 0x1f);
        case RunStatus::Failed:
            return QColor(0xc0, 0x39, 0x8b);
        case RunStatus::Cancelled:
        case RunStatus::Interrupted:
            return QColor(0xc2, 0x8a, 0x0e);
        case RunStatus::Running:
            return QColor(0x2f, 0x7f, 0xd4);
    }
    return {};
}

}  // namespace oomlab::ui
