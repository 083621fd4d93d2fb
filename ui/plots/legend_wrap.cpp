#include "plots/legend_wrap.h"

#include <QVector>

#include <algorithm>

#include <qcustomplot.h>

#include "plots/legend_entry.h"

namespace oomlab::ui {

bool wrapLegendToWidth(QCPLegend* legend, int maxColumns, int width) {
    QVector<LegendEntry*> entries;
    QVector<int> widths;
    for (int i = 0; i < legend->itemCount(); ++i) {
        if (auto* entry = qobject_cast<LegendEntry*>(legend->item(i))) {  // cells may be empty
            entry->setMaxTextWidth(0);
            entries.push_back(entry);
            widths.push_back(entry->minimumOuterSizeHint().width());
        }
    }
    const QMargins margins = legend->margins();
    const int available = width - margins.left() - margins.right();
    int columns = std::min<int>(maxColumns, std::max<int>(1, widths.size()));
    for (; columns > 1; --columns) {
        // Entries fill rows left to right: entry i lands in column i % columns.
        QVector<int> columnWidths(columns, 0);
        for (int i = 0; i < widths.size(); ++i) {
            columnWidths[i % columns] = std::max(columnWidths[i % columns], widths[i]);
        }
        int needed = (columns - 1) * legend->columnSpacing();
        for (const int w : columnWidths) {
            needed += w;
        }
        if (needed <= available) {
            break;
        }
    }
    const bool rewrapped = legend->wrap() != columns;
    if (rewrapped) {
        legend->setWrap(columns);
        legend->setFillOrder(QCPLayoutGrid::foColumnsFirst, true);  // re-flows the entries
    }
    if (columns == 1) {
        // One entry per row and still too wide: the long names end in "…".
        for (int i = 0; i < entries.size(); ++i) {
            if (widths[i] > available) {
                entries[i]->setMaxTextWidth(available - entries[i]->chromeWidth());
            }
        }
    }
    return rewrapped;
}

}  // namespace oomlab::ui
