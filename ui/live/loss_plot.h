// Training loss per step, validation loss and accuracy (right axis) at each evaluation.
#pragma once

#include <vector>

#include "oomlab/store/run_store.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class LossPlot : public ThemedPlot {
    Q_OBJECT

public:
    explicit LossPlot(QWidget* parent = nullptr);

    void reset();
    void appendRows(const std::vector<MetricRow>& rows);

    QCPGraph* trainLoss() const { return m_train; }
    QCPGraph* validationLoss() const { return m_validLoss; }
    QCPGraph* validationAccuracy() const { return m_validAccuracy; }

protected:
    void fitRanges() override;

private:
    QCPGraph* m_train = nullptr;
    QCPGraph* m_validLoss = nullptr;
    QCPGraph* m_validAccuracy = nullptr;
    Bounds m_x;
    Bounds m_loss;
};

}  // namespace oomlab::ui
