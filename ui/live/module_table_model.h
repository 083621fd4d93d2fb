// Memory by module at a run's peak as a table: a row for each module that held bytes, in
// forward order, then the total of all modules.
#pragma once

#include <QAbstractTableModel>

#include <array>
#include <vector>

#include "oomlab/run/run_record.h"

namespace oomlab::ui {

class ModuleTableModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        Module,
        Parameters,
        Gradients,
        OptimizerState,
        Activations,
        Temporaries,
        Total,
        ColumnCount
    };

    explicit ModuleTableModel(QObject* parent = nullptr);

    void setModules(const std::vector<ModuleMemory>& modules);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString name;
        std::array<std::int64_t, 6> bytes{};  // Parameters ... Total
        bool activationsMeasured = true;      // the CUDA allocator does not tell
        bool total = false;
    };

    std::vector<Row> m_rows;
};

}  // namespace oomlab::ui
