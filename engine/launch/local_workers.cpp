#include "oomlab/launch/local_workers.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "oomlab/common/errors.h"
#include "oomlab/launch/exit_code.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/launch/worker_report.h"

namespace oomlab {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr long kErrorsKept = 64 * 1024;

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
                              int error_fd, const sigset_t& launcher_mask) {
    // Until exec, this copy of the launcher would catch a stop in the launcher's own handler,
    // and lose it: the stop signals take their default action here, and one that came since
    // the fork (held back, see run_local_workers) is delivered now.
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    sigprocmask(SIG_SETMASK, &launcher_mask, nullptr);
    // The launcher's thread may block them itself (its stop is received on a thread of its
    // own): the worker starts with them open, as a process started from a shell does.
    const sigset_t stop_signals = stop_signal_set();
    sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
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
    // "error: rank 2: what": the same `what` from several ranks is one line naming them all.
    const std::string kPrefix = "error: rank ";
    std::vector<std::pair<std::string, std::vector<std::string>>> said;  // what, ranks
    for (const WorkerExit& exit : exits) {
        std::size_t start = 0;
        while (start < exit.errors.size()) {
            std::size_t end = exit.errors.find('\n', start);
            end = end == std::string::npos ? exit.errors.size() : end;
            std::string line = exit.errors.substr(start, end - start);
            start = end + 1;
            if (line.empty()) {
                continue;
            }
            std::string rank;
            const std::size_t colon = line.find(": ", kPrefix.size());
            if (line.rfind(kPrefix, 0) == 0 && colon != std::string::npos &&
                line.find_first_not_of("0123456789", kPrefix.size()) == colon) {
                rank = line.substr(kPrefix.size(), colon - kPrefix.size());
                line = line.substr(colon + 2);
            }
            auto same = std::find_if(said.begin(), said.end(),
                                     [&](const auto& entry) { return entry.first == line; });
            if (same == said.end()) {
                same = said.insert(said.end(), {line, {}});
            }
            if (!rank.empty() &&
                std::find(same->second.begin(), same->second.end(), rank) == same->second.end()) {
                same->second.push_back(rank);
            }
        }
    }
    std::vector<std::string> lines;
    for (const auto& [what, ranks] : said) {
        if (ranks.empty()) {
            lines.push_back(what);
            continue;
        }
        std::string who = ranks.size() == 1 ? "rank " : "ranks ";
        for (std::size_t i = 0; i < ranks.size(); ++i) {
            who += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + ranks[i];
        }
        lines.push_back("error: " + who + ": " + what);
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
    const sigset_t stop_signals = stop_signal_set();
    for (int rank = 0; rank < workers.count; ++rank) {
        std::fflush(nullptr);  // no buffered output is written twice
        sigset_t launcher_mask;
        sigprocmask(SIG_BLOCK, &stop_signals, &launcher_mask);
        const pid_t pid = fork();
        if (pid == 0) {
            exec_worker(workers, rank, port, parent, fileno(error_files[rank].file), launcher_mask);
        }
        sigprocmask(SIG_SETMASK, &launcher_mask, nullptr);
        if (pid < 0) {
            for (int started = 0; started < rank; ++started) {
                kill(exits[started].pid, SIGKILL);
                waitpid(exits[started].pid, nullptr, 0);
            }
            throw Error(std::string("cannot start the worker processes: ") + std::strerror(errno));
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

sigset_t stop_signal_set() {
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    return signals;
}

}  // namespace oomlab
