// Training loss per step, validation loss and accuracy (right axis) at each evaluation.
#pragma once

#include <vector>

#include "oomlab/store/run_store.h"
#include "plots/earlier_runs.h"
#include "plots/loss_smoothing.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class LossPlot : public ThemedPlot {
    Q_OBJECT

public:
    explicit LossPlot(QWidget* parent = nullptr);

    // Clears the run's lines; an earlier run's stay until earlierRuns().clear().
    void reset();
    void appendRows(const std::vector<MetricRow>& rows);
    // The training loss as drawn now stays, as the line of an earlier run named `name`.
    void keepAsEarlierRun(const QString& name);
    EarlierRuns& earlierRuns() { return m_earlier; }

    // TensorBoard-style smoothing of the training loss (0: off); the raw loss stays, faded.
    void setSmoothing(double weight);
    double smoothing() const { return m_smoother.weight(); }

    QCPGraph* trainLoss() const { return m_train; }
    QCPGraph* smoothedTrainLoss() const { return m_smoothed; }
    QCPGraph* validationLoss() const { return m_validLoss; }
    QCPGraph* validationAccuracy() const { return m_validAccuracy; }
    // The latest validation accuracy, written at its point ("84.2%"); empty before the first.
    QString latestAccuracyText() const;
    QRectF accuracyLabelRect() const;  // pixels, at the last replot

protected:
    void fitRanges() override;
    // The accuracy's label over its point, or under it where over it covers the loss lines.
    void placeItems() override;

private:
    // How many segments of the loss lines a label at `alignment` of its point covers.
    int lossLinesUnderAccuracyLabel(Qt::Alignment alignment);

    QCPGraph* m_train = nullptr;
    QCPGraph* m_smoothed = nullptr;
    LossSmoother m_smoother;
    QCPGraph* m_validLoss = nullptr;
    QCPGraph* m_validAccuracy = nullptr;
    QCPItemText* m_accuracyLabel = nullptr;
    EarlierRuns m_earlier{this};
    Bounds m_x;
    Bounds m_loss;
};

}  // namespace oomlab::ui
