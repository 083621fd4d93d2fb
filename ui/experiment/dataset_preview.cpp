#include "experiment/dataset_preview.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <map>

#include "common/formatting.h"
#include "common/table_sizing.h"
#include "experiment/dataset_rows_model.h"

namespace oomlab::ui {

DatasetPreviewData readDatasetPreview(const QString& path, DatasetFormat format, int rows) {
    DatasetPreviewData data;
    try {
        DatasetFormat detected = DatasetFormat::Auto;
        const std::vector<RawExample> examples = read_raw_examples(ss(path), format, &detected);
        data.source = path.isEmpty() ? qs(default_dataset_description()) : path;
        data.format = qs(dataset_format_name(detected != DatasetFormat::Auto ? detected : format));
        data.examples = static_cast<qint64>(examples.size());
        std::map<std::string, qint64> counts;
        for (std::size_t i = 0; i < examples.size(); ++i) {
            ++counts[examples[i].label];
            if (static_cast<int>(i) < rows) {
                data.rows.push_back({qs(examples[i].label), qs(examples[i].text)});
            }
        }
        for (const auto& [label, count] : counts) {
            data.labelCounts.push_back({qs(label), count});
        }
        std::stable_sort(data.labelCounts.begin(), data.labelCounts.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
    } catch (const std::exception& error) {
        data.error = qs(error.what());
    }
    return data;
}

DatasetPreview::DatasetPreview(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("datasetPreview"));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(tr("Reading the dataset…"), this);
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_rows = new DatasetRowsModel(this);
    m_rowsTable = new QTableView(this);
    m_rowsTable->setModel(m_rows);
    m_rowsTable->horizontalHeader()->setStretchLastSection(true);
    m_rowsTable->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_rowsTable->verticalHeader()->hide();
    m_rowsTable->setWordWrap(false);
    sizeRowsToText(m_rowsTable);
    m_rowsTable->setMaximumHeight(m_rowsTable->fontMetrics().height() * 11);
    m_labels = new QLabel(this);
    m_labels->setWordWrap(true);
    layout->addWidget(m_summary);
    layout->addWidget(m_rowsTable);
    layout->addWidget(m_labels);
    connect(&m_watcher, &QFutureWatcher<DatasetPreviewData>::finished, this, [this] {
        if (m_pending) {  // the settings changed while reading: read again
            m_pending = false;
            m_watcher.setFuture(QtConcurrent::run(readDatasetPreview, m_path, m_format, 8));
            return;
        }
        show(m_watcher.result());
    });
}

DatasetPreview::~DatasetPreview() {
    m_watcher.waitForFinished();
}

void DatasetPreview::setDataset(const QString& path, DatasetFormat format) {
    if (m_started && path == m_path && format == m_format) {
        return;
    }
    m_started = true;
    m_path = path;
    m_format = format;
    m_summary->setText(tr("Reading %1…").arg(path.isEmpty() ? tr("the embedded dataset") : path));
    if (m_watcher.isRunning()) {
        m_pending = true;
        return;
    }
    m_watcher.setFuture(QtConcurrent::run(readDatasetPreview, path, format, 8));
}

void DatasetPreview::show(const DatasetPreviewData& data) {
    m_data = data;
    if (!data.error.isEmpty()) {
        m_summary->setText(QStringLiteral("<span style='color:#d62728'>%1</span>")
                               .arg(data.error.toHtmlEscaped()));
        m_rows->setRows({});
        m_labels->clear();
        emit previewReady(data);
        return;
    }
    m_summary->setText(
        tr("<b>%1</b><br>format <b>%2</b> · %3 examples · %4 labels")
            .arg(data.source.toHtmlEscaped(), data.format, formatCount(data.examples))
            .arg(data.labelCounts.size()));
    m_rows->setRows(data.rows);
    QStringList counts;
    for (const auto& [label, count] : data.labelCounts) {
        counts << QStringLiteral("%1: %2").arg(label.toHtmlEscaped(), formatCount(count));
    }
    m_labels->setText(tr("Examples per label — %1").arg(counts.join(QStringLiteral(" · "))));
    emit previewReady(data);
}

}  // namespace oomlab::ui
