// What the chosen dataset looks like before training: the detected format, the first rows
// and the examples per label. Reading happens on a pool thread; a newer request makes an
// older result stale.
#pragma once

#include <QFutureWatcher>
#include <QPair>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include "oomlab/data/dataset.h"

class QLabel;
class QTableView;

namespace oomlab::ui {

class DatasetRowsModel;

struct DatasetPreviewData {
    QString error;
    QString source;
    QString format;
    qint64 examples = 0;
    QVector<QPair<QString, QString>> rows;        // label, text
    QVector<QPair<QString, qint64>> labelCounts;  // label, examples, by count
};

// Reads `path` (empty: the embedded default) for a preview; never throws.
DatasetPreviewData readDatasetPreview(const QString& path, DatasetFormat format, int rows = 8);

class DatasetPreview : public QWidget {
    Q_OBJECT

public:
    explicit DatasetPreview(QWidget* parent = nullptr);
    ~DatasetPreview() override;

    void setDataset(const QString& path, DatasetFormat format);
    const DatasetPreviewData& data() const { return m_data; }
    DatasetRowsModel* rows() const { return m_rows; }
    bool isLoading() const { return m_watcher.isRunning(); }

signals:
    void previewReady(const oomlab::ui::DatasetPreviewData& data);

private:
    void show(const DatasetPreviewData& data);

    QLabel* m_summary = nullptr;
    DatasetRowsModel* m_rows = nullptr;
    QTableView* m_rowsTable = nullptr;
    QLabel* m_labels = nullptr;
    QFutureWatcher<DatasetPreviewData> m_watcher;
    QString m_path;
    DatasetFormat m_format = DatasetFormat::Auto;
    bool m_pending = false;
    bool m_started = false;
    DatasetPreviewData m_data;
};

}  // namespace oomlab::ui
