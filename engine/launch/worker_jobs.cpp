// Worker jobs: a folder with the config and the task, workers that run it, and what their
// reports and exits say.
#include "oomlab/launch/worker_jobs.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/config/config_io.h"
#include "oomlab/launch/local_workers.h"
#include "oomlab/launch/worker_report.h"

namespace oomlab {
namespace {

constexpr const char* kTaskFile = "task.json";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kStepPauseFile = "step_pause_ms";
constexpr int kMostStepPauseMs = 60 * 1000;
constexpr std::uint64_t kMaxTaskBytes = 1 << 20;

constexpr const char* kFolderPrefix = "oomlab-workers-";

// The job folders of launchers that no longer run (a workbench that was killed): named
// oomlab-workers-PID-XXXXXX, this user's, and PID gone. Their workers died with them
// (PR_SET_PDEATHSIG), so nothing uses the folder.
void remove_orphaned_job_folders(const std::filesystem::path& temp) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(temp, error)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(kFolderPrefix, 0) != 0) {
            continue;
        }
        const std::string rest = name.substr(std::strlen(kFolderPrefix));
        const std::size_t dash = rest.find('-');
        if (dash == std::string::npos || dash == 0 ||
            rest.find_first_not_of("0123456789") != dash) {
            continue;  // not a folder this version names
        }
        struct stat info {};
        if (lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
            info.st_uid != getuid()) {
            continue;
        }
        const long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
        if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
            std::filesystem::remove_all(entry.path(), error);
        }
    }
}

const char* task_name(WorkerTask::Kind kind) {
    return kind == WorkerTask::Kind::Run ? "run" : "find-batch-size";
}

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

std::mutex g_program_mutex;
WorkerProgram g_program;  // none until the front end names one

WorkerProgram worker_program() {
    const std::lock_guard<std::mutex> lock(g_program_mutex);
    return g_program;
}

// One job for the workers: the front end's worker program and a temporary folder holding the
// config they read, the task and the reports they write, removed with the job.
class WorkerJob {
public:
    WorkerJob(const ExperimentConfig& config, const WorkerTask& task, int processes)
        : m_processes(processes) {
        const WorkerProgram program = worker_program();
        if (program.path.empty()) {
            throw Error("training with " + std::to_string(processes) +
                        " processes needs a program to start the workers with, and this one "
                        "names none");
        }
        if (access(program.path.c_str(), X_OK) != 0) {
            throw Error("training with " + std::to_string(processes) + " processes needs " +
                        program.path + " to start the workers with, and it is missing");
        }
        std::error_code error;
        const std::filesystem::path temp = std::filesystem::temp_directory_path(error);
        remove_orphaned_job_folders(temp);
        m_folder = (temp / (kFolderPrefix + std::to_string(getpid()) + "-XXXXXX")).string();
        if (mkdtemp(m_folder.data()) == nullptr) {
            throw Error("cannot create a folder for the workers' config in " + m_folder + ": " +
                        std::strerror(errno));
        }
        save_config_file(config, m_folder + "/" + kConfigFile);
        const nlohmann::ordered_json description = {
            {"task", task_name(task.kind)}, {"db", task.db_path}, {"name", task.run_name}};
        write_file_atomically(
            m_folder + "/" + kTaskFile,
            description.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
        m_workers.program = program.path;
        m_workers.arguments = program.arguments;
        m_workers.arguments.push_back(m_folder);
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

    WorkerReports reports() const { return WorkerReports(m_folder); }

    // Written whole (renamed into place), so a worker never reads half a number.
    void set_step_pause_ms(int milliseconds) {
        if (milliseconds != m_step_pause_ms) {
            m_step_pause_ms = milliseconds;
            write_file_atomically(m_folder + "/" + kStepPauseFile, std::to_string(milliseconds));
        }
    }

    void run(const std::atomic<bool>& cancel, const std::function<void()>& tick) {
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
    std::string m_folder;
    LocalWorkers m_workers;
    std::vector<WorkerExit> m_exits;
    int m_step_pause_ms = 0;
};

}  // namespace

void set_worker_program(WorkerProgram program) {
    const std::lock_guard<std::mutex> lock(g_program_mutex);
    g_program = std::move(program);
}

WorkerTask read_worker_task(const std::string& folder) {
    const std::string path = folder + "/" + kTaskFile;
    const std::string text = read_input_file(path, "the worker job", kMaxTaskBytes);
    WorkerTask task;
    try {
        const nlohmann::json description = parse_json_limited(text, path);
        const std::string kind = description.at("task").get<std::string>();
        if (kind != task_name(WorkerTask::Kind::Run) &&
            kind != task_name(WorkerTask::Kind::FindBatchSize)) {
            throw BadInput(path + ": \"task\": \"" + kind + "\" is no task of a worker");
        }
        task.kind = kind == task_name(WorkerTask::Kind::Run) ? WorkerTask::Kind::Run
                                                             : WorkerTask::Kind::FindBatchSize;
        task.db_path = description.at("db").get<std::string>();
        task.run_name = description.at("name").get<std::string>();
    } catch (const nlohmann::json::exception& error) {
        throw BadInput(path + ": not a worker job (" + error.what() + ")");
    }
    task.config_file = folder + "/" + kConfigFile;
    return task;
}

int read_step_pause_ms(const std::string& folder) {
    std::ifstream file(folder + "/" + kStepPauseFile);
    int milliseconds = 0;
    return file >> milliseconds ? std::clamp(milliseconds, 0, kMostStepPauseMs) : 0;
}

std::int64_t run_with_local_workers(const ExperimentConfig& config, const std::string& name,
                                    const std::string& db_path, int processes,
                                    const std::atomic<bool>& cancel,
                                    const std::function<void(std::int64_t run_id)>& tick,
                                    const std::function<int()>& step_pause_ms) {
    WorkerTask task;
    task.db_path = db_path;
    task.run_name = name;
    WorkerJob job(config, task, processes);
    const WorkerReports reports = job.reports();
    std::int64_t run_id = 0;
    const auto pace = [&] {
        if (step_pause_ms) {
            job.set_step_pause_ms(std::clamp(step_pause_ms(), 0, kMostStepPauseMs));
        }
    };
    pace();  // before the first step
    job.run(cancel, [&] {
        pace();
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
    WorkerTask task;
    task.kind = WorkerTask::Kind::FindBatchSize;
    WorkerJob job(config, task, processes);
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
    job.run(cancel, show_new_trials);
    show_new_trials();
    const auto reported = reports.batch_search();
    if (!reported || !reported->done) {
        job.fail(cancel.load() ? "were stopped before the search ended"
                               : "ended without an answer");
    }
    return reported->search;
}

}  // namespace oomlab
