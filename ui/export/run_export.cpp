#include "export/run_export.h"

#include <QFileInfo>
#include <QObject>
#include <QSaveFile>

#include "common/app_settings.h"
#include "common/formatting.h"
#include "oomlab/common/files.h"
#include "oomlab/config/config_io.h"
#include "oomlab/run/run_json.h"

namespace oomlab::ui {
namespace {

std::string runsJson(const RunStore& store, const QVector<qint64>& runIds) {
    std::string text;
    if (runIds.size() > 1) {
        text += "[\n";
    }
    for (int i = 0; i < runIds.size(); ++i) {
        const std::optional<RunRecord> run = store.find_run(runIds[i]);
        if (!run) {
            throw std::runtime_error("run " + std::to_string(runIds[i]) +
                                     " is not in the database");
        }
        text += run_export_json(*run, store.metrics(run->id), store.events(run->id));
        if (runIds.size() > 1 && i + 1 < runIds.size()) {
            text += ",";
        }
        text += "\n";
    }
    if (runIds.size() > 1) {
        text += "]\n";
    }
    return text;
}

std::string runsCsv(const RunStore& store, const QVector<qint64>& runIds) {
    std::vector<RunMetrics> runs;
    for (const qint64 id : runIds) {
        runs.push_back({id, store.metrics(id)});
    }
    return metrics_csv(runs);
}

}  // namespace

QString checkChosenOutput(const QString& path) {
    const QString database = AppSettings::databasePath().isEmpty() ? qs(RunStore::default_path())
                                                                   : AppSettings::databasePath();
    try {
        check_output_path(ss(path), {"the file", {ss(database)}, /*force=*/true, {}});
    } catch (const std::exception& error) {
        return qs(error.what());
    }
    return {};
}

QString writeTextFile(const QString& path, const std::string& content) {
    if (const QString error = checkChosenOutput(path); !error.isEmpty()) {
        return error;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        return QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    }
    file.write(content.data(), static_cast<qint64>(content.size()));
    if (!file.commit()) {
        return QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    }
    return {};
}

QString exportRuns(const RunStore& store, const QVector<qint64>& runIds, const QString& path) {
    if (runIds.isEmpty()) {
        return QObject::tr("no run selected");
    }
    const QString suffix = QFileInfo(path).suffix().toLower();
    try {
        if (suffix == QLatin1String("json")) {
            return writeTextFile(path, runsJson(store, runIds));
        }
        if (suffix == QLatin1String("csv")) {
            return writeTextFile(path, runsCsv(store, runIds));
        }
    } catch (const std::exception& error) {
        return qs(error.what());
    }
    return QObject::tr("unknown export format \"%1\": use .json or .csv").arg(suffix);
}

QString saveConfigFile(const ExperimentConfig& config, const QString& path) {
    return writeTextFile(path, config_to_json(config) + "\n");
}

bool loadConfigFile(const QString& path, ExperimentConfig& config, QString& error) {
    try {
        config = load_config_file(ss(path));
        return true;
    } catch (const std::exception& failure) {
        error = qs(failure.what());
        return false;
    }
}

}  // namespace oomlab::ui
