#include "oomlab/common/format.h"

#include <cmath>
#include <cstdio>

namespace oomlab {

std::string format_bytes(std::int64_t bytes) {
    char text[32];
    const double value = static_cast<double>(bytes);
    const double magnitude = std::fabs(value);
    if (magnitude < 1024.0) {
        std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
    } else if (magnitude < 1024.0 * 1024.0) {
        std::snprintf(text, sizeof text, "%.1f KiB", value / 1024.0);
    } else if (magnitude < 1024.0 * kBytesPerMiB) {
        std::snprintf(text, sizeof text, "%.1f MiB", value / kBytesPerMiB);
    } else {
        std::snprintf(text, sizeof text, "%.2f GiB", value / (1024.0 * kBytesPerMiB));
    }
    return text;
}

std::string counted(std::size_t count, const std::string& one) {
    return std::to_string(count) + " " + one + (count == 1 ? "" : "s");
}

std::string format_duration(double seconds) {
    if (seconds < 0 || !std::isfinite(seconds)) {
        return "—";
    }
    char text[32];
    if (seconds < 1) {
        std::snprintf(text, sizeof text, "%.2f s", seconds);
    } else if (seconds < 59.5) {
        std::snprintf(text, sizeof text, seconds < 10 ? "%.1f s" : "%.0f s", seconds);
    } else {
        const long long total = std::llround(seconds);
        if (total < 3600) {
            std::snprintf(text, sizeof text, "%lld min %02lld s", total / 60, total % 60);
        } else {
            std::snprintf(text, sizeof text, "%lld h %02lld min", total / 3600,
                          (total % 3600) / 60);
        }
    }
    return text;
}

}  // namespace oomlab
