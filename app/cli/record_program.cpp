#include "record_program.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/utf8.h"
#include "oomlab/snapshot_reader/recorded_program.h"
#include "program_group.h"
#include "record_hook.h"

namespace oomlab::cli {

namespace fs = std::filesystem;

RecordFiles record_files_for(const fs::path& out) {
    fs::path stem = out;
    if (out.extension() == ".json" || out.extension() == ".pickle") {
        stem.replace_extension();
    }
    return {out.extension() == ".json" ? fs::path(stem.string() + ".pickle") : out,
            out.extension() == ".json" ? out : fs::path(stem.string() + ".json")};
}

HookFolder::HookFolder() {
    std::string pattern = (fs::temp_directory_path() / "oomlab-record-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        throw BadInput("record: cannot make a temporary folder: " +
                       std::string(std::strerror(errno)));
    }
    m_path = pattern;
    std::ofstream(m_path / "sitecustomize.py") << kRecordHook;
}

HookFolder::~HookFolder() {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
}

namespace {

[[noreturn]] void exec_in_child(const RecordedRun& run, const RecordFiles& files,
                                const HookFolder& hook, int error_pipe[2]) {
    dup2(error_pipe[1], STDERR_FILENO);
    close(error_pipe[0]);
    close(error_pipe[1]);
    const char* path = std::getenv("PYTHONPATH");
    const std::string python_path =
        hook.path().string() + (path && *path ? ":" + std::string(path) : "");
    setenv("PYTHONPATH", python_path.c_str(), 1);
    setenv("OOMLAB_RECORD_HOOK", hook.path().c_str(), 1);
    setenv("OOMLAB_RECORD_SNAPSHOT", files.snapshot.c_str(), 1);
    setenv("OOMLAB_RECORD_TRACE", files.trace.c_str(), 1);
    if (run.alloc_conf) {
        setenv("PYTORCH_CUDA_ALLOC_CONF", run.alloc_conf->c_str(), 1);
    }
    std::vector<char*> argv;
    for (const std::string& word : run.command) {
        argv.push_back(const_cast<char*>(word.c_str()));
    }
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const std::string failed =
        "oomlab-cli record: cannot run " + run.command.front() + ": " + std::strerror(errno) + "\n";
    (void)!write(STDERR_FILENO, failed.data(), failed.size());
    _exit(127);
}

// Passes on what the program wrote to its standard error (and reads it for an out-of-memory
// message); false once every writer has closed it.
bool pass_on_errors(int from, OomLogReader& messages) {
    char piece[1 << 16];
    ssize_t read_bytes = 0;
    while ((read_bytes = read(from, piece, sizeof piece)) < 0 && errno == EINTR) {
    }
    if (read_bytes <= 0) {
        return false;
    }
    std::cerr.write(piece, read_bytes).flush();
    messages.feed(std::string_view(piece, std::size_t(read_bytes)));
    return true;
}

// Waits up to `milliseconds` for `fd` (-1: none, only the wait) to have something to read.
bool readable(int fd, int milliseconds) {
    pollfd ready{fd, POLLIN, 0};
    return poll(&ready, 1, milliseconds) > 0;
}

}  // namespace

ProgramEnd run_recorded(const RecordedRun& run, const RecordFiles& files, const HookFolder& hook,
                        OomLogReader& messages) {
    using Clock = std::chrono::steady_clock;
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) {
        throw BadInput("record: cannot make a pipe: " + std::string(std::strerror(errno)));
    }
    const auto started = Clock::now();
    const auto elapsed = [&] {
        return std::chrono::duration<double>(Clock::now() - started).count();
    };
    ProgramGroup program([&] { exec_in_child(run, files, hook, pipe_ends); }, hook.path().string());
    close(pipe_ends[1]);
    int errors = pipe_ends[0];
    ProgramEnd end;
    // Past its time limit it is stopped with SIGTERM and killed 5 s later if still there.
    // Asked to stop, oomlab-cli has passed the signal on and kills it 10 s later, or at once
    // when asked again: a program writes its memory on the way out, which took over 2 s on a
    // busy core (Slurm waits 30 s between SIGTERM and SIGKILL, torchrun 30 s). --kill-after
    // sets both.
    const double timeout_grace = run.kill_after_seconds >= 0 ? run.kill_after_seconds : 5;
    const double stop_grace = run.kill_after_seconds >= 0 ? run.kill_after_seconds : 10;
    double kill_at = -1;
    while (!program.ended()) {
        if (run.timeout_seconds > 0 && !end.timed_out && elapsed() >= run.timeout_seconds) {
            end.timed_out = true;
            program.signal(SIGTERM);
            kill_at = elapsed() + timeout_grace;
        }
        if (stop_requested() != 0 && kill_at < 0) {
            kill_at = elapsed() + stop_grace;
            std::cerr << "oomlab-cli record: stopping the program; it is killed in " << stop_grace
                      << " s if still running (stop again to kill it now)\n";
        }
        if (stop_requested_again()) {
            kill_at = std::min(kill_at, elapsed());
        }
        if (kill_at >= 0 && elapsed() >= kill_at) {
            program.signal(SIGKILL);
        }
        // Woken often enough to see it end while a process it started keeps the pipe open.
        if (readable(errors, 100) && !pass_on_errors(errors, messages)) {
            errors = -1;
        }
    }
    end.seconds = elapsed();
    // What it wrote before it ended, then what it left running stopped (a daemon that keeps
    // its standard error open once kept oomlab-cli waiting for ever), then the rest.
    while (errors >= 0 && readable(errors, 0) && pass_on_errors(errors, messages)) {
    }
    const bool stopping = stop_requested() != 0;
    end.left_running = program.stop_left_running(stopping ? 0 : 0.5, stopping ? 1 : 2);
    while (errors >= 0 && readable(errors, 1000) && pass_on_errors(errors, messages)) {
    }
    close(pipe_ends[0]);
    if (!end.left_running.empty()) {
        std::cerr << "oomlab-cli record: the program left " << end.left_running.size()
                  << (end.left_running.size() == 1 ? " process" : " processes")
                  << " running when it ended, stopped with it:";
        for (const std::string& process : end.left_running) {
            std::cerr << ' ' << process;
        }
        std::cerr << '\n';
    }
    const int status = program.status();
    if (WIFSIGNALED(status)) {
        end.exit_code = 128 + WTERMSIG(status);
        end.signal = WTERMSIG(status);
    } else {
        end.exit_code = WEXITSTATUS(status);
    }
    return end;
}

// Why no memory record was written, from how far the hook came and how the program ended.
std::string why_nothing_was_written(const HookFolder& hook, const ProgramEnd& end) {
    std::string reached;
    std::getline(std::ifstream(hook.path() / "reached"), reached);
    if (end.signal != 0) {
        return std::string("the program was ended by signal ") + std::to_string(end.signal) + " (" +
               strsignal(end.signal) +
               ") before it wrote one: a record is written at an out-of-memory error or when "
               "the program exits";
    }
    if (reached.empty()) {
        return "no Python that the command started read the startup hook on PYTHONPATH: a "
               "Python run with -I, -E or -S ignores it (run it without them), or the command "
               "ran no Python";
    }
    if (reached == "python") {
        return "its Python has no torch";
    }
    if (reached == "writing") {
        return "the program ended while its memory was being written";
    }
    if (reached.rfind("unwritable ", 0) == 0) {
        return "its memory could not be written (" + printable_line(reached.substr(11)) +
               "): did the program remove or change the folder it goes to?";
    }
    return "the program left without running Python's exit handlers (os._exit, or a crash "
           "of its own)";
}

void check_record_outputs(const RecordFiles& files, bool force, const std::string& option) {
    check_output_path(files.snapshot.string(), {option, {}, force, is_memory_snapshot});
    check_output_path(files.trace.string(), {option, {}, force, is_profiler_trace});
    check_recorded_program_path(files.snapshot.string(), force);
    check_recorded_program_path(files.trace.string(), force);
}

bool is_memory_snapshot(const std::string& path) {
    return file_starts_with(path, "\x80");  // a pickle
}

bool is_profiler_trace(const std::string& path) {
    char first = 0;  // after white space: PyTorch 2.x starts its trace with a line break
    std::ifstream(path) >> first;
    return first == '{';
}

// The file the run wrote, if one was written after `since`.
std::optional<fs::path> written_record(const RecordFiles& files, fs::file_time_type since) {
    for (const fs::path& path : {files.snapshot, files.trace}) {
        std::error_code error;
        if (fs::exists(path, error) && fs::last_write_time(path, error) >= since) {
            return path;
        }
    }
    return std::nullopt;
}

bool RecordedOutcome::out_of_memory() const {
    if (explanation) {
        return true;
    }
    for (const SnapshotDevice& device : report ? report->devices : std::vector<SnapshotDevice>{}) {
        if (!device.ooms.empty()) {
            return true;
        }
    }
    return false;
}

RecordedOutcome record_run(const RecordedRun& run, const RecordFiles& files) {
    const HookFolder hook;
    // A second's margin: file times may be coarser than the clock.
    const auto started = fs::file_time_type::clock::now() - std::chrono::seconds(1);
    OomLogReader messages;
    RecordedOutcome outcome;
    outcome.setting = run.alloc_conf;
    outcome.end = run_recorded(run, files, hook, messages);
    outcome.file = written_record(files, started);
    if (!outcome.file) {
        outcome.no_report = "no memory record was written (" + files.snapshot.string() + " or " +
                            files.trace.string() +
                            "): " + why_nothing_was_written(hook, outcome.end);
    } else {
        try {
            outcome.report = read_snapshot_report(outcome.file->string());
        } catch (const BadInput& error) {
            outcome.no_report = std::string("it cannot be read: ") + error.what();
        }
    }
    try {
        outcome.explanation = messages.explain();
    } catch (const BadInput&) {
        // No out-of-memory message.
    }
    return outcome;
}

}  // namespace oomlab::cli
