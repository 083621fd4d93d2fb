// A legend in rows under the axes that wraps to the plot's width: as many columns as fit, up to
// a maximum, and with one column, long names ending in "…".
#pragma once

class QCPLegend;

namespace oomlab::ui {

// Re-flows `legend`'s entries for `width` pixels; true when its number of columns changed (its
// height, and so the plot's minimum height, changed too).
bool wrapLegendToWidth(QCPLegend* legend, int maxColumns, int width);

}  // namespace oomlab::ui
