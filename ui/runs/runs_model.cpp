#include "runs/runs_model.h"

#include <QDateTime>

#include <filesystem>

#include "common/formatting.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/session/run_session.h"
#include "runs/run_database.h"

namespace oomlab::ui {
namespace {

// The worst cases kept of the estimator's record: its warning names one of them.
constexpr std::size_t kRecordCases = 3;

QString setting(const ExperimentConfig& config, const char* key) {
    return qs(get_config_value(config, key));
}

// The vectors a run used: a file's name, or the variant (synthetic or the installed default).
QString embeddingsText(const ExperimentConfig& config) {
    switch (config.embeddings.source) {
        case EmbeddingSource::File:
            return qs(std::filesystem::path(config.embeddings.path).filename().string());
        case EmbeddingSource::Synthetic:
            return QObject::tr("%1 synthetic").arg(qs(config.embeddings.variant));
        case EmbeddingSource::Default:
            break;
    }
    return QObject::tr("%1 (default)").arg(qs(config.embeddings.variant));
}

QString localTime(const std::string& iso) {
    QDateTime time = QDateTime::fromString(qs(iso), Qt::ISODate);
    if (!time.isValid()) {
        return qs(iso);
    }
    time.setTimeSpec(Qt::UTC);
    return time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

}  // namespace

RunsModel::RunsModel(RunDatabase* database, QObject* parent)
    : QAbstractTableModel(parent), m_database(database) {
    connect(m_database, &RunDatabase::runsChanged, this, &RunsModel::reload);
    reload();
}

int RunsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

void RunsModel::reload() {
    std::vector<Row> rows;
    m_predictionRecords = {};
    if (m_database->isOpen()) {
        std::vector<RunRecord> records = m_database->store().list_runs();
        m_predictionRecords = prediction_records(records, kRecordCases);
        for (RunRecord& record : records) {
            Row row;
            try {
                row.config =
                    parse_config_json(record.config_json, "run " + std::to_string(record.id));
                row.configRead = true;
            } catch (const std::exception& error) {
                row.configRead = false;
                row.configError = qs(error.what());
            }
            row.record = std::move(record);
            row.search = searchText(row);
            row.settings = settingsText(row);
            rows.push_back(std::move(row));
        }
    }
    // The same runs in the same order (a run finished, a rename): update in place so views
    // keep their selection; otherwise reset.
    bool sameRuns = rows.size() == m_rows.size();
    for (std::size_t i = 0; sameRuns && i < rows.size(); ++i) {
        sameRuns = rows[i].record.id == m_rows[i].record.id;
    }
    if (sameRuns) {
        m_rows = std::move(rows);
        if (!m_rows.empty()) {
            emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
        }
        return;
    }
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

int RunsModel::rowOfRun(qint64 runId) const {
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].record.id == runId) {
            return static_cast<int>(i);
        }
    }
    return -1;
}

const RunRecord* RunsModel::run(int row) const {
    return row >= 0 && row < rowCount() ? &m_rows[static_cast<std::size_t>(row)].record : nullptr;
}

const ExperimentConfig* RunsModel::config(int row) const {
    if (row < 0 || row >= rowCount() || !m_rows[static_cast<std::size_t>(row)].configRead) {
        return nullptr;
    }
    return &m_rows[static_cast<std::size_t>(row)].config;
}

QString RunsModel::configError(int row) const {
    return row >= 0 && row < rowCount() ? m_rows[static_cast<std::size_t>(row)].configError
                                        : QString();
}

QVariant RunsModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row& row = m_rows[static_cast<std::size_t>(index.row())];
    const RunRecord& run = row.record;
    switch (role) {
        case Qt::DisplayRole:
            return display(row, index.column());
        case Qt::EditRole:
            if (index.column() == Name) {
                return qs(run.name);
            }
            if (index.column() == Notes) {
                return qs(run.notes);
            }
            if (index.column() == Tags) {
                return qs(run.tags);
            }
            return display(row, index.column());
        case SortRole:
            return sortValue(row, index.column());
        case RunIdRole:
            return static_cast<qlonglong>(run.id);
        case StatusRole:
            return statusName(run.outcome.status);
        case SearchRole:
            return row.search;
        case SettingsRole:
            return row.settings;
        case Qt::ForegroundRole:
            if (index.column() == Status) {
                return statusColor(run.outcome.status);
            }
            return {};
        case Qt::ToolTipRole:
            if (index.column() == Batch && row.configRead) {
                const BatchShape planned = plannedBatch(row.config);
                const BatchShape ended = ended_batch(run.outcome, planned);
                return batch_adapted(run.outcome, planned)
                           ? tr("The run adapted after running out of memory: it started with "
                                "micro-batch %1 × accumulation %2 and ended with %3 × %4 "
                                "(effective batch %5).")
                                 .arg(planned.batch_size)
                                 .arg(planned.accumulation)
                                 .arg(ended.batch_size)
                                 .arg(ended.accumulation)
                                 .arg(ended.batch_size * ended.accumulation)
                           : tr("Micro-batch × accumulation: effective batch %1")
                                 .arg(ended.batch_size * ended.accumulation);
            }
            if (index.column() == Status && !run.outcome.error.empty()) {
                return qs(run.outcome.error);
            }
            if (index.column() == Notes && !run.notes.empty()) {
                return qs(run.notes);
            }
            return {};
        case Qt::TextAlignmentRole:
            switch (index.column()) {
                case Id:
                case Cap:
                case Peak:
                case FinalLoss:
                case Accuracy:
                case Duration:
                case Steps:
                    return QVariant(Qt::AlignRight | Qt::AlignVCenter);
                default:
                    return {};
            }
        default:
            return {};
    }
}

QVariant RunsModel::display(const Row& row, int column) const {
    const RunRecord& run = row.record;
    const ExperimentConfig& config = row.config;
    const bool known = row.configRead;
    switch (column) {
        case Id:
            return static_cast<qlonglong>(run.id);
        case Name:
            return qs(run.name);
        case Status:
            return statusName(run.outcome.status);
        case Dataset:
            return known ? qs(dataset_name(config)) : QString();
        case Embeddings:
            return known ? embeddingsText(config) : QString();
        case Model:
            return known ? setting(config, "model.kind") : QString();
        case Batch:
            return known ? endedBatchText(run, config) : QString();
        case Precision:
            return known ? setting(config, "memory.precision") : QString();
        case Optimizer:
            return known ? setting(config, "train.optimizer") : QString();
        case Vocab:
            return known ? setting(config, "embeddings.vocab") : QString();
        case Cap:
            return known && config.memory.cap_mb > 0
                       ? QStringLiteral("%1 MiB").arg(config.memory.cap_mb)
                       : QString();
        case Peak:
            return run.outcome.peak_bytes > 0 ? formatBytes(run.outcome.peak_bytes) : QString();
        case FinalLoss:
            return formatOptional(run.outcome.final_train_loss);
        case Accuracy:
            return formatPercent(run.outcome.val_accuracy);
        case Duration:
            return formatDuration(run.outcome.wall_seconds);
        case Steps:
            return static_cast<qlonglong>(run.outcome.steps);
        case Created:
            return localTime(run.created_at);
        case Device:
            return qs(run.device);
        case Tags:
            return qs(run.tags);
        case Notes:
            return qs(run.notes).section('\n', 0, 0);
        default:
            return {};
    }
}

QVariant RunsModel::sortValue(const Row& row, int column) const {
    const RunRecord& run = row.record;
    switch (column) {
        case Id:
            return static_cast<qlonglong>(run.id);
        case Batch: {  // the effective batch, as the run ended
            const BatchShape ended = ended_batch(run.outcome, plannedBatch(row.config));
            return ended.batch_size * ended.accumulation;
        }
        case Cap:
            return static_cast<qlonglong>(row.config.memory.cap_mb);
        case Peak:
            return static_cast<qlonglong>(run.outcome.peak_bytes);
        case FinalLoss:
            return run.outcome.final_train_loss ? *run.outcome.final_train_loss : 1e300;
        case Accuracy:
            return run.outcome.val_accuracy ? *run.outcome.val_accuracy : -1.0;
        case Duration:
            return run.outcome.wall_seconds;
        case Steps:
            return static_cast<qlonglong>(run.outcome.steps);
        case Created:
            return qs(run.created_at);
        default:
            return display(row, column).toString().toLower();
    }
}

QString RunsModel::searchText(const Row& row) const {
    QStringList parts;
    for (int column = 0; column < ColumnCount; ++column) {
        parts << display(row, column).toString();
    }
    parts << qs(row.record.notes) << qs(row.record.tags);
    if (row.configRead) {
        parts << qs(row.config.dataset.path) << qs(row.config.dataset.valid_path)
              << qs(row.config.embeddings.path);
    }
    return parts.join(QLatin1Char('\n'));
}

QString RunsModel::settingsText(const Row& row) {
    QStringList lines;
    if (row.configRead) {
        for (const ConfigKeyInfo& key : config_keys()) {
            lines << qs(key.name + "=" + get_config_value(row.config, key.name));
        }
    }
    return lines.join(QLatin1Char('\n'));
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return QAbstractTableModel::headerData(section, orientation, role);
    }
    static const QStringList titles = {
        tr("ID"),    tr("Name"),        tr("Status"),     tr("Dataset"),       tr("Embeddings"),
        tr("Model"), tr("Batch"),       tr("Precision"),  tr("Optimizer"),     tr("Vocab"),
        tr("Cap"),   tr("Peak memory"), tr("Final loss"), tr("Val. accuracy"), tr("Duration"),
        tr("Steps"), tr("Created"),     tr("Device"),     tr("Tags"),          tr("Notes")};
    return titles.value(section);
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const {
    Qt::ItemFlags flags = QAbstractTableModel::flags(index);
    if (index.isValid() &&
        (index.column() == Name || index.column() == Notes || index.column() == Tags)) {
        flags |= Qt::ItemIsEditable;
    }
    return flags;
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !index.isValid() ||
        (index.column() != Name && index.column() != Notes && index.column() != Tags) ||
        !m_database->isOpen()) {
        return false;
    }
    Row& row = m_rows[static_cast<std::size_t>(index.row())];
    const std::string text = ss(value.toString());
    try {
        if (index.column() == Name) {
            if (text.empty()) {
                return false;
            }
            m_database->store().rename_run(row.record.id, text);
            row.record.name = text;
        } else if (index.column() == Tags) {
            m_database->store().set_tags(row.record.id, text);
            row.record.tags = text;
        } else {
            m_database->store().set_notes(row.record.id, text);
            row.record.notes = text;
        }
        row.search = searchText(row);
    } catch (const std::exception&) {
        return false;
    }
    emit dataChanged(index, index);
    return true;
}

}  // namespace oomlab::ui
