// Colours that stay distinct from one another (and for most colour-vision deficiencies) on
// light and dark backgrounds.
#pragma once

#include <QColor>

#include <cstddef>

namespace oomlab::ui {

// The i-th colour of a qualitative palette (cycles after 10).
QColor seriesColor(int index);

// The colour of what went wrong or must not be crossed: a cap, an OOM, a figure off its
// prediction, an invalid setting.
QColor warningColor();

// The colour of a memory category (index into kBreakdownKeys).
QColor breakdownColor(std::size_t category);

// Display name of a memory category ("embedding table", "optimizer state", ...).
QString breakdownLabel(std::size_t category);

}  // namespace oomlab::ui
