#include "plots/memory_axis.h"

#include <algorithm>
#include <cmath>

namespace oomlab::ui {
namespace {

constexpr double kMiBPerGiB = 1024;

QString unitOf(const QCPRange& range) {
    return MemoryTicker::readsInGiB(range) ? QStringLiteral("GiB") : QStringLiteral("MiB");
}

bool isMemoryAxis(const QCPAxis* axis) {
    return !axis->ticker().dynamicCast<MemoryTicker>().isNull();
}

}  // namespace

bool MemoryTicker::readsInGiB(const QCPRange& range) {
    return std::max(std::abs(range.lower), std::abs(range.upper)) >= kGiBFromMiB;
}

double MemoryTicker::getTickStep(const QCPRange& range) {
    m_gib = readsInGiB(range);
    if (!m_gib) {
        return QCPAxisTicker::getTickStep(range);
    }
    // The step a range in GiB would take, in MiB.
    const QCPRange inGiB(range.lower / kMiBPerGiB, range.upper / kMiBPerGiB);
    return QCPAxisTicker::getTickStep(inGiB) * kMiBPerGiB;
}

QString MemoryTicker::getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                                   int precision) {
    return QCPAxisTicker::getTickLabel(m_gib ? tick / kMiBPerGiB : tick, locale, formatChar,
                                       precision);
}

void useMemoryAxis(QCPAxis* axis) {
    if (!isMemoryAxis(axis)) {
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new MemoryTicker));
    }
    axis->setLabel(unitOf(axis->range()));
    if (!axis->property("memoryLabelFollows").toBool()) {
        axis->setProperty("memoryLabelFollows", true);
        QObject::connect(axis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), axis,
                         [axis](const QCPRange& range) {
                             if (isMemoryAxis(axis)) {
                                 axis->setLabel(unitOf(range));
                             }
                         });
    }
}

void usePlainAxis(QCPAxis* axis, const QString& label) {
    if (isMemoryAxis(axis)) {
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
    axis->setLabel(label);
}

}  // namespace oomlab::ui
