// A table's columns read whole at any text size and width: each at least as wide as its
// heading and its widest cell (a width the user chose that is wider is kept; widths kept from
// another text size clipped "Embedding" to "mbedding" in presentation mode), and where they do
// not all fit the table, the columns least needed are left out, one at a time, until they do;
// they come back when there is room (a wider window, a smaller text). Columns are left out only
// when asked (presentation mode); at a desk the table scrolls sideways instead.
#pragma once

#include <QObject>
#include <QStringList>
#include <QVector>

class QModelIndex;
class QTableView;
class QTimer;

namespace oomlab::ui {

class FittedColumns : public QObject {
    Q_OBJECT

public:
    // `leastNeededFirst`: the columns that may be left out, in the order they go; `fill`: the
    // column given what room is left (the header's own stretching of its last section kept a
    // width of another size and scrolled the table sideways).
    FittedColumns(QTableView* view, QVector<int> leastNeededFirst, int fill);

    // Measures the columns' text and fits them again: after new rows or a new text size (a new
    // width of the table lays them out again by itself). A changed row fits them again only
    // where its text no longer fits ("running" became "completed", shown "complet…"), and not
    // within a double-click's time of a click on the table: a column that moved between the two
    // clicks moved the cell under the pointer. The view's model is set before.
    void fit();
    // The same once the event loop turns again: several changes, one fit.
    void fitSoon();
    // True while fitting: the header's resizes are then not the user's.
    bool fitting() const { return m_fitting; }
    // The user sized `column` to `width`: it keeps at least that width from now on.
    void userSized(int column, int width);
    // The widths the header has now are the user's (a header state restored).
    void userSizedAll();
    // Whether columns are left out where they do not fit (presenting); else the table scrolls
    // sideways, every column whole.
    void setLeavingOut(bool on);
    // The headings of the columns left out for room, in the table's order.
    QStringList leftOut() const;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    // Fits again, once no double-click can be under way, where a cell of `first` to `last` is
    // wider than its column.
    void fitIfOutgrown(const QModelIndex& first, const QModelIndex& last);
    // Lays the columns out at the widths measured (measuring them first where none are).
    void layOut();
    void layOutSoon();

    QTableView* m_view;
    QVector<int> m_leastNeededFirst;
    int m_fill;
    bool m_leavingOut = false;
    QVector<int> m_userWidths;  // by column; 0: none chosen
    bool m_fitting = false;
    int m_fittedWidth = -1;  // the table's width when last fitted
    bool m_layOutPending = false;
    QVector<int> m_textWidths;  // by column: its heading's or widest cell's; empty: to measure
    QTimer* m_outgrown;         // a cell outgrew its column: fits when it times out
};

}  // namespace oomlab::ui
