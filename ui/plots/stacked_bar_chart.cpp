#include "plots/stacked_bar_chart.h"

#include <QTextLayout>

#include <cmath>
#include <limits>

#include "common/formatting.h"
#include "plots/memory_axis.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

constexpr int kMostLabelLines = 3;

// `text` broken at spaces into lines no wider than `width`, or nothing where a word is wider
// or it takes more than kMostLabelLines lines.
QStringList wrapped(const QString& text, const QFont& font, int width) {
    QTextLayout layout(text, font);
    QTextOption option;
    option.setWrapMode(QTextOption::WordWrap);
    layout.setTextOption(option);
    QStringList lines;
    bool fits = true;
    layout.beginLayout();
    for (QTextLine line = layout.createLine(); fits && line.isValid(); line = layout.createLine()) {
        line.setLineWidth(width);
        fits = line.naturalTextWidth() <= width && lines.size() < kMostLabelLines;
        lines << text.mid(line.textStart(), line.textLength()).trimmed();
    }
    layout.endLayout();
    return fits ? lines : QStringList();
}

// A standing bar's name in the width it has: whole, on up to three lines; else the run's
// "#id", which the comparison's title names beside its colour; cut only if even that is too
// wide ("#5 ZeR…" said nothing).
QString barName(const QString& label, const QFont& font, int width) {
    if (const QStringList lines = wrapped(label, font, width); !lines.isEmpty()) {
        return lines.join(QLatin1Char('\n'));
    }
    const QString id = label.section(QLatin1Char(' '), 0, 0);
    return QFontMetrics(font).elidedText(id, Qt::ElideRight, width);
}

}  // namespace

std::int64_t StackedBar::total() const {
    std::int64_t sum = 0;
    for (std::int64_t layer : bytes) {
        sum += layer;
    }
    return sum;
}

StackedBarChart::StackedBarChart(Qt::Orientation orientation, const QVector<BarLayer>& layers,
                                 QWidget* parent)
    : ThemedPlot(parent), m_orientation(orientation), m_layerInfo(layers) {
    setInteractions({});
    QCPBars* below = nullptr;
    for (const BarLayer& layer : layers) {
        auto* bars = new QCPBars(keyAxis(), valueAxis());
        bars->setName(layer.name);
        bars->setPen(Qt::NoPen);
        bars->setBrush(layer.color);
        bars->setWidth(kBarWidth);
        addToLegend(bars);
        if (below) {
            bars->moveAbove(below);
        }
        below = bars;
        m_layers.push_back(bars);
    }
    useMemoryAxis(valueAxis());
    keyAxis()->grid()->setVisible(false);
    keyAxis()->setRangeReversed(orientation == Qt::Horizontal);  // read top down
    placeLegendBelow(static_cast<int>(layers.size()));           // one row where the width allows

    m_capLine = new QCPItemStraightLine(this);
    m_capLine->setPen(QPen(warningColor(), 2, Qt::DashLine));
    m_capLine->setVisible(false);
    m_capLabel = new QCPItemText(this);
    m_capLabel->setColor(warningColor());
    m_capLabel->setVisible(false);
    m_capLabel->setClipToAxisRect(false);
    applyPalette();
}

QCPAxis* StackedBarChart::keyAxis() const {
    return m_orientation == Qt::Horizontal ? yAxis : xAxis;
}

QCPAxis* StackedBarChart::valueAxis() const {
    return m_orientation == Qt::Horizontal ? xAxis : yAxis;
}

void StackedBarChart::setStackedBars(const QVector<StackedBar>& bars, std::int64_t capBytes) {
    m_bars = bars;
    QVector<double> keys;
    for (int i = 0; i < bars.size(); ++i) {
        keys.push_back(i + 1);
    }
    keyAxis()->setTicker(QSharedPointer<QCPAxisTickerText>(new QCPAxisTickerText));
    fitAxisLabels();
    keyAxis()->setRange(0.4, bars.size() + 0.6);
    double highest = 0;
    QVector<QCPBars*> listed;
    for (int layer = 0; layer < m_layers.size(); ++layer) {
        QVector<double> values;
        bool held = bars.isEmpty();  // before there are bars, every layer is named
        for (const StackedBar& bar : bars) {
            values.push_back(toMiB(bar.bytes.value(layer)));
            held = held || bar.bytes.value(layer) > 0;
        }
        m_layers[layer]->setData(keys, values, true);
        if (held) {
            listed << m_layers[layer];
        }
    }
    listLayers(listed);
    for (const StackedBar& bar : bars) {
        highest = std::max(highest, toMiB(bar.total()));
    }
    const double cap = toMiB(capBytes);
    m_capLine->setVisible(capBytes > 0);
    m_capLabel->setVisible(capBytes > 0);
    if (capBytes > 0) {
        highest = std::max(highest, cap);
        if (m_orientation == Qt::Horizontal) {
            m_capLine->point1->setCoords(cap, 0);
            m_capLine->point2->setCoords(cap, 1);
            m_capLabel->position->setCoords(cap, 0.5);  // the top: the key axis is reversed
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

void StackedBarChart::listLayers(const QVector<QCPBars*>& layers) {
    QVector<QCPBars*> shown;
    for (QCPBars* layer : m_layers) {
        if (legend->hasItemWithPlottable(layer)) {
            shown << layer;
        }
    }
    if (shown == layers) {
        return;
    }
    for (QCPBars* layer : m_layers) {
        layer->removeFromLegend();
    }
    for (QCPBars* layer : layers) {
        addToLegend(layer);  // in the layers' order
    }
    updateMinimumSize();  // fewer rows of legend, a lower minimum
}

QString StackedBarChart::valuesAt(const QPointF& pixel) const {
    if (!axisRect()->rect().contains(pixel.toPoint())) {
        return {};
    }
    const bool horizontal = m_orientation == Qt::Horizontal;
    const double key = keyAxis()->pixelToCoord(horizontal ? pixel.y() : pixel.x());
    const int bar = static_cast<int>(std::lround(key)) - 1;
    if (bar < 0 || bar >= m_bars.size() || std::abs(key - (bar + 1)) > kBarWidth / 2) {
        return {};
    }
    // Every layer of the bar, the one under the cursor in bold.
    const double value = valueAxis()->pixelToCoord(horizontal ? pixel.x() : pixel.y());
    const StackedBar& pointed = m_bars[bar];
    const std::int64_t total = pointed.total();
    QStringList lines{
        QStringLiteral("<b>%1</b> · %2").arg(pointed.label.toHtmlEscaped(), formatBytes(total))};
    double below = 0;
    for (int layer = 0; layer < m_layerInfo.size(); ++layer) {
        const std::int64_t bytes = pointed.bytes.value(layer);
        if (bytes <= 0) {
            continue;
        }
        const double top = below + toMiB(bytes);
        const QString line = QStringLiteral("%1: %2 (%3 %)")
                                 .arg(m_layerInfo[layer].name, formatBytes(bytes))
                                 .arg(100.0 * double(bytes) / double(total), 0, 'f', 0);
        lines << (value >= below && value < top ? QStringLiteral("<b>%1</b>").arg(line) : line);
        below = top;
    }
    return lines.join(QStringLiteral("<br>"));
}

void StackedBarChart::fitAxisLabels() {
    auto ticker = keyAxis()->ticker().dynamicCast<QCPAxisTickerText>();
    if (!ticker) {
        return;
    }
    const QFont font = keyAxis()->tickLabelFont();
    // Lying bars have their names beside them; standing bars share the width.
    const int room =
        m_orientation == Qt::Vertical && !m_bars.isEmpty()
            ? axisRect()->width() / m_bars.size() - QFontMetrics(font).averageCharWidth()
            : std::numeric_limits<int>::max();
    ticker->clear();
    for (int i = 0; i < m_bars.size(); ++i) {
        ticker->addTick(i + 1, room == std::numeric_limits<int>::max()
                                   ? m_bars[i].label
                                   : barName(m_bars[i].label, font, std::max(room, 1)));
    }
}

double StackedBarChart::valueMiB(int bar, std::size_t layer) const {
    const QCPBars* bars = m_layers.value(static_cast<int>(layer));
    if (!bars || bar < 0 || bar >= bars->data()->size()) {
        return 0;
    }
    return (bars->data()->constBegin() + bar)->value;
}

}  // namespace oomlab::ui
