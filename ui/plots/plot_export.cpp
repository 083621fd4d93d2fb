#include "plots/plot_export.h"

#include <QFileInfo>

#include <qcustomplot.h>

#include "export/run_export.h"

#ifdef OOMLAB_HAVE_SVG
#include <QSvgGenerator>
#endif

namespace oomlab::ui {

bool svgExportAvailable() {
#ifdef OOMLAB_HAVE_SVG
    return true;
#else
    return false;
#endif
}

QString plotFileFilters() {
    QStringList filters = {QObject::tr("PNG image (*.png)"), QObject::tr("PDF document (*.pdf)")};
    if (svgExportAvailable()) {
        filters << QObject::tr("SVG drawing (*.svg)");
    }
    return filters.join(QStringLiteral(";;"));
}

QString savePlot(QCustomPlot* plot, const QString& path, double pngScale) {
    if (const QString error = checkChosenOutput(path); !error.isEmpty()) {
        return error;
    }
    const QString suffix = QFileInfo(path).suffix().toLower();
    const int width = plot->width();
    const int height = plot->height();
    bool ok = false;
    if (suffix == QLatin1String("png")) {
        ok = plot->savePng(path, width, height, pngScale);
    } else if (suffix == QLatin1String("pdf")) {
        ok = plot->savePdf(path, width, height);
    } else if (suffix == QLatin1String("svg")) {
#ifdef OOMLAB_HAVE_SVG
        QSvgGenerator generator;
        generator.setFileName(path);
        generator.setSize(QSize(width, height));
        generator.setViewBox(QRect(0, 0, width, height));
        generator.setTitle(QStringLiteral("OOM Lab plot"));
        QCPPainter painter;
        ok = painter.begin(&generator);
        if (ok) {
            plot->toPainter(&painter, width, height);
            painter.end();
        }
#else
        return QObject::tr("SVG export is not built in (Qt 6 Svg was missing); use PNG or PDF");
#endif
    } else {
        return QObject::tr("unknown plot format \"%1\": use .png, .pdf or .svg").arg(suffix);
    }
    return ok ? QString() : QObject::tr("could not write %1").arg(path);
}

}  // namespace oomlab::ui
