#include "oomlab/common/format.h"

#include <cstdio>

namespace oomlab {

std::string format_bytes(std::int64_t bytes) {
    char text[32];
    const double mib = static_cast<double>(bytes) / (1 << 20);
    if (mib >= 1024) {
        std::snprintf(text, sizeof text, "%.2f GiB", mib / 1024);
    } else {
        std::snprintf(text, sizeof text, "%.1f MiB", mib);
    }
    return text;
}

}  // namespace oomlab
