// Running a PyTorch program for `oomlab-cli record`: the startup hook in a folder of its own,
// the program's standard error passed through and read for an out-of-memory message, signals
// meant for oomlab-cli passed on, and, for a try, an allocator setting of its own and a time
// limit after which the program (and what it started) is stopped.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/advice/oom_message.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::cli {

// Where a run's memory record goes: a CUDA memory snapshot, or without CUDA the profiler's
// trace beside it.
struct RecordFiles {
    std::filesystem::path snapshot;
    std::filesystem::path trace;
};

// The two files for --out (.pickle or .json, either named).
RecordFiles record_files_for(const std::filesystem::path& out);

// A folder of its own holding the hook as sitecustomize.py; removed when done.
class HookFolder {
public:
    HookFolder();
    ~HookFolder();
    HookFolder(const HookFolder&) = delete;
    HookFolder& operator=(const HookFolder&) = delete;
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

struct RecordedRun {
    std::vector<std::string> command;
    std::optional<std::string> alloc_conf;  // PYTORCH_CUDA_ALLOC_CONF for this run only
    double timeout_seconds = 0;             // 0: none
    // From the SIGTERM (past the timeout, or record stopped) to the SIGKILL; below 0: 5 s past
    // the timeout, 10 s when stopped.
    double kill_after_seconds = -1;
};

struct ProgramEnd {
    int exit_code = 0;  // as a shell gives it: 128 + a signal's number
    int signal = 0;     // the signal that ended it, or 0
    bool timed_out = false;
    double seconds = 0;                     // how long it ran
    std::vector<std::string> left_running;  // what it left running, stopped: "PID (NAME)"
};

// Runs the command with the hook; throws BadInput when it cannot be started.
ProgramEnd run_recorded(const RecordedRun& run, const RecordFiles& files, const HookFolder& hook,
                        OomLogReader& messages);

// Why no memory record was written, from how far the hook came and how the program ended.
std::string why_nothing_was_written(const HookFolder& hook, const ProgramEnd& end);

// What one run reached: how it ended, the memory record it wrote (read), and its
// out-of-memory message explained.
struct RecordedOutcome {
    std::optional<std::string> setting;  // the allocator setting it was given, if any
    ProgramEnd end;
    std::optional<std::filesystem::path> file;
    std::optional<SnapshotReport> report;
    std::string no_report;  // why there is none: nothing written, or not readable
    std::optional<OomExplanation> explanation;
    bool out_of_memory() const;
};

// Runs `run` with a hook of its own, then reads what it wrote and what it printed.
RecordedOutcome record_run(const RecordedRun& run, const RecordFiles& files);

bool is_memory_snapshot(const std::string& path);
bool is_profiler_trace(const std::string& path);

// Before a run: somewhere to write its files, and none of the user's replaced (a file that is
// no memory record of this kind, or its recorded program's description) unless `force`.
// BadInput naming `option` (--out) and the file otherwise.
void check_record_outputs(const RecordFiles& files, bool force, const std::string& option);

// The file the run wrote, if one was written after `since`.
std::optional<std::filesystem::path> written_record(const RecordFiles& files,
                                                    std::filesystem::file_time_type since);

}  // namespace oomlab::cli
