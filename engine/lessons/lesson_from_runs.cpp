// A lesson drafted from saved runs (the workbench's Save as lesson…): their settings as the
// lesson's base and runs, and claims that what was measured holds, for a lecturer to edit.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/lessons/lesson.h"

namespace oomlab {
namespace {

using OrderedJson = nlohmann::ordered_json;
using KeyValues = std::map<std::string, std::string>;  // key -> value as text

// The settings of `config` that differ from the defaults.
KeyValues non_default(const ExperimentConfig& config) {
    static const ExperimentConfig defaults;
    KeyValues settings;
    for (const ConfigKeyInfo& info : config_keys()) {
        const std::string value = get_config_value(config, info.name);
        if (value != get_config_value(defaults, info.name)) {
            settings[info.name] = value;
        }
    }
    return settings;
}

// A value as its key's type in JSON: 8, 0.5, true, "adam".
OrderedJson typed(const std::string& key, const std::string& text) {
    const ConfigKeyInfo* info = find_config_key(key);
    switch (info ? info->kind : ValueKind::Text) {
        case ValueKind::Integer:
            return std::stoll(text);
        case ValueKind::Real:
            return std::strtod(text.c_str(), nullptr);
        case ValueKind::Boolean:
            return text == "true";
        default:
            return text;
    }
}

OrderedJson as_json(const KeyValues& settings) {
    OrderedJson object = OrderedJson::object();
    for (const auto& [key, value] : settings) {
        object[key] = typed(key, value);
    }
    return object;
}

// Each run's label: its name, made unique by its number where two share one.
std::vector<std::string> labels_of(const std::vector<RunRecord>& runs) {
    std::vector<std::string> labels;
    std::set<std::string> taken;
    for (const RunRecord& run : runs) {
        std::string label = run.name.empty() ? "run " + std::to_string(run.id) : run.name;
        if (!taken.insert(label).second) {
            label += " (#" + std::to_string(run.id) + ")";
            taken.insert(label);
        }
        labels.push_back(label);
    }
    return labels;
}

}  // namespace

std::string lesson_from_runs(const std::vector<RunRecord>& runs) {
    std::vector<KeyValues> settings;
    for (const RunRecord& run : runs) {
        settings.push_back(non_default(parse_config_json(run.config_json, run.name)));
    }
    // The base: what every run sets alike; each run sets the rest.
    KeyValues base = settings.empty() ? KeyValues{} : settings.front();
    for (const KeyValues& run : settings) {
        for (auto at = base.begin(); at != base.end();) {
            const auto same = run.find(at->first);
            at = same != run.end() && same->second == at->second ? std::next(at) : base.erase(at);
        }
    }
    const std::vector<std::string> labels = labels_of(runs);
    OrderedJson lesson_runs = OrderedJson::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        KeyValues own;
        for (const auto& [key, value] : settings[i]) {
            if (!base.count(key)) {
                own[key] = value;
            }
        }
        lesson_runs.push_back({{"label", labels[i]}, {"set", as_json(own)}});
    }
    // Claims of what was measured: each run's end where it did not complete, and the smaller
    // peak at most its measured share of the larger (with a tenth of slack, so a run on
    // another machine that peaks a little higher still shows it).
    OrderedJson claims = OrderedJson::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (runs[i].outcome.status != RunStatus::Completed) {
            claims.push_back({{"run", labels[i]},
                              {"status", std::string(run_status_name(runs[i].outcome.status))}});
        }
    }
    const auto by_peak = [](const RunRecord& a, const RunRecord& b) {
        return a.outcome.peak_bytes < b.outcome.peak_bytes;
    };
    const auto least = std::min_element(runs.begin(), runs.end(), by_peak);
    const auto most = std::max_element(runs.begin(), runs.end(), by_peak);
    if (runs.size() >= 2 && least->outcome.peak_bytes > 0 &&
        least->outcome.peak_bytes < most->outcome.peak_bytes) {
        const double share = double(least->outcome.peak_bytes) / double(most->outcome.peak_bytes);
        claims.push_back({{"metric", "peak_bytes"},
                          {"smaller", labels[std::size_t(least - runs.begin())]},
                          {"than", labels[std::size_t(most - runs.begin())]},
                          {"at_most", std::min(1.0, std::ceil(share * 110.0) / 100.0)}});
    }
    OrderedJson lesson = {{"title", "Runs " +
                                        [&] {
                                            std::string ids;
                                            for (const RunRecord& run : runs) {
                                                ids += (ids.empty() ? "#" : ", #") +
                                                       std::to_string(run.id);
                                            }
                                            return ids;
                                        }() +
                                        " as a lesson"},
                          {"explanation", "Say here what the runs show, and why."},
                          {"base", as_json(base)},
                          {"runs", lesson_runs},
                          {"claims", claims}};
    return lesson.dump(2) + "\n";
}

}  // namespace oomlab
