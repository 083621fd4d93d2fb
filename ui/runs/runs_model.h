// The saved runs as a table: name, status, the settings that matter most, peak memory,
// final loss and accuracy, duration. Names and notes are editable in place and written
// straight to the database. Sort with Qt::UserRole (raw numbers), filter with
// RunsFilterModel.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "oomlab/run/prediction_record.h"

#include "oomlab/config/experiment_config.h"
#include "oomlab/store/run_store.h"

namespace oomlab::ui {

class RunDatabase;

class RunsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Id,
        Name,
        Status,
        Dataset,
        Embeddings,
        Model,
        Batch,
        Precision,
        Optimizer,
        Vocab,
        Cap,
        Peak,
        FinalLoss,
        Accuracy,
        Duration,
        Steps,
        Created,
        Device,
        Tags,
        Notes,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole;
    static constexpr int RunIdRole = Qt::UserRole + 1;
    static constexpr int StatusRole = Qt::UserRole + 2;  // the status name
    // What a filter's words match: the columns, the data's and vectors' paths, notes, tags.
    static constexpr int SearchRole = Qt::UserRole + 3;
    // What a filter's key=value words match: every setting, one "key=value" per line.
    static constexpr int SettingsRole = Qt::UserRole + 4;

    explicit RunsModel(RunDatabase* database, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;

    void reload();
    int rowOfRun(qint64 runId) const;  // -1 when absent
    const RunRecord* run(int row) const;
    // The run's config, parsed from its stored JSON; null when it cannot be read, and then
    // configError() says why.
    const ExperimentConfig* config(int row) const;
    QString configError(int row) const;
    // The estimator's record over the runs as last read (see prediction_record.h).
    const PredictionRecords& predictionRecords() const { return m_predictionRecords; }

private:
    struct Row {
        RunRecord record;
        ExperimentConfig config;
        bool configRead = false;
        QString configError;  // why the stored config cannot be read
        QString search;       // SearchRole, built once per reload
        QString settings;     // SettingsRole
    };
    QVariant display(const Row& row, int column) const;
    QVariant sortValue(const Row& row, int column) const;
    QString searchText(const Row& row) const;
    static QString settingsText(const Row& row);

    RunDatabase* m_database;
    std::vector<Row> m_rows;
    PredictionRecords m_predictionRecords;
};

}  // namespace oomlab::ui
