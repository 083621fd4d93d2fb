// A program `oomlab-cli record` runs, kept as a shell keeps a job: in a process group of its own
// that holds the terminal while it runs, stopped whole by an interrupt, a termination or a
// hang-up meant for oomlab-cli, never outliving oomlab-cli (killed with it, even by SIGKILL),
// and what it leaves running when it ends (a daemon in a session of its own included: oomlab-cli
// is their subreaper) stopped with it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace oomlab::cli {

class ProgramGroup {
public:
    // Forks; the child makes its group, takes the terminal where oomlab-cli has it, and calls
    // `exec` (which must not return). Signals for oomlab-cli go to the group from here on.
    // `scratch_folder`, where given, is removed with what is in it if oomlab-cli is killed while
    // the program runs (oomlab-cli removes it itself otherwise).
    explicit ProgramGroup(const std::function<void()>& exec, std::string scratch_folder = {});
    // Gives the terminal back, lets the guardian go and restores the signals' handlers.
    ~ProgramGroup();
    ProgramGroup(const ProgramGroup&) = delete;
    ProgramGroup& operator=(const ProgramGroup&) = delete;

    pid_t pid() const { return m_pid; }
    // Sends `signal` to the whole group.
    void signal(int signal) const;
    // True once the program has ended (reaped; its wait status in `status()`).
    bool ended();
    int status() const { return m_status; }

    // Once it has ended: what it left running (its group, and what was reparented to oomlab-cli
    // from sessions of their own), given `settle_seconds` to leave on its own, then SIGTERM,
    // then SIGKILL after `grace_seconds`. Names each one signalled, e.g. "1234 (sleep)".
    std::vector<std::string> stop_left_running(double settle_seconds, double grace_seconds);

private:
    pid_t m_pid = -1;
    pid_t m_guardian = -1;
    int m_guardian_pipe = -1;
    std::string m_scratch_folder;
    int m_status = 0;
    bool m_ended = false;
    bool m_has_terminal = false;
};

// The signal (SIGINT, SIGTERM or SIGHUP) that asked oomlab-cli to stop while a program ran, or
// 0: every try still to come is left.
int stop_requested();
// Whether a stop signal came a second time: the program is killed without its grace.
bool stop_requested_again();
// The exit status a stop asks for (128 + its signal, as a shell gives it), else `otherwise`.
inline int exit_status_unless_stopped(int otherwise) {
    return stop_requested() != 0 ? 128 + stop_requested() : otherwise;
}

}  // namespace oomlab::cli
