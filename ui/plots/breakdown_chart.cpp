#include "plots/breakdown_chart.h"

#include <cmath>
#include <limits>

#include "common/formatting.h"
#include "plots/series_colors.h"

namespace oomlab::ui {

BreakdownChart::BreakdownChart(Qt::Orientation orientation, QWidget* parent)
    : ThemedPlot(parent), m_orientation(orientation) {
    setInteractions({});
    QCPBars* below = nullptr;
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        auto* bars = new QCPBars(keyAxis(), valueAxis());
        bars->setName(breakdownLabel(i));
        bars->setPen(Qt::NoPen);
        bars->setBrush(breakdownColor(i));
        bars->setWidth(kBarWidth);
        addToLegend(bars);
        if (below) {
            bars->moveAbove(below);
        }
        below = bars;
        m_categories.push_back(bars);
    }
    valueAxis()->setLabel(tr("MiB"));
    keyAxis()->grid()->setVisible(false);
    placeLegendBelow(4);

    m_capLine = new QCPItemStraightLine(this);
    m_capLine->setPen(QPen(QColor(0xd6, 0x27, 0x28), 2, Qt::DashLine));
    m_capLine->setVisible(false);
    m_capLabel = new QCPItemText(this);
    m_capLabel->setColor(QColor(0xd6, 0x27, 0x28));
    m_capLabel->setVisible(false);
    m_capLabel->setClipToAxisRect(false);
    applyPalette();
}

QCPAxis* BreakdownChart::keyAxis() const {
    return m_orientation == Qt::Horizontal ? yAxis : xAxis;
}

QCPAxis* BreakdownChart::valueAxis() const {
    return m_orientation == Qt::Horizontal ? xAxis : yAxis;
}

void BreakdownChart::setBars(const QVector<BreakdownBar>& bars, std::int64_t capBytes) {
    m_barCount = bars.size();
    m_bars = bars;
    QVector<double> keys;
    for (int i = 0; i < bars.size(); ++i) {
        keys.push_back(i + 1);
    }
    keyAxis()->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
    fitAxisLabels();
    keyAxis()->setRange(0.4, bars.size() + 0.6);
    double highest = 0;
    for (int c = 0; c < m_categories.size(); ++c) {
        QVector<double> values;
        for (const BreakdownBar& bar : bars) {
            values.push_back(toMiB(breakdown_field(bar.breakdown, static_cast<std::size_t>(c))));
        }
        m_categories[c]->setData(keys, values, true);
    }
    for (const BreakdownBar& bar : bars) {
        highest = std::max(highest, toMiB(bar.breakdown.total()));
    }
    const double cap = toMiB(capBytes);
    m_capLine->setVisible(capBytes > 0);
    m_capLabel->setVisible(capBytes > 0);
    if (capBytes > 0) {
        highest = std::max(highest, cap);
        if (m_orientation == Qt::Horizontal) {
            m_capLine->point1->setCoords(cap, 0);
            m_capLine->point2->setCoords(cap, 1);
            m_capLabel->position->setCoords(cap, bars.size() + 0.5);
            m_capLabel->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
        } else {
            m_capLine->point1->setCoords(0, cap);
            m_capLine->point2->setCoords(1, cap);
            m_capLabel->position->setCoords(0.45, cap);
            m_capLabel->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        }
        m_capLabel->setText(tr("cap %1").arg(formatBytes(capBytes)));
    }
    valueAxis()->setRange(0, highest > 0 ? highest * 1.08 : 1.0);
    requestReplot();
}

QString BreakdownChart::valuesAt(const QPointF& pixel) const {
    if (!axisRect()->rect().contains(pixel.toPoint())) {
        return {};
    }
    const bool horizontal = m_orientation == Qt::Horizontal;
    const double key = keyAxis()->pixelToCoord(horizontal ? pixel.y() : pixel.x());
    const int bar = static_cast<int>(std::lround(key)) - 1;
    if (bar < 0 || bar >= m_bars.size() || std::abs(key - (bar + 1)) > kBarWidth / 2) {
        return {};
    }
    // Every category of the bar, the one under the cursor in bold.
    const double value = valueAxis()->pixelToCoord(horizontal ? pixel.x() : pixel.y());
    const MemoryBreakdown& breakdown = m_bars[bar].breakdown;
    QStringList lines{QStringLiteral("<b>%1</b> · %2")
                          .arg(m_bars[bar].label.toHtmlEscaped(), formatBytes(breakdown.total()))};
    double below = 0;
    for (std::size_t c = 0; c < kBreakdownKeys.size(); ++c) {
        const std::int64_t bytes = breakdown_field(breakdown, c);
        if (bytes <= 0) {
            continue;
        }
        const double top = below + toMiB(bytes);
        const QString line = QStringLiteral("%1: %2 (%3 %)")
                                 .arg(breakdownLabel(c), formatBytes(bytes))
                                 .arg(100.0 * double(bytes) / double(breakdown.total()), 0, 'f', 0);
        lines << (value >= below && value < top ? QStringLiteral("<b>%1</b>").arg(line) : line);
        below = top;
    }
    return lines.join(QStringLiteral("<br>"));
}

void BreakdownChart::fitAxisLabels() {
    auto ticker = keyAxis()->ticker().dynamicCast<QCPAxisTickerText>();
    if (!ticker) {
        return;
    }
    const QFontMetrics metrics(keyAxis()->tickLabelFont());
    // Lying bars have their names beside them; standing bars share the width.
    const int room = m_orientation == Qt::Vertical && !m_bars.isEmpty()
                         ? axisRect()->width() / m_bars.size() - metrics.averageCharWidth()
                         : std::numeric_limits<int>::max();
    ticker->clear();
    for (int i = 0; i < m_bars.size(); ++i) {
        ticker->addTick(
            i + 1, room == std::numeric_limits<int>::max()
                       ? m_bars[i].label
                       : metrics.elidedText(m_bars[i].label, Qt::ElideRight, std::max(room, 1)));
    }
}

double BreakdownChart::valueMiB(int bar, std::size_t category) const {
    const QCPBars* bars = m_categories.value(static_cast<int>(category));
    if (!bars || bar < 0 || bar >= bars->data()->size()) {
        return 0;
    }
    return (bars->data()->constBegin() + bar)->value;
}

}  // namespace oomlab::ui
