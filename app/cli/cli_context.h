// Shared pieces of the oomlab-cli subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oomlab/advice/oom_fixes.h"
#include "oomlab/common/format.h"  // format_bytes, for every subcommand
#include "oomlab/config/experiment_config.h"
#include "oomlab/launch/exit_code.h"  // the exit codes of the command line contract
#include "oomlab/launch/local_workers.h"
#include "oomlab/run/run_record.h"
#include "oomlab/store/run_store.h"

namespace oomlab {
struct SnapshotReport;
struct OomExplanation;
struct MemoryEstimate;
}  // namespace oomlab

namespace oomlab::cli {

// A run id as typed: a whole number from 1 to 2^63 - 1 (CLI11 alone would read a larger one
// as the largest, and look that run up).
const CLI::Validator& run_id_check();

// Seconds as typed, from `least` to `most` (`most_said` after it, as "(a week)"): 1e300
// overflowed the int it became, and NaN passed every comparison. `what` names them in the
// refusal: "give WHAT, from LEAST to MOST".
CLI::Validator seconds_check(const std::string& what, double least, double most,
                             const std::string& most_said = "");

// --config FILE and --set KEY=VALUE, shared by every command that takes an experiment.
struct ConfigOptions {
    std::string config_file;
    std::vector<std::string> overrides;

    void add_to(CLI::App& command);
    ExperimentConfig build() const;  // throws BadInput naming the file or key
};

std::string default_db_path();

// Run `id` of `store`; BadInput naming the store and how to list its runs when there is none.
RunRecord require_run(const RunStore& store, std::int64_t id);

// An estimate as `estimate --json` writes it.
nlohmann::ordered_json estimate_json(const MemoryEstimate& estimate);

// The database of saved runs for a command that reads runs already saved: a file that is not
// there, or is empty, is refused with `option` named, never made into a store (a mistyped --db
// made an empty store of five files and listed nothing).
RunStore open_saved_runs(const std::string& path, const std::string& option = "--db");

// For commands that train but cannot be one rank of a data-parallel run (sweep, lesson):
// under torchrun each process would train everything on its own. Throws
// BadInput when the environment describes a group of several processes.
void refuse_process_group(const std::string& command);

// --nproc N: runs this command line (without --nproc) in N local worker processes, one rank
// each, and waits for them; their errors are printed once. The exit code is rank 0's, or a
// failed worker's. Throws BadInput when this process is itself a rank (WORLD_SIZE is set).
// `rank0`, when given, gets how rank 0's worker ended.
int run_local_ranks(int count, const ExperimentConfig& config, WorkerExit* rank0 = nullptr);

// This program's path, for starting copies of it (/proc/self/exe when it cannot be read).
std::string this_program();

// The command line as main() received it, for commands that start copies of this program.
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

// A run's memory by category: what made up the peak, then what came on top of it.
void print_breakdown(const RunOutcome& outcome);
// Where the bytes came from: each module's share of the peak, the stages of the run.
void print_by_module(const RunOutcome& outcome);
void print_staircase(const RunOutcome& outcome);
// What to try after an out-of-memory, each fix with what it changes and its predicted peak.
void print_fixes(const std::vector<OomFix>& fixes);
// A run that ran out of memory: the fixes it was offered, then each run that tried one of them
// with what it measured against the prediction.
void print_tried_fixes(const RunRecord& run, const std::vector<RunRecord>& tried);
// The estimator's prediction beside the measured figures, disagreements marked.
void print_prediction(const RunRecord& run);
// A data-parallel run's memory on each rank.
void print_ranks(const RunRecord& run);

// While alive, SIGINT (Ctrl+C) and SIGTERM (kill, a scheduler's time limit) ask the training
// to stop: the run ends as `cancelled` with what it measured saved. A second signal ends the
// process at once. The signals are received by a thread of its own that only waits: the
// calling thread, and the threads it starts meanwhile (the math libraries' pools), block them,
// so that no signal handler ever runs on top of a computing kernel (oneDNN's BiLSTM matrix
// products took one into a corrupted heap, a third of the time).
class StopOnSignals {
public:
    StopOnSignals();
    ~StopOnSignals();
    StopOnSignals(const StopOnSignals&) = delete;
    StopOnSignals& operator=(const StopOnSignals&) = delete;

    const std::atomic<bool>& requested() const;

private:
    sigset_t m_blocked_before;
    std::mutex m_mutex;
    std::condition_variable m_closing_changed;
    bool m_closing = false;
    std::thread m_receiver;
};

// A change in bytes with its sign: "+1.5 MiB", "-512 B", "0 B".
std::string signed_bytes(std::int64_t bytes);

// A JSON value as one line of output. Text that is not valid UTF-8 (a file name in Latin-1,
// a run name from a script) is written with U+FFFD in its place instead of failing.
template <typename Json>
std::string json_line(const Json& value) {
    return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Each registers a subcommand whose callback sets `exit_code`.
void add_run_command(CLI::App& app, int& exit_code);
void add_runs_command(CLI::App& app, int& exit_code);
void add_glove_command(CLI::App& app, int& exit_code);
void add_device_command(CLI::App& app, int& exit_code);
void add_explain_command(CLI::App& app, int& exit_code);
void add_snapshot_command(CLI::App& app, int& exit_code);
void add_mcp_command(CLI::App& app, int& exit_code);
// `snapshot sql`, under the snapshot command.
void add_snapshot_sql_command(CLI::App& snapshot, int& exit_code);
// `query` on a snapshot (or trace) made into tables for the while, or on a database `snapshot
// sql --out` wrote: `row` gets the column names, then each row (snapshot_sql.h).
void query_snapshot_or_database(const std::string& file, const std::string& query,
                                const std::function<void(const std::vector<std::string>&)>& row);
void add_config_command(CLI::App& app, int& exit_code);
void add_estimate_command(CLI::App& app, int& exit_code);
void add_find_batch_size_command(CLI::App& app, int& exit_code);
void add_sweep_command(CLI::App& app, int& exit_code);
void add_lesson_command(CLI::App& app, int& exit_code);
void add_worker_command(CLI::App& app, int& exit_code);
void add_record_command(CLI::App& app, int& exit_code);

// What `snapshot show` and `explain` print, for `record` too.
void print_snapshot_report(const SnapshotReport& report);
void print_oom_explanation(const OomExplanation& explanation);

}  // namespace oomlab::cli
