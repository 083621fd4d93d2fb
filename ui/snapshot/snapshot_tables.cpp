#include "snapshot/snapshot_tables.h"

#include <QHeaderView>
#include <QTableWidget>

#include "common/table_sizing.h"
#include "snapshot/source_elision.h"

namespace oomlab::ui {

QTableWidget* snapshotTable(const QString& objectName, const QStringList& headers) {
    auto* table = new QTableWidget(0, int(headers.size()));
    table->setObjectName(objectName);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setWordWrap(false);
    // The figures are always in view; the first column (a source line, often long) takes
    // what is left, shortened keeping its package and file (source_elision.h), whole in its
    // tooltip.
    table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    table->setTextElideMode(Qt::ElideMiddle);
    table->setItemDelegateForColumn(0, new SourceDelegate(table));
    sizeRowsToText(table, 3);
    return table;
}

void setSnapshotRow(QTableWidget* table, int row, const QStringList& cells) {
    for (int column = 0; column < int(cells.size()); ++column) {
        auto* item = new QTableWidgetItem(cells[column]);
        if (column == 0) {
            item->setToolTip(cells[column]);
        } else {
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        }
        table->setItem(row, column, item);
    }
}

}  // namespace oomlab::ui
