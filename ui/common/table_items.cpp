#include "common/table_items.h"

#include <QTableWidgetItem>

namespace oomlab::ui {

QTableWidgetItem* figureItem(const QString& text) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    return item;
}

}  // namespace oomlab::ui
