#include "runs/fitted_columns.h"

#include <QEvent>
#include <QHeaderView>
#include <QTableView>
#include <QTimer>

#include <algorithm>

namespace oomlab::ui {

FittedColumns::FittedColumns(QTableView* view, QVector<int> leastNeededFirst, int fill)
    : QObject(view), m_view(view), m_leastNeededFirst(std::move(leastNeededFirst)), m_fill(fill) {
    m_view->horizontalHeader()->setStretchLastSection(false);
    m_view->viewport()->installEventFilter(this);
}

void FittedColumns::fitSoon() {
    if (!m_fitPending) {
        m_fitPending = true;
        QTimer::singleShot(0, this, [this] {
            m_fitPending = false;
            fit();
        });
    }
}

void FittedColumns::fit() {
    if (m_fitting) {
        return;
    }
    m_fitting = true;
    QHeaderView* header = m_view->horizontalHeader();
    const int columns = header->count();
    for (int column = 0; column < columns; ++column) {
        m_view->setColumnHidden(column, false);
    }
    m_userWidths.resize(columns);
    QVector<int> widths(columns);
    int total = 0;
    for (int column = 0; column < columns; ++column) {
        const int text =
            std::max(header->sectionSizeHint(column),
                     static_cast<const QAbstractItemView*>(m_view)->sizeHintForColumn(column));
        widths[column] = std::max(text, m_userWidths[column]);
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
    fitSoon();
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
    // A new width fits the columns again once the layouts have settled (a column shown or
    // left out may bring a scroll bar and change the width once more).
    if (watched == m_view->viewport() && event->type() == QEvent::Resize &&
        m_view->viewport()->width() != m_fittedWidth) {
        fitSoon();
    }
    return QObject::eventFilter(watched, event);
}

}  // namespace oomlab::ui
