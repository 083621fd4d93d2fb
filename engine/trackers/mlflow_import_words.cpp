// What `runs import --from mlflow` says of an import, in words.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "oomlab/common/utf8.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/mlflow_import.h"

namespace oomlab::trackers {

std::string unknown_settings_note(const std::set<std::string>& settings) {
    constexpr std::size_t kNamed = 5;
    std::string named;
    auto setting = settings.begin();
    for (std::size_t i = 0; i < kNamed && setting != settings.end(); ++i, ++setting) {
        named += (i ? ", " : "") + printable_line(*setting);
    }
    const std::size_t more = settings.size() - std::min(kNamed, settings.size());
    return settings.size() == 1
               ? "a setting this version does not know, left at its default: " + named
               : std::to_string(settings.size()) +
                     " settings this version does not know, left at their defaults: " + named +
                     (more ? ", and " + std::to_string(more) + " more" : "");
}

std::string without_summary_note(const std::vector<std::string>& runs) {
    const std::size_t count = runs.size();
    return "the server does not serve summary.json for some runs (" + std::to_string(count) +
           (count == 1 ? " run: " : " runs, the first ") + (runs.empty() ? "" : runs.front()) +
           "): their outcome is read from tags and final values, without memory by module, the "
           "staircase or the prediction's modules";
}

std::string describe(const MlflowSource& source, const MlflowImport& imported) {
    std::string text = "imported " + std::to_string(imported.added.size()) +
                       " run(s) from MLflow " + uri_without_password(source.tracking_uri) +
                       ", experiment " + quoted_excerpt(source.experiment);
    const auto count = [&](std::size_t n, const char* what) {
        if (n) {
            text += "; " + std::to_string(n) + " " + what;
        }
    };
    count(imported.already_here, "already here");
    count(imported.being_sent, "still being sent (the next import takes them)");
    count(imported.not_from_oomlab, "not from OOM Lab (left there)");
    for (const std::string& note : imported.notes) {
        text += "\n  note: " + note;
    }
    return text;
}

}  // namespace oomlab::trackers
