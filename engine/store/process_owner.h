// Which process writes a run, so that a later process can tell a live writer (the CLI
// training while the GUI browses) from one that died and left its run `running`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace oomlab::store {

struct ProcessOwner {
    std::string host;
    std::int64_t pid = 0;
    // Start time in clock ticks after boot (/proc/<pid>/stat field 22), so a reused pid is
    // not taken for the original writer. 0 when unknown.
    std::int64_t start_ticks = 0;
};

ProcessOwner current_process();

// The start time of a live process; nullopt when there is no such process, it is a zombie,
// or /proc cannot tell.
std::optional<std::int64_t> process_start_ticks(std::int64_t pid);

// True when `owner` certainly no longer runs. A process on another host cannot be checked
// and counts as alive; so does the calling process itself.
bool owner_is_gone(const ProcessOwner& owner, const ProcessOwner& self);

}  // namespace oomlab::store
