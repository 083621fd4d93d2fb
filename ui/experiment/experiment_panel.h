// The experiment panel: every setting (ConfigForm), the dataset preview, the GloVe cost, the
// explanation of the setting under the mouse, the predicted breakdown and Run / Stop.
#pragma once

#include <QWidget>

#include "common/run_types.h"
#include "oomlab/config/experiment_config.h"

class QLabel;
class QScrollArea;
class QPushButton;
class QSpinBox;

namespace oomlab::ui {

class ConfigForm;
class DatasetPreview;
class EstimateView;

class ExperimentPanel : public QWidget {
    Q_OBJECT

public:
    explicit ExperimentPanel(QWidget* parent = nullptr);

    const ExperimentConfig& config() const;
    void setConfig(const ExperimentConfig& config);
    // The settings, and whether this many processes can train them.
    bool isValid() const;
    QString validationError() const;  // why not (empty when valid)
    // Local processes to train with (data parallel, one rank each); 1: this process alone.
    int processes() const;
    QSpinBox* processesBox() const { return m_processes; }

    ConfigForm* form() const { return m_form; }
    DatasetPreview* datasetPreview() const { return m_preview; }
    EstimateView* estimateView() const { return m_estimate; }
    QPushButton* runButton() const { return m_run; }
    QPushButton* stopButton() const { return m_stop; }

    void setRunning(bool running);

    // The help text of `key`, as when the pointer is over it.
    void explain(const QString& key);
    QWidget* explanationBox() const;

signals:
    void configChanged(const oomlab::ExperimentConfig& config);
    void validityChanged(bool valid);
    void runRequested();
    void stopRequested();

private:
    void onConfigChanged(const ExperimentConfig& config);
    void onValidityChanged(bool formValid, const QString& formMessage);
    QString processesProblem() const;  // what several processes refuse; empty if nothing
    void fitExplanationBox();

protected:
    void changeEvent(QEvent* event) override;

private:
    ConfigForm* m_form = nullptr;
    DatasetPreview* m_preview = nullptr;
    QLabel* m_gloveCost = nullptr;
    QSpinBox* m_processes = nullptr;
    QLabel* m_explanation = nullptr;
    QScrollArea* m_explanationBox = nullptr;
    QLabel* m_banner = nullptr;
    EstimateView* m_estimate = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_stop = nullptr;
    bool m_running = false;
};

}  // namespace oomlab::ui
