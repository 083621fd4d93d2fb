#include "common/table_sizing.h"

#include <QEvent>
#include <QHeaderView>
#include <QScrollBar>
#include <QTableView>

#include <algorithm>

namespace oomlab::ui {
namespace {

// Sizes its table again whenever the table's text size may have changed.
class RowSizer : public QObject {
public:
    RowSizer(QTableView* table, int rowsInView)
        : QObject(table), m_table(table), m_rowsInView(rowsInView) {
        table->installEventFilter(this);
        resize();
    }

    bool eventFilter(QObject* watched, QEvent* event) override {
        const QEvent::Type type = event->type();
        if (watched == m_table &&
            (type == QEvent::FontChange || type == QEvent::StyleChange || type == QEvent::Polish)) {
            resize();
        }
        return QObject::eventFilter(watched, event);
    }

private:
    void resize() {
        QHeaderView* rows = m_table->verticalHeader();
        // The style's own row height is for its default text; a line and the cell's padding
        // at the text in use, whichever is more.
        rows->resetDefaultSectionSize();
        const int line = m_table->fontMetrics().height() + 2 * kCellPadding;
        rows->setDefaultSectionSize(std::max(rows->defaultSectionSize(), line));
        if (m_rowsInView <= 0) {
            return;
        }
        const QHeaderView* heading = m_table->horizontalHeader();
        const int headingHeight = heading->isHidden() ? 0 : heading->sizeHint().height();
        const int scrollBar = m_table->horizontalScrollBarPolicy() == Qt::ScrollBarAlwaysOff
                                  ? 0
                                  : m_table->horizontalScrollBar()->sizeHint().height();
        m_table->setMinimumHeight(2 * m_table->frameWidth() + headingHeight +
                                  m_rowsInView * rows->defaultSectionSize() + scrollBar);
    }

    static constexpr int kCellPadding = 3;
    QTableView* m_table;
    int m_rowsInView;
};

}  // namespace

void sizeRowsToText(QTableView* table, int rowsInView) {
    new RowSizer(table, rowsInView);
}

}  // namespace oomlab::ui
