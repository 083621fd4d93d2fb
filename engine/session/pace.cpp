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

std::string_view pace_name(Pace pace) {
    for (const auto& [known, name] : kPaceNames) {
        if (known == pace) {
            return name;
        }
    }
    return "full";
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
