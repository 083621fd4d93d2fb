#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "oomlab/advice/oom_fixes.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/config/config_io.h"

namespace oomlab {

using Json = nlohmann::ordered_json;

std::string oom_fixes_json(const std::vector<OomFix>& fixes) {
    Json list = Json::array();
    for (const OomFix& fix : fixes) {
        Json set = Json::object();
        for (const auto& [key, value] : fix.set) {
            set[key] = value;
        }
        list.push_back({{"set", set},
                        {"predicted_peak_bytes", fix.predicted_peak_bytes},
                        {"cost", fix_cost_name(fix.cost)},
                        {"reason", fix.reason}});
    }
    return list.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::vector<OomFix> parse_oom_fixes_json(const std::string& text, const std::string& source) {
    const Json list = parse_json_limited<Json>(text, source);
    if (!list.is_array()) {
        throw BadInput(source + ": the fixes are not a list");
    }
    std::vector<OomFix> fixes;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string where = source + ": fixes[" + std::to_string(i) + "]";
        try {
            const Json& entry = list[i];
            OomFix& fix = fixes.emplace_back();
            for (const auto& [key, value] : entry.at("set").items()) {
                fix.set.emplace_back(key, value.get<std::string>());
            }
            fix.predicted_peak_bytes = entry.at("predicted_peak_bytes").get<std::int64_t>();
            fix.reason = entry.at("reason").get<std::string>();
            const std::optional<FixCost> cost = fix_cost_named(entry.at("cost").get<std::string>());
            if (!cost) {
                throw BadInput(where + ".cost: not a cost this version knows");
            }
            fix.cost = *cost;
        } catch (const Json::exception& error) {
            throw BadInput(where + ": " + error.what());
        }
    }
    return fixes;
}

const OomFix* fix_tried_by(const std::vector<OomFix>& offered, const RunRecord& tried) {
    ExperimentConfig config;
    try {
        config = parse_config_json(tried.config_json, "run " + std::to_string(tried.id));
    } catch (const std::exception&) {
        return nullptr;
    }
    for (const OomFix& fix : offered) {
        const bool trained_it =
            std::all_of(fix.set.begin(), fix.set.end(), [&](const auto& setting) {
                return get_config_value(config, setting.first) == setting.second;
            });
        if (trained_it) {
            return &fix;
        }
    }
    return nullptr;
}

std::string tried_fix_figures(const RunRecord& failed, const RunRecord& tried,
                              const std::vector<OomFix>& offered) {
    std::string text;
    const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
    const OomFix* fix = fix_tried_by(offered, tried);
    const bool measured = tried.outcome.peak_bytes > 0;
    if (fix && measured) {
        add("predicted " + format_bytes(fix->predicted_peak_bytes) + " -> measured " +
            format_bytes(tried.outcome.peak_bytes));
    } else if (measured) {
        add("peak " + format_bytes(tried.outcome.peak_bytes));
    }
    const auto percent = [](double accuracy) {
        char shown[32];
        std::snprintf(shown, sizeof shown, "%.1f%%", 100 * accuracy);
        return std::string(shown);
    };
    if (tried.outcome.val_accuracy) {
        add("accuracy " +
            (failed.outcome.val_accuracy ? percent(*failed.outcome.val_accuracy) + " -> " : "") +
            percent(*tried.outcome.val_accuracy));
    }
    return text.empty() ? "nothing measured" : text;
}

}  // namespace oomlab
