// Front ends that run in one process (the workbench, lessons) hand a data-parallel run or a
// batch-size search to oomlab-cli workers, and learn the outcome from the workers' reports.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/session/local_workers.h"
#include "oomlab/session/worker_report.h"

namespace oomlab {
namespace {

// The ranks mostly refuse alike (each checks the same config): each message once, every key.
BadInput combined(const std::vector<BadInput>& refusals) {
    std::vector<std::string> messages;
    std::vector<std::string> keys;
    for (const BadInput& refusal : refusals) {
        if (std::find(messages.begin(), messages.end(), refusal.what()) == messages.end()) {
            messages.emplace_back(refusal.what());
        }
        for (const std::string& key : refusal.keys()) {
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
                keys.push_back(key);
            }
        }
    }
    std::string message;
    for (const std::string& line : messages) {
        message += (message.empty() ? "" : "\n") + line;
    }
    return BadInput(message, keys);
}

// One job for the workers: the oomlab-cli beside this program and a temporary folder holding
// the config they read and the reports they write, removed with the job.
class WorkerJob {
public:
    WorkerJob(const ExperimentConfig& config, int processes) : m_processes(processes) {
        std::error_code error;
        // OOMLAB_CLI names another one (a program that is not installed beside it: the tests).
        const char* chosen = std::getenv("OOMLAB_CLI");
        m_cli = chosen && *chosen
                    ? std::filesystem::path(chosen)
                    : std::filesystem::read_symlink("/proc/self/exe", error).parent_path() /
                          "oomlab-cli";
        if (error || access(m_cli.c_str(), X_OK) != 0) {
            throw Error("training with " + std::to_string(processes) +
                        " processes needs oomlab-cli beside this program (" + m_cli.string() +
                        " is missing)");
        }
        m_folder = (std::filesystem::temp_directory_path(error) / "oomlab-workers-XXXXXX").string();
        if (mkdtemp(m_folder.data()) == nullptr) {
            throw Error("cannot create a folder for the workers' config in " + m_folder + ": " +
                        std::strerror(errno));
        }
        save_config_file(config, config_file());
        m_workers.program = m_cli.string();
        m_workers.count = processes;
        m_workers.grace = std::chrono::seconds(config.distributed.timeout_s + 30);
        m_workers.quiet = true;
        m_workers.report_folder = m_folder;
    }
    ~WorkerJob() {
        std::error_code ignored;
        std::filesystem::remove_all(m_folder, ignored);
    }
    WorkerJob(const WorkerJob&) = delete;
    WorkerJob& operator=(const WorkerJob&) = delete;

    std::string config_file() const { return m_folder + "/config.json"; }
    WorkerReports reports() const { return WorkerReports(m_folder); }

    void run(std::vector<std::string> arguments, const std::atomic<bool>& cancel,
             const std::function<void()>& tick) {
        m_workers.arguments = std::move(arguments);
        m_exits = run_local_workers(m_workers, cancel, tick);
    }

    // Why the workers left no result: BadInput with their message and keys when every one
    // refused the config, otherwise Error with how each ended and what they reported.
    [[noreturn]] void fail(const std::string& what) const {
        std::string reported;
        for (std::string line : distinct_error_lines(m_exits)) {
            if (line.rfind("error: ", 0) == 0) {
                line.erase(0, 7);
            }
            reported += (reported.empty() ? "" : "\n") + line;
        }
        const bool refused = every_worker_refused(m_exits);
        const std::vector<BadInput> refusals = reports().bad_inputs(m_processes);
        if (refused && !refusals.empty()) {
            throw combined(refusals);
        }
        if (refused && !reported.empty()) {
            throw BadInput(reported);
        }
        std::string ends;
        for (const WorkerExit& exit : m_exits) {
            ends += (ends.empty() ? "" : "; ") + exit.describe();
        }
        throw Error("the " + std::to_string(m_processes) + " worker processes " + what + " (" +
                    ends + ")" + (reported.empty() ? "" : ":\n" + reported));
    }

private:
    int m_processes;
    std::filesystem::path m_cli;
    std::string m_folder;
    LocalWorkers m_workers;
    std::vector<WorkerExit> m_exits;
};

}  // namespace

std::int64_t run_with_local_workers(const ExperimentConfig& config, const std::string& name,
                                    const std::string& db_path, int processes,
                                    const std::atomic<bool>& cancel,
                                    const std::function<void(std::int64_t run_id)>& tick) {
    WorkerJob job(config, processes);
    const WorkerReports reports = job.reports();
    std::int64_t run_id = 0;
    job.run({"run", "--db", db_path, "--name", name, "--config", job.config_file()}, cancel, [&] {
        if (run_id == 0) {
            run_id = reports.run_id().value_or(0);
        }
        if (tick) {
            tick(run_id);
        }
    });
    run_id = reports.run_id().value_or(0);
    if (run_id == 0) {
        job.fail("recorded no run");
    }
    return run_id;
}

BatchSizeSearch find_batch_size_with_local_workers(
    const ExperimentConfig& config, int processes, const std::atomic<bool>& cancel,
    const std::function<void(const BatchTrial&)>& on_trial) {
    WorkerJob job(config, processes);
    const WorkerReports reports = job.reports();
    std::size_t shown = 0;
    const auto show_new_trials = [&] {
        const auto reported = reports.batch_search();
        for (; reported && shown < reported->search.trials.size(); ++shown) {
            if (on_trial) {
                on_trial(reported->search.trials[shown]);
            }
        }
    };
    job.run({"find-batch-size", "--config", job.config_file()}, cancel, show_new_trials);
    show_new_trials();
    const auto reported = reports.batch_search();
    if (!reported || !reported->done) {
        job.fail(cancel.load() ? "were stopped before the search ended"
                               : "ended without an answer");
    }
    return reported->search;
}

}  // namespace oomlab
