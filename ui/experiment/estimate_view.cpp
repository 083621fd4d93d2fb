#include "experiment/estimate_view.h"

#include <QLabel>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "common/formatting.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/run/prediction_check.h"
#include "plots/breakdown_chart.h"

namespace oomlab::ui {
namespace {

ProfileResult profileInBackground(const ExperimentConfig& config, const QString& key) {
    ProfileResult result;
    result.key = key;
    try {
        result.profile = std::make_shared<const DataProfile>(profile_data(config));
    } catch (const BadInput& error) {
        result.error = qs(error.what());
        for (const std::string& name : error.keys()) {
            result.errorKeys << qs(name);
        }
    } catch (const std::exception& error) {
        result.error = qs(error.what());
    }
    return result;
}

}  // namespace

EstimateView::EstimateView(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("estimateView"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(tr("Predicting memory…"), this);
    m_summary->setWordWrap(true);
    m_chart = new BreakdownChart(Qt::Horizontal, this);
    m_chart->setObjectName(QStringLiteral("predictedBreakdown"));
    m_chart->setMinimumDataLines(2);  // one bar
    m_chart->setExportTitle(tr("Predicted memory by category"));
    // As tall as its bar and legend need, whatever the text size; the form takes the rest.
    m_chart->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);
    layout->addWidget(m_summary);
    layout->addWidget(m_chart);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(120);
    connect(&m_debounce, &QTimer::timeout, this, &EstimateView::update);
    connect(&m_watcher, &QFutureWatcher<ProfileResult>::finished, this, [this] {
        m_profile = m_watcher.result();
        emit readProblem(m_profile.errorKeys, m_profile.error);
        update();
    });
}

EstimateView::~EstimateView() {
    m_watcher.waitForFinished();
}

QString EstimateView::profileKey(const ExperimentConfig& config) {
    QString key;
    for (const char* name :
         {"dataset.path", "dataset.valid_path", "dataset.format", "dataset.valid_ratio",
          "embeddings.source", "embeddings.path", "embeddings.variant", "embeddings.vocab",
          "train.max_len", "train.seed"}) {
        key += qs(get_config_value(config, name)) + QLatin1Char('\n');
    }
    return key;
}

void EstimateView::setConfig(const ExperimentConfig& config) {
    m_config = config;
    m_debounce.start();
}

void EstimateView::setProcesses(int processes) {
    m_processes = processes;
    m_debounce.start();
}

void EstimateView::update() {
    const QString key = profileKey(m_config);
    if (m_profile.key != key) {
        if (!m_watcher.isRunning()) {
            m_summary->setText(tr("Reading the data's shape for the estimate…"));
            m_watcher.setFuture(QtConcurrent::run(profileInBackground, m_config, key));
        }
        return;  // a finished profile calls update() again
    }
    if (!m_profile.error.isEmpty()) {
        m_hasEstimate = false;
        m_summary->setText(tr("No estimate: %1").arg(m_profile.error.toHtmlEscaped()));
        m_chart->setBars({}, 0);
        return;
    }
    try {
        m_estimate = estimate_memory(m_config, *m_profile.profile, m_processes);
        m_hasEstimate = true;
    } catch (const std::exception& error) {
        m_hasEstimate = false;
        m_summary->setText(tr("No estimate: %1").arg(qs(error.what()).toHtmlEscaped()));
        return;
    }
    showEstimate();
    emit estimateChanged(m_estimate);
}

void EstimateView::showEstimate() {
    m_chart->setBars({{tr("predicted"), m_estimate.breakdown}}, m_estimate.cap_bytes);
    QString text = m_processes > 1
                       ? tr("Predicted peak <b>%1</b> per process (%2 processes)")
                             .arg(formatBytes(m_estimate.peak_bytes))
                             .arg(m_processes)
                       : tr("Predicted peak <b>%1</b>").arg(formatBytes(m_estimate.peak_bytes));
    if (m_estimate.caching_allocator && m_estimate.reserved_bytes) {
        text += tr(", <b>%1</b> reserved with the allocator's cache")
                    .arg(formatBytes(*m_estimate.reserved_bytes));
    }
    if (m_estimate.cap_bytes > 0) {
        const QString cap = formatBytes(m_estimate.cap_bytes);
        if (m_estimate.fits) {
            text += tr(" — fits under the %1 cap").arg(cap);
        } else if (m_estimate.allocator_out_of_memory) {
            text += tr(" — <span style='color:#d62728'><b>the tensors fit under the %1 cap, the "
                       "allocator's segments do not</b>: expect an out-of-memory</span>")
                        .arg(cap);
        } else {
            text += tr(" — <span style='color:#d62728'><b>exceeds the %1 cap</b>: expect an "
                       "out-of-memory</span>")
                        .arg(cap);
        }
    }
    if (m_estimate.epoch_worst_peak_bytes > m_estimate.peak_bytes) {
        // A short run never draws the data's worst batch; a longer one of the same settings may.
        text += tr("<br><small>This run is too short to draw the data's worst batch (%1 "
                   "tokens); a longer run would peak at %2.</small>")
                    .arg(m_estimate.epoch_worst_length)
                    .arg(formatBytes(m_estimate.epoch_worst_peak_bytes));
    }
    const QString record = recordText();
    m_summary->setText(record.isEmpty() ? text : text + QStringLiteral("<br>") + record);
}

void EstimateView::setRecord(const PredictionRecords& records) {
    m_records = records;
    if (m_hasEstimate) {
        showEstimate();
    }
}

QString EstimateView::recordText() const {
    if (m_records.all.runs == 0) {
        return {};
    }
    QString text = tr("<small>Record: %1.").arg(qs(describe(m_records.all)).toHtmlEscaped());
    const std::string model = get_config_value(m_config, "model.kind");
    for (const CalibrationCase& one : m_records.of_model(model).worst) {
        if (one.under() && prediction_disagrees(one.predicted, one.measured)) {
            text += tr(" <span style='color:#d62728'>Wrong here before: run %1 (%2) measured %3 "
                       "against %4 predicted.</span>")
                        .arg(one.run_id)
                        .arg(qs(model).toHtmlEscaped(), formatBytes(one.measured),
                             formatBytes(one.predicted));
            break;
        }
    }
    return text + QStringLiteral("</small>");
}

}  // namespace oomlab::ui
