#include "compare/compare_data.h"

#include <algorithm>

#include "common/formatting.h"
#include "oomlab/config/config_io.h"

namespace oomlab::ui {

CompareData loadCompareData(const QString& databasePath, const QVector<qint64>& runIds) {
    CompareData data;
    try {
        const RunStore store = RunStore::open(ss(databasePath));
        for (qint64 id : runIds) {
            std::optional<RunRecord> record = store.find_run(id);
            if (!record) {
                continue;
            }
            CompareRun run;
            try {
                run.config = parse_config_json(record->config_json, "run " + std::to_string(id));
                run.configRead = true;
            } catch (const std::exception&) {
                run.configRead = false;
            }
            ThinnedMetrics thinned = store.thinned_metrics(id);
            run.metrics = std::move(thinned.rows);
            run.meanSamplesPerS = thinned.mean_samples_per_s;
            run.record = std::move(*record);
            data.runs.push_back(std::move(run));
        }
    } catch (const std::exception& error) {
        data.error = qs(error.what());
    }
    return data;
}

QString sharedNamePrefix(const QVector<CompareRun>& runs) {
    if (runs.size() < 2) {
        return {};
    }
    QString shared = qs(runs.front().record.name);
    for (const CompareRun& run : runs) {
        const QString name = qs(run.record.name);
        int same = 0;
        while (same < std::min(shared.size(), name.size()) && shared[same] == name[same]) {
            ++same;
        }
        shared.truncate(same);
    }
    // Whole words only: up to the last space (a name's own words stay whole).
    const int space = shared.lastIndexOf(QLatin1Char(' '));
    return space < 0 ? QString() : shared.left(space + 1);
}

QString runLabel(const RunRecord& run, int maxChars) {
    const QString label = QStringLiteral("#%1 %2").arg(run.id).arg(qs(run.name));
    if (maxChars <= 0 || label.size() <= maxChars) {
        return label;
    }
    return label.left(maxChars - 1) + QStringLiteral("…");
}

}  // namespace oomlab::ui
