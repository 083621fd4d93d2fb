// A plot as a figure to keep: the image written with its title and without the series hidden
// on screen, the file name it suggests, and the right-click menu that exports it.
#include <QContextMenuEvent>
#include <QFileDialog>
#include <QMenu>
#include <QMessageBox>
#include <QRegularExpression>

#include "plots/plot_export.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

QString ThemedPlot::exportImage(const QString& path) {
    const bool addTitle = !m_title && !m_exportTitle.isEmpty();
    if (addTitle) {
        setTitle(m_exportTitle);
    }
    // A series hidden on screen (its legend entry greyed, to click it back) is not in the
    // picture, so neither is its entry.
    QList<QCPAbstractPlottable*> hidden;
    for (int i = 0; i < plottableCount(); ++i) {
        QCPAbstractPlottable* series = plottable(i);
        if (!series->visible() && series->removeFromLegend()) {
            hidden << series;
        }
    }
    const QString error = savePlot(this, path);
    for (QCPAbstractPlottable* series : hidden) {
        series->addToLegend();
    }
    if (addTitle) {
        setTitle(QString());
    }
    if (addTitle || !hidden.isEmpty()) {
        replot(QCustomPlot::rpQueuedReplot);
    }
    return error;
}

QString ThemedPlot::suggestedFileName() const {
    QString name = (m_exportTitle.isEmpty() ? objectName() : m_exportTitle).toLower();
    name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    name.remove(QRegularExpression(QStringLiteral("^-+|-+$")));
    return (name.isEmpty() ? QStringLiteral("plot") : name) + QStringLiteral(".png");
}

void ThemedPlot::contextMenuEvent(QContextMenuEvent* event) {
    QMenu menu(this);
    QAction* follow = menu.addAction(tr("Follow the data"));
    follow->setCheckable(true);
    follow->setChecked(m_follow);
    connect(follow, &QAction::toggled, this, &ThemedPlot::setFollowData);
    menu.addAction(tr("Export image…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Export plot"),
                                                          suggestedFileName(), plotFileFilters());
        if (path.isEmpty()) {
            return;
        }
        const QString error = exportImage(path);
        if (!error.isEmpty()) {
            QMessageBox::warning(this, tr("Export plot"), error);
        }
    });
    menu.exec(event->globalPos());
}

}  // namespace oomlab::ui
