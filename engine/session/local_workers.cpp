#include "oomlab/session/local_workers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/session/worker_report.h"

namespace oomlab {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr long kErrorsKept = 64 * 1024;
constexpr int kExitBadInput = 2;  // oomlab-cli's exit code for a config it refuses

// A worker's standard error: an unnamed temporary file, so nothing is left behind however
// the launcher ends.
struct ErrorFile {
    ErrorFile() : file(std::tmpfile()) {
        if (file == nullptr) {
            throw Error(std::string("cannot create a temporary file for a worker's errors: ") +
                        std::strerror(errno));
        }
    }
    ~ErrorFile() { std::fclose(file); }
    ErrorFile(const ErrorFile&) = delete;
    ErrorFile& operator=(const ErrorFile&) = delete;

    std::string tail() const {
        std::fseek(file, 0, SEEK_END);
        const long size = std::ftell(file);
        const long start = std::max(0L, size - kErrorsKept);
        std::fseek(file, start, SEEK_SET);
        std::string text(static_cast<std::size_t>(size - start), '\0');
        text.resize(std::fread(text.data(), 1, text.size(), file));
        return text;
    }

    std::FILE* file;
};

[[noreturn]] void exec_worker(const LocalWorkers& workers, int rank, int port, pid_t parent,
                              int error_fd) {
    // Die with the launcher, however it ends; it may have ended before this line.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(127);
    }
    // Out of the terminal's process group: Ctrl+C reaches the launcher alone, which passes
    // it on once (a second SIGINT would end a worker at once, without saving its run).
    setpgid(0, 0);
    if (workers.quiet && !std::freopen("/dev/null", "w", stdout)) {
        _exit(126);
    }
    if (dup2(error_fd, STDERR_FILENO) < 0) {
        _exit(126);
    }
    const std::string world = std::to_string(workers.count);
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", world.c_str(), 1);
    setenv("LOCAL_WORLD_SIZE", world.c_str(), 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    if (!workers.report_folder.empty()) {
        setenv(kWorkerReportVariable, workers.report_folder.c_str(), 1);
    }
    // As torchrun does: N processes that each start a thread per core would fight over them.
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    setenv("OMP_NUM_THREADS",
           std::to_string(std::max(1u, cores / static_cast<unsigned>(workers.count))).c_str(),
           /*overwrite=*/0);
    std::vector<char*> argv{const_cast<char*>(workers.program.c_str())};
    for (const std::string& argument : workers.arguments) {
        argv.push_back(const_cast<char*>(argument.c_str()));
    }
    argv.push_back(nullptr);
    execv(workers.program.c_str(), argv.data());
    std::fprintf(stderr, "error: cannot start %s: %s\n", workers.program.c_str(),
                 std::strerror(errno));
    _exit(127);
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

}  // namespace

std::string WorkerExit::describe() const {
    const std::string who = "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
    if (signal != 0) {
        return who +
               (killed_by_launcher ? " was stopped by the launcher with signal "
                                   : " was killed by signal ") +
               std::to_string(signal) + " (" + strsignal(signal) + ")";
    }
    return who + " exited with code " + std::to_string(exit_code);
}

bool every_worker_refused(const std::vector<WorkerExit>& exits) {
    return std::all_of(exits.begin(), exits.end(), [](const WorkerExit& exit) {
        return exit.signal == 0 && exit.exit_code == kExitBadInput;
    });
}

std::vector<std::string> distinct_error_lines(const std::vector<WorkerExit>& exits) {
    std::vector<std::string> lines;
    for (const WorkerExit& exit : exits) {
        std::size_t start = 0;
        while (start < exit.errors.size()) {
            std::size_t end = exit.errors.find('\n', start);
            end = end == std::string::npos ? exit.errors.size() : end;
            std::string line = exit.errors.substr(start, end - start);
            if (!line.empty() && std::find(lines.begin(), lines.end(), line) == lines.end()) {
                lines.push_back(std::move(line));
            }
            start = end + 1;
        }
    }
    return lines;
}

std::vector<WorkerExit> run_local_workers(const LocalWorkers& workers,
                                          const std::atomic<bool>& stop,
                                          const std::function<void()>& tick) {
    const int port = free_loopback_port();
    const pid_t parent = getpid();
    std::vector<ErrorFile> error_files(workers.count);
    std::vector<WorkerExit> exits(workers.count);
    std::vector<bool> running(workers.count, false);
    for (int rank = 0; rank < workers.count; ++rank) {
        std::fflush(nullptr);  // no buffered output is written twice
        const pid_t pid = fork();
        if (pid < 0) {
            for (int started = 0; started < rank; ++started) {
                kill(exits[started].pid, SIGKILL);
                waitpid(exits[started].pid, nullptr, 0);
            }
            throw Error(std::string("cannot start the worker processes: ") + std::strerror(errno));
        }
        if (pid == 0) {
            exec_worker(workers, rank, port, parent, fileno(error_files[rank].file));
        }
        exits[rank].rank = rank;
        exits[rank].pid = pid;
        running[rank] = true;
    }
    bool stop_passed_on = false;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    int alive = workers.count;
    while (alive > 0) {
        if (stop.load() && !stop_passed_on) {
            stop_passed_on = true;
            for (int rank = 0; rank < workers.count; ++rank) {
                if (running[rank]) {
                    kill(exits[rank].pid, SIGINT);
                }
            }
        }
        if (deadline && std::chrono::steady_clock::now() > *deadline) {
            for (int rank = 0; rank < workers.count; ++rank) {
                if (running[rank]) {
                    exits[rank].killed_by_launcher = true;
                    kill(exits[rank].pid, SIGKILL);
                }
            }
        }
        bool reaped = false;
        for (int rank = 0; rank < workers.count; ++rank) {
            int status = 0;
            if (!running[rank] || waitpid(exits[rank].pid, &status, WNOHANG) != exits[rank].pid) {
                continue;  // only our own workers: a caller may have other children
            }
            reaped = true;
            running[rank] = false;
            --alive;
            exits[rank].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
            exits[rank].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
            if (!exits[rank].succeeded() && !deadline) {
                deadline = std::chrono::steady_clock::now() + workers.grace;
            }
        }
        if (!reaped) {
            if (tick) {
                tick();
            }
            std::this_thread::sleep_for(kPollInterval);
        }
    }
    for (int rank = 0; rank < workers.count; ++rank) {
        exits[rank].errors = error_files[rank].tail();
    }
    return exits;
}

std::int64_t run_with_local_workers(const ExperimentConfig& config, const std::string& name,
                                    const std::string& db_path, int processes,
                                    const std::atomic<bool>& cancel,
                                    const std::function<void(std::int64_t run_id)>& tick) {
    std::error_code error;
    // OOMLAB_CLI names another one (a program that is not installed beside it: the tests).
    const char* chosen = std::getenv("OOMLAB_CLI");
    const std::filesystem::path cli =
        chosen && *chosen
            ? std::filesystem::path(chosen)
            : std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / "oomlab-cli";
    if (error || access(cli.c_str(), X_OK) != 0) {
        throw Error("training with " + std::to_string(processes) +
                    " processes needs oomlab-cli "
                    "beside this program (" +
                    cli.string() + " is missing)");
    }
    std::string folder =
        (std::filesystem::temp_directory_path(error) / "oomlab-workers-XXXXXX").string();
    if (mkdtemp(folder.data()) == nullptr) {
        throw Error("cannot create a folder for the workers' config in " + folder + ": " +
                    std::strerror(errno));
    }
    const std::string config_file = folder + "/config.json";
    save_config_file(config, config_file);
    const WorkerReports reports(folder);
    LocalWorkers workers;
    workers.program = cli.string();
    workers.arguments = {"run", "--db", db_path, "--name", name, "--config", config_file};
    workers.count = processes;
    workers.grace = std::chrono::seconds(config.distributed.timeout_s + 30);
    workers.quiet = true;
    workers.report_folder = folder;
    std::int64_t run_id = 0;
    const std::vector<WorkerExit> exits = run_local_workers(workers, cancel, [&] {
        if (run_id == 0) {
            run_id = reports.run_id().value_or(0);
        }
        if (tick) {
            tick(run_id);
        }
    });
    run_id = reports.run_id().value_or(0);
    const std::vector<BadInput> refusals = reports.bad_inputs(processes);
    std::filesystem::remove_all(folder, error);
    if (run_id != 0) {
        return run_id;
    }
    std::string reported;
    for (std::string line : distinct_error_lines(exits)) {
        if (line.rfind("error: ", 0) == 0) {
            line.erase(0, 7);
        }
        reported += (reported.empty() ? "" : "\n") + line;
    }
    const bool refused = every_worker_refused(exits);
    if (refused && !refusals.empty()) {
        throw combined(refusals);
    }
    if (refused && !reported.empty()) {
        throw BadInput(reported);
    }
    std::string ends;
    for (const WorkerExit& exit : exits) {
        ends += (ends.empty() ? "" : "; ") + exit.describe();
    }
    throw Error("the " + std::to_string(processes) + " worker processes recorded no run (" + ends +
                ")" + (reported.empty() ? "" : ":\n" + reported));
}

}  // namespace oomlab
