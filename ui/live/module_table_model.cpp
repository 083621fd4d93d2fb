#include "live/module_table_model.h"

#include "common/formatting.h"
#include "common/table_cells.h"

namespace oomlab::ui {
ModuleTableModel::ModuleTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void ModuleTableModel::setModules(const std::vector<ModuleMemory>& modules) {
    beginResetModel();
    m_rows.clear();
    Row all{tr("all modules"), {}, true, true};
    for (const ModuleMemory& module : modules) {
        const std::int64_t total = module.parameters + module.gradients + module.optimizer_state +
                                   module.activations.value_or(0);
        if (total == 0) {
            continue;  // as in the chart
        }
        Row row{qs(module.module),
                {module.parameters, module.gradients, module.optimizer_state,
                 module.layer_activations(), module.temporaries(), total},
                module.activations.has_value(),
                false};
        for (std::size_t i = 0; i < row.bytes.size(); ++i) {
            all.bytes[i] += row.bytes[i];
        }
        all.activationsMeasured = all.activationsMeasured && row.activationsMeasured;
        m_rows.push_back(row);
    }
    if (!modules.empty()) {
        m_rows.push_back(all);
    }
    endResetModel();
}

int ModuleTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ModuleTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ModuleTableModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) {
        return {};
    }
    const Row& row = m_rows[std::size_t(index.row())];
    const int column = index.column();
    const bool notMeasured =
        (column == Activations || column == Temporaries) && !row.activationsMeasured;
    switch (role) {
        case Qt::DisplayRole:
            return column == Module ? row.name
                   : notMeasured    ? tr("not measured")
                                    : formatBytes(row.bytes[std::size_t(column - 1)]);
        case Qt::ToolTipRole:
            return notMeasured
                       ? tr("The CUDA caching allocator does not tell which module a block is for.")
                       : QVariant();
        case Qt::TextAlignmentRole:
            return column == Module || notMeasured ? QVariant() : figureAlignment();
        case Qt::FontRole:
            return row.total ? QVariant(boldFont()) : QVariant();
        default:
            return {};
    }
}

QVariant ModuleTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) {
        return {};
    }
    if (role == Qt::ToolTipRole) {
        return section == Activations ? tr("What a layer's forward keeps for its backward.")
               : section == Temporaries
                   ? tr("What the loss, the optimizer's update and the rest of a step hold "
                        "while they run: not any layer's activations.")
                   : QVariant();
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case Module:
            return tr("Module");
        case Parameters:
            return tr("Parameters");
        case Gradients:
            return tr("Gradients");
        case OptimizerState:
            return tr("Optimizer state");
        case Activations:
            return tr("Activations");
        case Temporaries:
            return tr("Temporaries");
        case Total:
            return tr("Total");
        default:
            return {};
    }
}

}  // namespace oomlab::ui
