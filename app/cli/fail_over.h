// --fail-over, a memory check for CI: a command that compares a change with a baseline (two
// snapshots, two runs, an estimate and the one before it) exits with kExitOverLimit when the
// memory it compares grew past the limit, and says so in one line a CI log shows.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oomlab::cli {

// How much memory may grow: a share of the baseline ("5%") or an amount ("512MiB").
struct GrowthLimit {
    std::string text;  // as given
    bool percent = false;
    double value = 0;  // percent, or bytes
};

// One figure compared: "device 0: peak allocated", before and after.
struct Growth {
    std::string what;
    std::int64_t before = 0;
    std::int64_t after = 0;
};

// The option on `command`; limit() is nothing when it was not given, and throws BadInput naming
// --fail-over when it is not a percentage or a size.
class FailOverOption {
public:
    FailOverOption(CLI::App& command, const std::string& compared);
    CLI::Option* option() const { return m_option; }
    std::optional<GrowthLimit> limit() const;

private:
    std::shared_ptr<std::string> m_text = std::make_shared<std::string>();
    CLI::Option* m_option = nullptr;
};

// Whether any growth is past the limit (a growth from nothing is past any percentage).
bool past_limit(const Growth& growth, const GrowthLimit& limit);

// {"limit", "over", "checks": [{"what", "before_bytes", "after_bytes", "growth_bytes",
// "growth_percent" (null from nothing), "over"}]}, for --json beside the command's own figures;
// without a limit, "limit" and each "over" are null.
nlohmann::ordered_json fail_over_json(const std::vector<Growth>& growths,
                                      const std::optional<GrowthLimit>& limit);

// Writes the verdict to standard error in one line (the largest growth past the limit, or the
// largest growth within it) and returns kExitOverLimit or kExitOk.
int fail_over_verdict(const std::vector<Growth>& growths, const GrowthLimit& limit);

}  // namespace oomlab::cli
