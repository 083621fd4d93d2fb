#include "plots/smoothing_box.h"

#include <QDoubleSpinBox>

#include "common/app_settings.h"
#include "plots/loss_smoothing.h"

namespace oomlab::ui {

QDoubleSpinBox* createSmoothingBox() {
    auto* box = new QDoubleSpinBox;
    box->setObjectName(QStringLiteral("lossSmoothing"));
    box->setPrefix(QObject::tr("Loss smoothing "));
    box->setRange(0, LossSmoother::kMaxWeight);
    box->setSingleStep(0.05);
    box->setDecimals(2);
    box->setToolTip(
        QObject::tr("Exponential moving average of the training loss, as in TensorBoard: 0 "
                    "draws the raw loss, 0.9 a smooth trend. The raw loss stays, faded."));
    const QString key = QStringLiteral("plots/lossSmoothing");
    box->setValue(AppSettings::value(key, kDefaultLossSmoothing).toDouble());
    QObject::connect(box, qOverload<double>(&QDoubleSpinBox::valueChanged),
                     [key](double weight) { AppSettings::setValue(key, weight); });
    return box;
}

}  // namespace oomlab::ui
