#include "common/formatting.h"

#include <QLocale>

#include <cmath>

namespace oomlab::ui {

QString formatBytes(std::int64_t bytes) {
    const double value = static_cast<double>(bytes);
    const double magnitude = std::fabs(value);
    if (magnitude < 1024.0) {
        return QStringLiteral("%1 B").arg(bytes);
    }
    if (magnitude < 1024.0 * 1024.0) {
        return QStringLiteral("%1 KiB").arg(value / 1024.0, 0, 'f', 1);
    }
    if (magnitude < 1024.0 * 1024.0 * 1024.0) {
        return QStringLiteral("%1 MiB").arg(value / (1024.0 * 1024.0), 0, 'f', 1);
    }
    return QStringLiteral("%1 GiB").arg(value / (1024.0 * 1024.0 * 1024.0), 0, 'f', 2);
}

QString formatDuration(double seconds) {
    if (seconds < 0 || !std::isfinite(seconds)) {
        return QStringLiteral("—");
    }
    if (seconds < 60) {
        return QStringLiteral("%1 s").arg(seconds, 0, 'f', seconds < 10 ? 1 : 0);
    }
    const auto total = static_cast<long long>(std::llround(seconds));
    if (total < 3600) {
        return QStringLiteral("%1 min %2 s").arg(total / 60).arg(total % 60, 2, 10, QChar('0'));
    }
    return QStringLiteral("%1 h %2 min")
        .arg(total / 3600)
        .arg((total % 3600) / 60, 2, 10, QChar('0'));
}

QString formatOptional(const std::optional<double>& value, int decimals) {
    return value ? QString::number(*value, 'f', decimals) : QStringLiteral("—");
}

QString formatPercent(const std::optional<double>& fraction) {
    return fraction ? QStringLiteral("%1 %").arg(*fraction * 100.0, 0, 'f', 1)
                    : QStringLiteral("—");
}

QString formatCount(std::int64_t count) {
    return QLocale().toString(static_cast<qlonglong>(count));
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
