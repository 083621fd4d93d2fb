#include "experiment/experiment_panel.h"

#include <QEvent>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QVBoxLayout>

#include "common/formatting.h"
#include "common/wheel_passes_on.h"
#include "experiment/config_form.h"
#include "experiment/dataset_preview.h"
#include "experiment/estimate_view.h"
#include "experiment/glove_cost.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/launch/rendezvous.h"

namespace oomlab::ui {

ExperimentPanel::ExperimentPanel(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("experimentPanel"));
    m_form = new ConfigForm;
    m_preview = new DatasetPreview;
    m_form->sectionExtras(QStringLiteral("dataset"))->addWidget(m_preview);
    m_gloveCost = new QLabel;
    m_gloveCost->setObjectName(QStringLiteral("gloveCost"));
    m_gloveCost->setWordWrap(true);
    m_form->sectionExtras(QStringLiteral("embeddings"))->addWidget(m_gloveCost);
    m_processes = new WheelPassesOn<QSpinBox>;
    m_processes->setObjectName(QStringLiteral("processes"));
    m_processes->setRange(1, kMostLocalWorkers);
    m_processes->setToolTip(
        tr("Train with this many local processes, one rank each (oomlab-cli run --nproc N): "
           "each trains on its share of every epoch and the plots show each rank's memory."));
    auto* processesRow = new QFormLayout;
    processesRow->addRow(tr("Processes"), m_processes);
    m_form->sectionExtras(QStringLiteral("distributed"))->addLayout(processesRow);

    auto* scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("experimentFormScroll"));
    scroll->setWidget(m_form);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

    m_explanation = new QLabel(tr("Point at a setting to read what it teaches."));
    m_explanation->setObjectName(QStringLiteral("explanation"));
    m_explanation->setWordWrap(true);
    m_explanation->setFrameShape(QFrame::StyledPanel);
    m_explanation->setMargin(6);
    m_explanation->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    // One height whatever the setting under the pointer: a box that grew with a long help
    // text moved the form under the pointer. A longer text scrolls inside it.
    m_explanationBox = new QScrollArea;
    m_explanationBox->setObjectName(QStringLiteral("explanationBox"));
    m_explanationBox->setWidget(m_explanation);
    m_explanationBox->setWidgetResizable(true);
    m_explanationBox->setFrameShape(QFrame::NoFrame);
    m_explanationBox->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    fitExplanationBox();

    m_banner = new QLabel;
    m_banner->setObjectName(QStringLiteral("validationBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->hide();

    m_estimate = new EstimateView;
    m_run = new QPushButton(tr("Run"));
    m_run->setObjectName(QStringLiteral("runButton"));
    m_run->setToolTip(tr("Train with these settings (Ctrl+R)"));
    m_stop = new QPushButton(tr("Stop"));
    m_stop->setObjectName(QStringLiteral("stopButton"));
    m_stop->setToolTip(tr("Stop the run; it is saved as cancelled (Esc)"));
    m_stop->setEnabled(false);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(m_run, 1);
    buttons->addWidget(m_stop);

    auto* bottom = new QWidget;
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    bottomLayout->addWidget(m_explanationBox);
    bottomLayout->addWidget(m_estimate);
    bottomLayout->addWidget(m_banner);
    bottomLayout->addLayout(buttons);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(scroll, 1);
    layout->addWidget(bottom);

    connect(m_form, &ConfigForm::configChanged, this, &ExperimentPanel::onConfigChanged);
    connect(m_form, &ConfigForm::validityChanged, this, &ExperimentPanel::onValidityChanged);
    connect(m_form, &ConfigForm::keyHovered, this, &ExperimentPanel::explain);
    connect(m_run, &QPushButton::clicked, this, &ExperimentPanel::runRequested);
    connect(m_stop, &QPushButton::clicked, this, &ExperimentPanel::stopRequested);
    connect(m_estimate, &EstimateView::estimateChanged, this,
            [this] { m_gloveCost->setText(gloveCostText(config(), m_estimate->profile().get())); });
    connect(m_estimate, &EstimateView::readProblem, m_form, &ConfigForm::setReadErrors);
    connect(m_processes, qOverload<int>(&QSpinBox::valueChanged), this, [this](int processes) {
        m_estimate->setProcesses(processes);
        m_form->setProcesses(processes);
        m_form->setRunRefusal({}, {});  // it was about this many processes
        onValidityChanged(m_form->isValid(), m_form->validationError());
    });
    onConfigChanged(m_form->config());
}

const ExperimentConfig& ExperimentPanel::config() const {
    return m_form->config();
}

void ExperimentPanel::setConfig(const ExperimentConfig& config) {
    m_form->setConfig(config);
}

int ExperimentPanel::processes() const {
    return m_processes->value();
}

bool ExperimentPanel::isValid() const {
    return m_form->isValid() && processesProblem().isEmpty();
}

QString ExperimentPanel::validationError() const {
    return m_form->isValid() ? processesProblem() : m_form->validationError();
}

QString ExperimentPanel::processesProblem() const {
    const ExperimentConfig& settings = config();
    try {
        validate_data_parallel(settings, processes(), settings.device.rfind("cuda", 0) == 0);
    } catch (const BadInput& error) {
        return qs(error.what());
    }
    return {};
}

void ExperimentPanel::setRunning(bool running) {
    m_running = running;
    m_run->setEnabled(!running && isValid());
    m_stop->setEnabled(running);
}

void ExperimentPanel::onConfigChanged(const ExperimentConfig& config) {
    m_preview->setDataset(qs(config.dataset.path), config.dataset.format);
    m_gloveCost->setText(gloveCostText(config, m_estimate->profile().get()));
    m_estimate->setConfig(config);
    onValidityChanged(m_form->isValid(), m_form->validationError());
    emit configChanged(config);
}

void ExperimentPanel::onValidityChanged(bool formValid, const QString& formMessage) {
    const QString message = formValid ? processesProblem() : formMessage;
    const bool valid = formValid && message.isEmpty();
    m_banner->setVisible(!valid);
    if (!valid) {
        const QString shown =
            message.isEmpty() ? tr("A setting above has an invalid value.") : message;
        m_banner->setText(
            QStringLiteral("<span style='color:#d62728'>⚠ %1</span>").arg(shown.toHtmlEscaped()));
    }
    m_run->setEnabled(!m_running && valid);
    emit validityChanged(valid);
}

QWidget* ExperimentPanel::explanationBox() const {
    return m_explanationBox;
}

void ExperimentPanel::fitExplanationBox() {
    constexpr int kLines = 4;
    m_explanationBox->setFixedHeight(m_explanation->fontMetrics().lineSpacing() * kLines +
                                     2 * (m_explanation->margin() + m_explanation->frameWidth()));
}

void ExperimentPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::FontChange && m_explanationBox) {
        fitExplanationBox();  // presentation mode: four lines of the larger text
    }
    QWidget::changeEvent(event);
}

void ExperimentPanel::explain(const QString& key) {
    const ConfigKeyInfo* info = find_config_key(ss(key));
    if (!info) {
        return;
    }
    m_explanation->setText(
        QStringLiteral("<b>%1</b> — %2").arg(key, qs(info->help).toHtmlEscaped()));
}

}  // namespace oomlab::ui
