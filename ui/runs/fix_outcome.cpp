#include "runs/fix_outcome.h"

#include <QObject>

#include "common/formatting.h"
#include "oomlab/advice/oom_fixes.h"

namespace oomlab::ui {

QString fixOutcomeText(const RunStore& store, const RunRecord& tried) {
    if (!tried.fix_of) {
        return {};
    }
    const QString tries = QObject::tr("Tries a fix offered to run %1").arg(*tried.fix_of);
    const std::optional<RunRecord> failed = store.find_run(*tried.fix_of);
    if (!failed) {
        return QObject::tr("%1 (since deleted)").arg(tries);
    }
    std::vector<OomFix> offered;
    try {
        offered = parse_oom_fixes_json(failed->fixes_json, "run " + std::to_string(failed->id));
    } catch (const std::exception&) {
        // Its figures are then those of the run alone (the fixed run's details say why).
    }
    const QString figures = qs(tried_fix_figures(*failed, tried, offered));
    return figures.isEmpty()
               ? tries
               : QStringLiteral("%1: %2").arg(
                     tries, QString(figures).replace(QStringLiteral("->"), QStringLiteral("→")));
}

}  // namespace oomlab::ui
