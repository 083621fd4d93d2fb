#include "program_group.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab::cli {

namespace {

constexpr std::array<int, 3> kStopSignals{SIGINT, SIGTERM, SIGHUP};

// For the handlers: the group running, and the signal that asked oomlab-cli to stop.
volatile std::sig_atomic_t g_running_group = 0;
volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_stop_count = 0;

extern "C" void stop_running_group(int number) {
    g_stop_signal = number;
    if (g_stop_count < 2) {
        g_stop_count = g_stop_count + 1;
    }
    if (g_running_group != 0) {
        kill(-pid_t(g_running_group), number);
    }
}

std::array<struct sigaction, kStopSignals.size()> g_handlers_before{};

bool holds_terminal() {
    return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

// Makes `group` the terminal's foreground group; from outside it that raises SIGTTOU unless
// blocked, as shells do.
void give_terminal(pid_t group) {
    sigset_t ttou;
    sigset_t before;
    sigemptyset(&ttou);
    sigaddset(&ttou, SIGTTOU);
    sigprocmask(SIG_BLOCK, &ttou, &before);
    tcsetpgrp(STDIN_FILENO, group);
    sigprocmask(SIG_SETMASK, &before, nullptr);
}

// A process whose only work is to outlive oomlab-cli: it waits on a pipe that only oomlab-cli
// writes to, and an end of file without a word means oomlab-cli was killed, so it kills the
// program's group and removes `scratch_folder` (when not null) with rm. Only async-signal-safe
// calls: oomlab-cli may have threads.
pid_t start_guardian(int guard[2], pid_t group, const char* scratch_folder) {
    const pid_t guardian = fork();
    if (guardian != 0) {
        close(guard[0]);
        return guardian;
    }
    for (const int number : kStopSignals) {
        signal(number, SIG_IGN);
    }
    // Nothing of oomlab-cli's held open: a pipe whose reader waits for its end (the program's
    // standard error, the caller's pipe from oomlab-cli) would wait for this process too.
    const int devnull = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) {
        dup2(devnull, fd);
    }
    dup2(guard[0], 3);
    close_range(4, ~0U, 0);
    char word = 0;
    ssize_t got = 0;
    while ((got = read(3, &word, 1)) < 0 && errno == EINTR) {
    }
    if (got <= 0) {
        kill(-group, SIGKILL);
        if (scratch_folder) {
            execl("/bin/rm", "rm", "-rf", "--", scratch_folder, static_cast<char*>(nullptr));
        }
    }
    _exit(0);
}

struct ProcessEntry {
    pid_t pid = 0;
    std::string name;
    char state = '?';
    pid_t parent = 0;
    pid_t group = 0;
};

// Every process of this machine that this one may see, from /proc/PID/stat.
std::vector<ProcessEntry> processes() {
    std::vector<ProcessEntry> found;
    DIR* proc = opendir("/proc");
    if (!proc) {
        return found;
    }
    while (const dirent* entry = readdir(proc)) {
        char* end = nullptr;
        const long pid = std::strtol(entry->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') {
            continue;
        }
        std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
        std::string line;
        std::getline(stat, line);
        // "PID (NAME) STATE PARENT GROUP ...": the name may hold spaces and parentheses.
        const std::size_t open = line.find('(');
        const std::size_t close = line.rfind(')');
        if (open == std::string::npos || close == std::string::npos || close < open) {
            continue;
        }
        ProcessEntry process;
        process.pid = pid_t(pid);
        process.name = line.substr(open + 1, close - open - 1);
        std::istringstream rest(line.substr(close + 1));
        rest >> process.state >> process.parent >> process.group;
        if (rest) {
            found.push_back(std::move(process));
        }
    }
    closedir(proc);
    return found;
}

}  // namespace

int stop_requested() {
    return g_stop_signal;
}

bool stop_requested_again() {
    return g_stop_count >= 2;
}

ProgramGroup::ProgramGroup(const std::function<void()>& exec, std::string scratch_folder)
    : m_scratch_folder(std::move(scratch_folder)) {
    // What the program leaves behind when it ends, a daemon in a session of its own included,
    // becomes this process's child rather than init's, so it can be found and stopped.
    static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    (void)subreaper;
    m_has_terminal = holds_terminal();
    int guard[2];
    if (pipe2(guard, O_CLOEXEC) != 0) {
        throw BadInput("record: cannot make a pipe: " + std::string(std::strerror(errno)));
    }
    const pid_t recorder = getpid();
    m_pid = fork();
    if (m_pid < 0) {
        close(guard[0]);
        close(guard[1]);
        throw BadInput("record: cannot start the program: " + std::string(std::strerror(errno)));
    }
    if (m_pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // killed with oomlab-cli, even by SIGKILL
        if (getppid() != recorder) {
            _exit(128 + SIGKILL);  // oomlab-cli is already gone
        }
        if (m_has_terminal) {
            give_terminal(getpid());
        }
        exec();
        _exit(127);
    }
    setpgid(m_pid, m_pid);  // as the child does: whichever runs first
    if (m_has_terminal) {
        give_terminal(m_pid);
    }
    m_guardian =
        start_guardian(guard, m_pid, m_scratch_folder.empty() ? nullptr : m_scratch_folder.c_str());
    m_guardian_pipe = guard[1];
    g_running_group = m_pid;
    struct sigaction action {};
    action.sa_handler = stop_running_group;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kStopSignals.size(); ++i) {
        sigaction(kStopSignals[i], &action, &g_handlers_before[i]);
    }
    if (g_stop_signal != 0) {
        signal(g_stop_signal);  // asked to stop while it started
    }
}

ProgramGroup::~ProgramGroup() {
    for (std::size_t i = 0; i < kStopSignals.size(); ++i) {
        sigaction(kStopSignals[i], &g_handlers_before[i], nullptr);
    }
    g_running_group = 0;
    if (!m_ended) {  // left early by an error: nothing of it stays
        kill(-m_pid, SIGKILL);
        while (waitpid(m_pid, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    if (m_has_terminal) {
        give_terminal(getpgrp());
    }
    (void)!write(m_guardian_pipe, "x", 1);  // its work is done
    close(m_guardian_pipe);
    while (waitpid(m_guardian, nullptr, 0) < 0 && errno == EINTR) {
    }
}

void ProgramGroup::signal(int number) const {
    kill(-m_pid, number);
}

bool ProgramGroup::ended() {
    if (!m_ended && waitpid(m_pid, &m_status, WNOHANG) == m_pid) {
        m_ended = true;
        // Holding the terminal, the program had the interrupt (Ctrl+C) for itself.
        if (m_has_terminal && WIFSIGNALED(m_status) && WTERMSIG(m_status) == SIGINT) {
            g_stop_signal = SIGINT;
        }
    }
    return m_ended;
}

std::vector<std::string> ProgramGroup::stop_left_running(double settle_seconds,
                                                         double grace_seconds) {
    using Clock = std::chrono::steady_clock;
    const auto after = [](double seconds) {
        return Clock::now() +
               std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    };
    const auto term_at = after(settle_seconds);
    const auto kill_at = after(settle_seconds + grace_seconds);
    // Past SIGKILL only a process stuck in the kernel stays; it is not waited for long.
    const auto give_up_at = kill_at + std::chrono::seconds(2);
    const pid_t self = getpid();
    std::map<pid_t, std::string> signalled;
    std::set<pid_t> killed;
    for (;;) {
        std::map<pid_t, std::string> running;
        for (const ProcessEntry& process : processes()) {
            const bool child = process.parent == self && process.pid != m_guardian;
            if (!child && process.group != m_pid) {
                continue;
            }
            if (process.state == 'Z') {  // ended; its parent (this one, for a child) reaps it
                if (child) {
                    waitpid(process.pid, nullptr, WNOHANG);
                }
                continue;
            }
            running.emplace(process.pid, std::to_string(process.pid) + " (" +
                                             printable_line(process.name) + ")");
        }
        const auto now = Clock::now();
        if (running.empty() || now >= give_up_at) {
            break;
        }
        for (const auto& [pid, name] : running) {
            if (now < term_at) {
                break;  // it may still leave on its own, as a loader's workers do
            }
            if (signalled.emplace(pid, name).second) {
                kill(pid, SIGTERM);
            } else if (now >= kill_at && killed.insert(pid).second) {
                kill(pid, SIGKILL);
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::vector<std::string> names;
    for (const auto& [pid, name] : signalled) {
        names.push_back(name);
    }
    return names;
}

}  // namespace oomlab::cli
