#include "oomlab/session/pace.h"

#include <array>
#include <utility>

namespace oomlab {
namespace {

constexpr std::array<std::pair<Pace, std::string_view>, 3> kPaceNames = {
    {{Pace::Full, "full"}, {Pace::Watchable, "watchable"}, {Pace::Slow, "slow"}}};

}  // namespace

int step_pause_ms(Pace pace) {
    switch (pace) {
        case Pace::Watchable:
            return 25;
        case Pace::Slow:
            return 120;
        case Pace::Full:
            break;
    }
    return 0;
}

std::vector<std::string> pace_names() {
    std::vector<std::string> names;
    for (const auto& [pace, name] : kPaceNames) {
        names.emplace_back(name);
    }
    return names;
}

std::optional<Pace> pace_named(std::string_view name) {
    for (const auto& [pace, known] : kPaceNames) {
        if (known == name) {
            return pace;
        }
    }
    return std::nullopt;
}

}  // namespace oomlab
