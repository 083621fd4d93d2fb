#include "live/prediction_model.h"

#include <QColor>
#include <QFont>

#include "common/formatting.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

constexpr int kPredictionColumns = PredictionModel::Why + 1;

}  // namespace

PredictionModel::PredictionModel(QObject* parent) : QAbstractTableModel(parent) {}

void PredictionModel::setCheck(const PredictionCheck& check) {
    beginResetModel();
    m_check = check;
    endResetModel();
}

void PredictionModel::clear() {
    setCheck({});
}

int PredictionModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid()
               ? 0
               : static_cast<int>(m_check.by_category.size() + m_check.by_module.size());
}

int PredictionModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : kPredictionColumns;
}

const PredictionRow& PredictionModel::rowAt(int row) const {
    const auto categories = static_cast<int>(m_check.by_category.size());
    return row < categories ? m_check.by_category[std::size_t(row)]
                            : m_check.by_module[std::size_t(row - categories)];
}

QString PredictionModel::text(const PredictionRow& row, int column) const {
    switch (column) {
        case Figure:
            return memoryFigureName(row.module, row.category);
        case Predicted:
            return formatBytes(row.predicted);
        case Measured:
            return formatBytes(row.measured);
        case Off: {
            const std::optional<double> off = row.off();
            if (!off) {
                return tr("not predicted");  // rows where both are 0 are left out
            }
            return QStringLiteral("%1%2%")
                .arg(*off >= 0 ? QStringLiteral("+") : QString())
                .arg(100.0 * *off, 0, 'f', 0);
        }
        case Why:
            return row.disagrees && row.why.empty() ? tr("cause not known") : qs(row.why);
        default:
            return {};
    }
}

QVariant PredictionModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= rowCount() || index.column() >= kPredictionColumns) {
        return {};
    }
    const PredictionRow& row = rowAt(index.row());
    switch (role) {
        case Qt::DisplayRole:
            return text(row, index.column());
        case Qt::ToolTipRole:
            return row.disagrees ? tr("Off by more than 10% (and 64 KiB) of the prediction. %1")
                                       .arg(text(row, Why))
                                 : QVariant();
        case Qt::TextAlignmentRole:
            return index.column() >= Predicted && index.column() <= Off
                       ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                       : QVariant();
        case Qt::ForegroundRole:
            return row.disagrees ? QVariant(warningColor()) : QVariant();
        case Qt::FontRole: {
            if (!row.disagrees) {
                return {};
            }
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        default:
            return {};
    }
}

QVariant PredictionModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (section) {
        case Figure:
            return tr("At the peak");
        case Predicted:
            return tr("Predicted");
        case Measured:
            return tr("Measured");
        case Off:
            return tr("Off");
        case Why:
            return tr("Why");
        default:
            return {};
    }
}

}  // namespace oomlab::ui
