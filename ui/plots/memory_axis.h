// Axes of memory. The plots keep their values in MiB; from 10 GiB up an axis reads in GiB
// (ticks on whole or half GiB, labelled "GiB"), so a GPU's 140 GiB is "140", not "143360" or
// "1.4·10⁵".
#pragma once

#include <qcustomplot.h>

namespace oomlab::ui {

class MemoryTicker : public QCPAxisTicker {
public:
    static constexpr double kGiBFromMiB = 10 * 1024;

    // Whether an axis over `range` (MiB) reads in GiB.
    static bool readsInGiB(const QCPRange& range);

protected:
    double getTickStep(const QCPRange& range) override;
    QString getTickLabel(double tick, const QLocale& locale, QChar formatChar,
                         int precision) override;

private:
    bool m_gib = false;  // of the range last ticked
};

// Makes `axis` an axis of memory: its ticker, and a label ("MiB" or "GiB") that follows its
// range.
void useMemoryAxis(QCPAxis* axis);
// Plain numbers again, labelled `label` (a plot that shows memory or the loss).
void usePlainAxis(QCPAxis* axis, const QString& label);

}  // namespace oomlab::ui
