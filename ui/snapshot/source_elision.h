// A source line as the snapshot tables show it ("…/site-packages/transformers/models/gpt2/
// modeling_gpt2.py:123 (forward)"): where it does not fit, the folders a package is installed
// in go first, then the folders between the package and the file, each replaced by "…", so
// the package and the file stay in view; Qt's own elision in the middle hid both.
#pragma once

#include <QString>
#include <QStyledItemDelegate>

class QFontMetrics;

namespace oomlab::ui {

// `text` shortened to `width` pixels of `metrics`: as above for a path, else in the middle.
QString elidedSource(const QString& text, const QFontMetrics& metrics, int width);

// Draws a column's text through elidedSource.
class SourceDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const override;
};

}  // namespace oomlab::ui
