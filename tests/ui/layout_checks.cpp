#include "layout_checks.h"

#include <QAbstractButton>
#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QLineEdit>
#include <QTabBar>
#include <QTableView>
#include <QTest>

#include <algorithm>

#include "plots/themed_plot.h"

namespace oomlab::ui::test {
namespace {

bool visibleInWindow(const QWidget* widget) {
    return widget->isVisibleTo(widget->window()) && widget->isVisible();
}

bool insideScrollArea(const QWidget* widget) {
    for (const QWidget* parent = widget->parentWidget(); parent; parent = parent->parentWidget()) {
        if (qobject_cast<const QAbstractScrollArea*>(parent)) {
            return true;
        }
    }
    return false;
}

// Texts drawn on the data (a cap's label, an OOM marker's) that cover one another.
QStringList coveredLabels(const QCustomPlot* plot) {
    QVector<const QCPItemText*> texts;
    for (int i = 0; i < plot->itemCount(); ++i) {
        const auto* text = qobject_cast<const QCPItemText*>(plot->item(i));
        if (text && text->visible() && !text->text().isEmpty()) {
            texts << text;
        }
    }
    QStringList covered;
    for (int a = 0; a < texts.size(); ++a) {
        for (int b = a + 1; b < texts.size(); ++b) {
            if (PlotMarkers::labelRect(texts[a]).intersects(PlotMarkers::labelRect(texts[b]))) {
                covered << QStringLiteral("%1: \"%2\" covers \"%3\"")
                               .arg(plot->objectName(), texts[a]->text(), texts[b]->text());
            }
        }
    }
    return covered;
}

// Names on an axis of names (a bar chart's runs) shortened with an ellipsis.
QStringList cutTickLabels(const QCustomPlot* plot) {
    QStringList cut;
    for (const QCPAxis* axis : {plot->xAxis, plot->yAxis}) {
        const auto names = axis->ticker().dynamicCast<QCPAxisTickerText>();
        for (const QString& name : names ? names->ticks().values() : QList<QString>()) {
            if (name.contains(QChar(0x2026))) {
                cut << QStringLiteral("%1: the name \"%2\" is cut").arg(plot->objectName(), name);
            }
        }
    }
    return cut;
}

}  // namespace

// The widgets whose minimum size is largest in `orientation`: what to look at when the
// window cannot fit.
QString largestMinimums(const QWidget* root, Qt::Orientation orientation) {
    QVector<QPair<int, QString>> sizes;
    for (const QWidget* widget : root->findChildren<QWidget*>()) {
        if (visibleInWindow(widget)) {
            const QSize need = widget->minimumSizeHint().expandedTo(widget->minimumSize());
            const int size = orientation == Qt::Horizontal ? need.width() : need.height();
            sizes.push_back({size, QStringLiteral("%1 %2 %3")
                                       .arg(size)
                                       .arg(QString::fromLatin1(widget->metaObject()->className()),
                                            widget->objectName())});
        }
    }
    std::sort(sizes.begin(), sizes.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
    QStringList lines;
    for (int i = 0; i < std::min<int>(16, sizes.size()); ++i) {
        lines << sizes[i].second;
    }
    return lines.join('\n');
}

// Controls narrower or lower than their text needs, or reaching outside the window.
QStringList clippedControls(const QWidget* window) {
    QStringList clipped;
    const QRect inside = window->rect();
    for (QWidget* widget : window->findChildren<QWidget*>()) {
        const bool control = qobject_cast<QAbstractButton*>(widget) ||
                             qobject_cast<QComboBox*>(widget) || qobject_cast<QLineEdit*>(widget) ||
                             qobject_cast<QAbstractSpinBox*>(widget) ||
                             qobject_cast<QTabBar*>(widget);
        // Qt's own parts (a spin box's editor, a dock's title buttons) are Qt's to lay out.
        if (!control || !visibleInWindow(widget) || widget->objectName().startsWith("qt_")) {
            continue;
        }
        // Inside a scroll area a control may be out of view, and a form there may be a pixel
        // or two shorter than its fields ask: neither hides anything.
        const bool scrolled = insideScrollArea(widget);
        const QSize need = widget->minimumSizeHint();
        const QRect where(widget->mapTo(window, QPoint(0, 0)), widget->size());
        const QString name =
            QStringLiteral("%1 \"%2\"")
                .arg(QString::fromLatin1(widget->metaObject()->className()),
                     widget->objectName().isEmpty() ? widget->property("text").toString()
                                                    : widget->objectName());
        if (widget->width() < need.width() || (!scrolled && widget->height() < need.height())) {
            clipped << QStringLiteral("%1 is %2x%3, needs %4x%5")
                           .arg(name)
                           .arg(widget->width())
                           .arg(widget->height())
                           .arg(need.width())
                           .arg(need.height());
        } else if (!scrolled && !inside.contains(where)) {
            clipped << QStringLiteral("%1 reaches outside the window").arg(name);
        }
    }
    return clipped;
}

QStringList crampedPlots(const QWidget* window) {
    QStringList cut;
    for (ThemedPlot* plot : window->findChildren<ThemedPlot*>()) {
        if (!visibleInWindow(plot)) {
            continue;
        }
        plot->replot(QCustomPlot::rpImmediateRefresh);  // lays the legend out
        // The data needs room too: a few lines of text high, so ticks do not overlap and a
        // curve's shape can be seen (bars need less: one bar is read by its length).
        const int line = plot->fontMetrics().height();
        const QRect data = plot->axisRect()->rect();
        const int lines = plot->graphCount() > 0 ? kReadableGraphLines : kReadableBarLines;
        if (data.height() < lines * line || data.width() < 6 * line) {
            cut << QStringLiteral("%1: its axes are %2x%3 px, a text line is %4")
                       .arg(plot->objectName())
                       .arg(data.width())
                       .arg(data.height())
                       .arg(line);
        }
        for (int i = 0; plot->legend->visible() && i < plot->legend->itemCount(); ++i) {
            QCPAbstractLegendItem* item = plot->legend->item(i);
            if (!item) {  // an empty cell of the legend's grid
                continue;
            }
            const QSize need = item->minimumOuterSizeHint();
            const QSize has = item->outerRect().size();
            if (has.width() + 1 < need.width() || has.height() + 1 < need.height()) {
                auto* entry = qobject_cast<QCPPlottableLegendItem*>(item);
                cut << QStringLiteral("%1: \"%2\" is %3x%4 px, needs %5x%6")
                           .arg(plot->objectName(), entry ? entry->plottable()->name() : QString())
                           .arg(has.width())
                           .arg(has.height())
                           .arg(need.width())
                           .arg(need.height());
            }
        }
        cut << coveredLabels(plot) << cutTickLabels(plot);
    }
    return cut;
}

QStringList elidedTableText(const QWidget* root) {
    QStringList elided;
    for (const QTableView* table : root->findChildren<QTableView*>()) {
        const QHeaderView* header = table->horizontalHeader();
        const QAbstractItemModel* model = table->model();
        if (!visibleInWindow(table) || !model) {
            continue;
        }
        const auto check = [&](const QString& text, const QFontMetrics& metrics, int column,
                               const QString& where) {
            const int need = metrics.horizontalAdvance(text);
            if (!text.isEmpty() && header->sectionSize(column) < need) {
                elided << QStringLiteral("%1: %2 \"%3\" is %4 px wide, its text %5 px")
                              .arg(table->objectName(), where, text)
                              .arg(header->sectionSize(column))
                              .arg(need);
            }
        };
        for (int column = 0; column < model->columnCount(); ++column) {
            if (header->isSectionHidden(column)) {
                continue;
            }
            check(model->headerData(column, Qt::Horizontal).toString(), header->fontMetrics(),
                  column, QStringLiteral("heading"));
            for (int row = 0; row < model->rowCount(); ++row) {
                check(model->index(row, column).data().toString(), table->fontMetrics(), column,
                      QStringLiteral("row %1").arg(row));
            }
        }
    }
    return elided;
}

QStringList crampedTables(const QWidget* root) {
    QStringList cramped;
    for (const QTableView* table : root->findChildren<QTableView*>()) {
        const QAbstractItemModel* model = table->model();
        if (!visibleInWindow(table) || !model) {
            continue;
        }
        const QHeaderView* heading = table->horizontalHeader();
        const int line = table->fontMetrics().height();
        int shown = 0;  // rows not hidden (the settings that do not differ are)
        int rowHeight = table->verticalHeader()->defaultSectionSize();
        for (int row = model->rowCount() - 1; row >= 0; --row) {
            if (!table->isRowHidden(row)) {
                rowHeight = table->rowHeight(row);
                ++shown;
            }
        }
        const int rows = std::min(kReadableTableRows, shown);
        if (rowHeight < line) {
            cramped << QStringLiteral("%1: rows are %2 px high, a line of text %3")
                           .arg(table->objectName())
                           .arg(rowHeight)
                           .arg(line);
        }
        if (!heading->isHidden() && heading->height() < heading->fontMetrics().height()) {
            cramped << QStringLiteral("%1: the heading is %2 px high, a line of text %3")
                           .arg(table->objectName())
                           .arg(heading->height())
                           .arg(heading->fontMetrics().height());
        }
        if (table->viewport()->height() < rows * rowHeight) {
            cramped << QStringLiteral("%1: shows %2 px of rows, %3 rows need %4")
                           .arg(table->objectName())
                           .arg(table->viewport()->height())
                           .arg(rows)
                           .arg(rows * rowHeight);
        }
    }
    return cramped;
}

QStringList onceSettled(const std::function<QStringList()>& check) {
    constexpr int kMostWaitMs = 10000;
    QElapsedTimer waited;
    waited.start();
    QStringList found = check();
    while (!found.isEmpty() && waited.elapsed() < kMostWaitMs) {
        QTest::qWait(50);
        found = check();
    }
    return found;
}

}  // namespace oomlab::ui::test
