#include "fail_over.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/size_text.h"
#include "oomlab/launch/exit_code.h"

namespace oomlab::cli {
namespace {

std::optional<double> growth_percent(const Growth& growth) {
    if (growth.before <= 0) {
        return std::nullopt;
    }
    return 100.0 * double(growth.after - growth.before) / double(growth.before);
}

std::string growth_words(const Growth& growth) {
    std::ostringstream text;
    text << growth.what << " " << format_bytes(growth.before) << " -> "
         << format_bytes(growth.after) << " (" << signed_bytes(growth.after - growth.before);
    if (const std::optional<double> percent = growth_percent(growth)) {
        text << ", " << std::showpos << std::fixed << std::setprecision(1) << *percent << "%";
    }
    text << ")";
    return text.str();
}

}  // namespace

FailOverOption::FailOverOption(CLI::App& command, const std::string& compared) {
    m_option = command.add_option(
        "--fail-over", *m_text,
        "Exit with status 4 when " + compared +
            " grew by more than this, a share of the baseline (5%) or an amount (512MiB): a "
            "memory check for CI");
}

std::optional<GrowthLimit> FailOverOption::limit() const {
    if (!*m_option) {
        return std::nullopt;
    }
    const std::string& text = *m_text;
    GrowthLimit limit{text, false, 0};
    if (!text.empty() && text.back() == '%') {
        const char* end = text.data() + text.size() - 1;
        const auto [rest, error] = std::from_chars(text.data(), end, limit.value);
        if (error == std::errc() && rest == end && limit.value >= 0 && limit.value <= 1000) {
            limit.percent = true;
            return limit;
        }
    } else if (const std::optional<double> bytes = size_text_bytes(text);
               // A bare number is refused: 5 meant 5%, or 5 GiB, not 5 bytes.
               bytes && text.find_first_not_of("0123456789. ") != std::string::npos &&
               *bytes <= double(kMostDeviceBytes)) {
        limit.value = *bytes;
        return limit;
    }
    throw BadInput("--fail-over " + text +
                   ": give the growth allowed as a percentage of the baseline (5%, from 0% to "
                   "1000%) or as a size with its unit (512MiB)");
}

bool past_limit(const Growth& growth, const GrowthLimit& limit) {
    const std::int64_t grown = growth.after - growth.before;
    if (!limit.percent) {
        return double(grown) > limit.value;
    }
    const std::optional<double> percent = growth_percent(growth);
    return percent ? *percent > limit.value : growth.after > 0;
}

nlohmann::ordered_json fail_over_json(const std::vector<Growth>& growths,
                                      const std::optional<GrowthLimit>& limit) {
    using Json = nlohmann::ordered_json;
    Json checks = Json::array();
    bool over = false;
    for (const Growth& growth : growths) {
        const std::optional<double> percent = growth_percent(growth);
        const bool past = limit && past_limit(growth, *limit);
        over = over || past;
        checks.push_back({{"what", growth.what},
                          {"before_bytes", growth.before},
                          {"after_bytes", growth.after},
                          {"growth_bytes", growth.after - growth.before},
                          {"growth_percent", percent ? Json(*percent) : Json(nullptr)},
                          {"over", limit ? Json(past) : Json(nullptr)}});
    }
    return {{"limit", limit ? Json(limit->text) : Json(nullptr)},
            {"over", limit ? Json(over) : Json(nullptr)},
            {"checks", checks}};
}

int fail_over_verdict(const std::vector<Growth>& growths, const GrowthLimit& limit) {
    std::vector<const Growth*> over;
    for (const Growth& growth : growths) {
        if (past_limit(growth, limit)) {
            over.push_back(&growth);
        }
    }
    const auto by_growth = [](const Growth* a, const Growth* b) {
        return a->after - a->before > b->after - b->before;
    };
    if (!over.empty()) {
        std::sort(over.begin(), over.end(), by_growth);
        std::cerr << "memory check failed: grew past --fail-over " << limit.text << ": "
                  << growth_words(*over.front());
        if (over.size() > 1) {
            std::cerr << ", and " << over.size() - 1 << " more figure"
                      << (over.size() > 2 ? "s" : "") << " past it";
        }
        std::cerr << '\n';
        return kExitOverLimit;
    }
    std::cerr << "memory check passed: within --fail-over " << limit.text;
    if (!growths.empty()) {
        const Growth& largest =
            *std::min_element(growths.begin(), growths.end(),
                              [&](const Growth& a, const Growth& b) { return by_growth(&a, &b); });
        std::cerr << ": the largest change, " << growth_words(largest);
    }
    std::cerr << '\n';
    return kExitOk;
}

}  // namespace oomlab::cli
