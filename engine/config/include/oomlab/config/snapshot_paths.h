// Where debug.memory_snapshot writes: one file per run and per process. In the path, "{run}"
// stands for the run's id and "{rank}" for the process's rank, so one command that trains
// several runs or processes never writes two snapshots to one file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace oomlab {

// Throws BadInput naming `key` when a brace in `path` is not part of "{run}" or "{rank}": a
// misspelt placeholder ("{rnak}") would otherwise become part of the file's name.
void check_snapshot_placeholders(std::string_view key, std::string_view path);

// "{rank}" replaced by `rank`; with several processes and no "{rank}" in the path, ".rank<r>"
// goes before the extension ("snap.pickle" -> "snap.rank1.pickle").
std::string snapshot_path_for_rank(const std::string& path, int rank, int world_size);

// "{run}" replaced by the run's id.
std::string snapshot_path_for_run(const std::string& path, std::int64_t run_id);

// For a command that records several runs from one config (a sweep, a lesson): ".run{run}" goes
// before the extension unless the path already names the run. An empty path stays empty.
std::string snapshot_path_per_run(const std::string& path);

}  // namespace oomlab
