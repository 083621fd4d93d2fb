// How the workbench's table models draw their cells, one rule each.
#pragma once

#include <QFont>
#include <QVariant>

namespace oomlab::ui {

// A figure (bytes, a count): right-aligned, so digits line up down the column.
inline QVariant figureAlignment() {
    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
}

// A total or a section title.
inline QFont boldFont() {
    QFont font;
    font.setBold(true);
    return font;
}

}  // namespace oomlab::ui
