#include "snapshot/snapshot_tables.h"

#include <QHeaderView>
#include <QScrollBar>
#include <QTableWidget>

#include <algorithm>

#include "common/table_sizing.h"
#include "snapshot/source_elision.h"

namespace oomlab::ui {

QTableWidget* snapshotTable(const QString& objectName, const QStringList& headers,
                            FirstColumn first) {
    auto* table = new QTableWidget(0, int(headers.size()));
    table->setObjectName(objectName);
    table->setHorizontalHeaderLabels(headers);
    table->verticalHeader()->hide();
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table->setWordWrap(false);
    // The figures are always in view; the first column (a source line, often long) takes
    // what is left, shortened keeping its package and file (source_elision.h), whole in its
    // tooltip.
    QHeaderView* header = table->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    sizeRowsToText(table, 3);
    if (first == FirstColumn::Names) {
        // Its columns follow their text (new rows, a new text size): so does its width.
        QObject::connect(header, &QHeaderView::sectionResized, table, [table, header] {
            int columns = 0;  // as measured: the sections' sizes lag the last resize
            for (int column = 0; column < header->count(); ++column) {
                columns += std::max(
                    header->sectionSizeHint(column),
                    static_cast<const QAbstractItemView*>(table)->sizeHintForColumn(column));
            }
            table->setMinimumWidth(columns + 2 * table->frameWidth() +
                                   table->verticalScrollBar()->sizeHint().width());
        });
        return table;
    }
    header->setSectionResizeMode(0, QHeaderView::Stretch);
    table->setTextElideMode(Qt::ElideMiddle);
    table->setItemDelegateForColumn(0, new SourceDelegate(table));
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

void setAliveHeaders(QTableWidget* kinds, QTableWidget* lines, const QString& alive) {
    kinds->setHorizontalHeaderItem(0, new QTableWidgetItem(alive + QObject::tr(", for")));
    lines->setHorizontalHeaderItem(0, new QTableWidgetItem(alive + QObject::tr(", at")));
}

}  // namespace oomlab::ui
