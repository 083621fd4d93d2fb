#include "common/fitted_columns.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QEvent>
#include <QHeaderView>
#include <QTableView>
#include <QTimer>

#include <algorithm>

namespace oomlab::ui {

FittedColumns::FittedColumns(QTableView* view, QVector<int> leastNeededFirst, int fill)
    : QObject(view),
      m_view(view),
      m_leastNeededFirst(std::move(leastNeededFirst)),
      m_fill(fill),
      m_outgrown(new QTimer(this)) {
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->viewport()->installEventFilter(this);
    m_outgrown->setSingleShot(true);
    m_outgrown->setInterval(QApplication::doubleClickInterval());
    connect(m_outgrown, &QTimer::timeout, this, &FittedColumns::fit);
    connect(m_view->model(), &QAbstractItemModel::dataChanged, this, &FittedColumns::fitIfOutgrown);
}

void FittedColumns::fitIfOutgrown(const QModelIndex& first, const QModelIndex& last) {
    const QHeaderView* header = m_view->horizontalHeader();
    for (int row = first.row(); row <= last.row(); ++row) {
        for (int column = first.column(); column <= last.column(); ++column) {
            const QModelIndex cell = m_view->model()->index(row, column, first.parent());
            if (!header->isSectionHidden(column) &&
                m_view->sizeHintForIndex(cell).width() > header->sectionSize(column)) {
                m_outgrown->start();
                return;
            }
        }
    }
}

void FittedColumns::fitSoon() {
    m_textWidths.clear();
    layOutSoon();
}

void FittedColumns::layOutSoon() {
    if (!m_layOutPending) {
        m_layOutPending = true;
        QTimer::singleShot(0, this, [this] {
            m_layOutPending = false;
            layOut();
        });
    }
}

void FittedColumns::fit() {
    m_textWidths.clear();
    layOut();
}

void FittedColumns::layOut() {
    if (m_fitting) {
        return;
    }
    m_fitting = true;
    QHeaderView* header = m_view->horizontalHeader();
    const int columns = header->count();
    for (int column = 0; column < columns; ++column) {
        m_view->setColumnHidden(column, false);
    }
    // The text's widths are measured once for these rows and this text size (a few hundred
    // cells a column): a new width of the table only lays them out again.
    if (m_textWidths.size() != columns) {
        m_textWidths.resize(columns);
        for (int column = 0; column < columns; ++column) {
            m_textWidths[column] =
                std::max(header->sectionSizeHint(column),
                         static_cast<const QAbstractItemView*>(m_view)->sizeHintForColumn(column));
        }
    }
    m_userWidths.resize(columns);
    QVector<int> widths(columns);
    int total = 0;
    for (int column = 0; column < columns; ++column) {
        widths[column] = std::max(m_textWidths[column], m_userWidths[column]);
        total += widths[column];
    }
    const int room = m_view->viewport()->width();
    for (const int column : m_leastNeededFirst) {
        if (!m_leavingOut || total <= room) {
            break;
        }
        m_view->setColumnHidden(column, true);
        total -= widths[column];
    }
    if (total < room) {
        widths[m_fill] += room - total;
    }
    for (int column = 0; column < columns; ++column) {
        if (!header->isSectionHidden(column)) {
            header->resizeSection(column, widths[column]);
        }
    }
    const QStringList out = leftOut();
    header->setToolTip(out.isEmpty() ? QString()
                                     : tr("Left out for room: %1. A wider window or a smaller "
                                          "text shows them.")
                                           .arg(out.join(QStringLiteral(", "))));
    m_fittedWidth = room;
    m_fitting = false;
}

void FittedColumns::userSized(int column, int width) {
    if (column >= m_userWidths.size()) {
        m_userWidths.resize(column + 1);
    }
    m_userWidths[column] = width;
}

void FittedColumns::userSizedAll() {
    const QHeaderView* header = m_view->horizontalHeader();
    m_userWidths.resize(header->count());
    for (int column = 0; column < header->count(); ++column) {
        m_userWidths[column] = header->sectionSize(column);
    }
}

void FittedColumns::setLeavingOut(bool on) {
    m_leavingOut = on;
    layOutSoon();
}

QStringList FittedColumns::leftOut() const {
    QStringList headings;
    const QHeaderView* header = m_view->horizontalHeader();
    for (int column = 0; column < header->count(); ++column) {
        if (header->isSectionHidden(column)) {
            headings << m_view->model()->headerData(column, Qt::Horizontal).toString();
        }
    }
    return headings;
}

bool FittedColumns::eventFilter(QObject* watched, QEvent* event) {
    // A click may be the first of a double-click: a refit waits until the second has come.
    if (watched == m_view->viewport() && m_outgrown->isActive() &&
        (event->type() == QEvent::MouseButtonPress ||
         event->type() == QEvent::MouseButtonDblClick)) {
        m_outgrown->start();
    }
    // A new width fits the columns again once the layouts have settled (a column shown or
    // left out may bring a scroll bar and change the width once more).
    if (watched == m_view->viewport() && event->type() == QEvent::Resize &&
        m_view->viewport()->width() != m_fittedWidth) {
        layOutSoon();
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace oomlab::ui
