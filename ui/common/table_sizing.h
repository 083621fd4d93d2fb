// Tables whose rows follow the text size: a view's row height is fixed when it is made, so
// presentation mode's larger text overlapped the rows under it, and a table squeezed by its
// neighbours showed one row or less.
#pragma once

class QTableView;

namespace oomlab::ui {

// From now on `table`'s rows are as tall as a line of its text (and the style's padding), at
// every text size; with `rowsInView` > 0 its minimum height shows that many rows under the
// heading, so a layout gives it room for them or scrolls.
void sizeRowsToText(QTableView* table, int rowsInView = 0);

}  // namespace oomlab::ui
