#include "snapshot/source_elision.h"

#include <QFontMetrics>
#include <QStyleOptionViewItem>

namespace oomlab::ui {

QString elidedSource(const QString& text, const QFontMetrics& metrics, int width) {
    if (metrics.horizontalAdvance(text) <= width) {
        return text;
    }
    // The path is what comes before the file's ".py:LINE" (or the first space).
    const qsizetype end = text.indexOf(QStringLiteral(".py:"));
    const qsizetype pathEnd = end >= 0 ? end : text.indexOf(QLatin1Char(' '));
    const QString path = pathEnd >= 0 ? text.left(pathEnd) : text;
    const QString rest = text.mid(path.size());
    // Windows paths (D:\Dev\.venv\Lib\site-packages\torch\...) keep their own separator.
    const QChar separator =
        path.contains(QLatin1Char('\\')) && !path.contains(QLatin1Char('/')) ? '\\' : '/';
    QStringList parts = path.split(separator);
    // The folders a package is installed in, up to site-packages or dist-packages, go first.
    qsizetype package = 0;
    for (qsizetype i = 0; i + 1 < parts.size(); ++i) {
        if (parts[i] == QLatin1String("site-packages") ||
            parts[i] == QLatin1String("dist-packages")) {
            package = i + 1;
        }
    }
    const auto joined = [&] { return parts.join(separator) + rest; };
    if (package > 0) {
        parts = parts.mid(package);
        parts.prepend(QStringLiteral("…"));
        if (metrics.horizontalAdvance(joined()) <= width) {
            return joined();
        }
    }
    // Then the folders between it (or the first folder) and the file, nearest it first.
    const qsizetype first = package > 0 ? 2 : 1;
    while (parts.size() > first + 1 && metrics.horizontalAdvance(joined()) > width) {
        if (parts[first] != QStringLiteral("…")) {
            parts[first] = QStringLiteral("…");
        } else if (parts.size() > first + 2) {
            parts.removeAt(first + 1);
        } else {
            break;  // only the file is left after it
        }
    }
    const QString shortened = joined();
    if (metrics.horizontalAdvance(shortened) <= width) {
        return shortened;
    }
    // Then the file alone, its end cut last: the function's name goes before the line's
    // number (cut in the middle, "/…/modeling…3 (forward)" lost the file and the line).
    const QString file = parts.last() + rest;
    return metrics.horizontalAdvance(file) <= width
               ? file
               : metrics.elidedText(file, Qt::ElideRight, width);
}

void SourceDelegate::initStyleOption(QStyleOptionViewItem* option, const QModelIndex& index) const {
    QStyledItemDelegate::initStyleOption(option, index);
    // The margins the style draws text within, as QCommonStyle takes them.
    const int margins = 2 * (option->fontMetrics.horizontalAdvance(QLatin1Char(' ')) + 1);
    option->text = elidedSource(option->text, option->fontMetrics, option->rect.width() - margins);
}

}  // namespace oomlab::ui
