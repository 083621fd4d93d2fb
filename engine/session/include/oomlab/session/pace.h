// How fast a run trains: at full speed, or paced so that its curves can be watched (a class
// following a lecturer's or its own runs). The pause is after each optimizer step and is
// idle time (RunListener::step_pause_ms): a paced run takes little CPU while it waits. The
// workbench's Training pace menu and `oomlab-cli run --pace` share these.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

enum class Pace { Full, Watchable, Slow };

// The pause after each step: 0 at full speed, 25 ms watchable (about 40 steps a second), 120
// ms slow (about 8).
int step_pause_ms(Pace pace);

// The paces by the names the command line takes: "full", "watchable", "slow".
std::vector<std::string> pace_names();
std::optional<Pace> pace_named(std::string_view name);

}  // namespace oomlab
