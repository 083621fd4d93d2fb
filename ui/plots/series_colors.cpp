#include "plots/series_colors.h"

#include <QObject>
#include <QString>

#include <array>

#include "oomlab/run/breakdown.h"

namespace oomlab::ui {

QColor warningColor() {
    return QColor(0xd6, 0x27, 0x28);
}

QColor seriesColor(int index) {
    static const std::array<QRgb, 10> colors = {0x1f77b4, 0xe8710a, 0x2ca02c, 0xd62728, 0x9467bd,
                                                0x17becf, 0xbcbd22, 0xe377c2, 0x8c564b, 0x7f7f7f};
    return QColor(colors[static_cast<std::size_t>(index) % colors.size()]);
}

QColor breakdownColor(std::size_t category) {
    static const std::array<QRgb, kBreakdownKeys.size()> colors = {
        0x4e79a7, 0xa0cbe8, 0xf28e2b, 0xffbe7d, 0x59a14f, 0xe15759, 0xb6992d, 0x9d7660};
    return QColor(colors[category % colors.size()]);
}

QString breakdownLabel(std::size_t category) {
    if (kBreakdownKeys[category % kBreakdownKeys.size()] == "other") {
        // On CUDA the device's used memory minus what the allocator reserved; on the CPU the
        // process's memory beyond its tensors, which no allocator holds either.
        return QObject::tr("outside the allocator");
    }
    QString name = QString::fromLatin1(kBreakdownKeys[category % kBreakdownKeys.size()].data(),
                                       static_cast<int>(kBreakdownKeys[category].size()));
    return name.replace('_', ' ');
}

}  // namespace oomlab::ui
