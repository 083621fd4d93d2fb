// Cells of the workbench's tables.
#pragma once

#include <QString>

class QTableWidgetItem;

namespace oomlab::ui {

// A figure (bytes, a count): right-aligned, so digits line up down the column.
QTableWidgetItem* figureItem(const QString& text);

}  // namespace oomlab::ui
