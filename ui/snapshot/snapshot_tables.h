// The tables of the snapshot windows: a name column (its text also the tooltip: source lines
// are long) and figure columns aligned right.
#pragma once

#include <QStringList>

class QTableWidget;

namespace oomlab::ui {

QTableWidget* snapshotTable(const QString& objectName, const QStringList& headers);
// Row `row`: `cells` from the first column on, the first the name.
void setSnapshotRow(QTableWidget* table, int row, const QStringList& cells);

}  // namespace oomlab::ui
