// The tables of the snapshot windows: a name column (its text also the tooltip: source lines
// are long) and figure columns aligned right.
#pragma once

#include <QStringList>

class QTableWidget;

namespace oomlab::ui {

// What the first column holds: source lines take the room left, shortened keeping their
// package and file; names (what the memory was for) are short and shown whole, the table as
// wide as its columns (at half a projector's width "(allocated before the trace began)" read
// "(allo…egan)").
enum class FirstColumn { SourceLines, Names };

QTableWidget* snapshotTable(const QString& objectName, const QStringList& headers,
                            FirstColumn first = FirstColumn::SourceLines);
// Row `row`: `cells` from the first column on, the first the name.
void setSnapshotRow(QTableWidget* table, int row, const QStringList& cells);
// The first columns' headers of a window's two tables, by kind and by line, said of when they
// were taken: `alive` is "alive at the peak", "alive at the dump", "alive then".
void setAliveHeaders(QTableWidget* kinds, QTableWidget* lines, const QString& alive);

}  // namespace oomlab::ui
