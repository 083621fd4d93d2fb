// `oomlab-cli record [--out FILE] -- python train.py ...`: runs a PyTorch program unchanged,
// with a startup hook that keeps its memory history (a CUDA memory snapshot, written at an
// out-of-memory error or at exit; without CUDA, the profiler's memory events), then says what
// it shows, and what its out-of-memory message means when it printed one.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli_context.h"
#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "record_hook.h"

namespace oomlab::cli {
namespace {

namespace fs = std::filesystem;

struct RecordFiles {
    fs::path snapshot;  // with CUDA
    fs::path trace;     // without
};

RecordFiles files_for(const fs::path& out) {
    fs::path stem = out;
    if (out.extension() == ".json" || out.extension() == ".pickle") {
        stem.replace_extension();
    }
    return {out.extension() == ".json" ? fs::path(stem.string() + ".pickle") : out,
            out.extension() == ".json" ? out : fs::path(stem.string() + ".json")};
}

// A folder of its own holding the hook as sitecustomize.py; removed when done.
class HookFolder {
public:
    HookFolder() {
        std::string pattern = (fs::temp_directory_path() / "oomlab-record-XXXXXX").string();
        if (!mkdtemp(pattern.data())) {
            throw BadInput("record: cannot make a temporary folder: " +
                           std::string(std::strerror(errno)));
        }
        m_path = pattern;
        std::ofstream(m_path / "sitecustomize.py") << kRecordHook;
    }
    ~HookFolder() {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    HookFolder(const HookFolder&) = delete;
    HookFolder& operator=(const HookFolder&) = delete;
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// The program running, for the signal handlers: an interrupt or termination meant for
// oomlab-cli is passed on to it, and oomlab-cli waits for it to end and cleans up after it.
volatile std::sig_atomic_t g_program = 0;

extern "C" void pass_on(int signal_number) {
    if (g_program > 0) {
        kill(pid_t(g_program), signal_number);
    }
}

class PassSignalsOn {
public:
    explicit PassSignalsOn(pid_t program) {
        g_program = program;
        struct sigaction action {};
        action.sa_handler = pass_on;
        sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < kSignals.size(); ++i) {
            sigaction(kSignals[i], &action, &m_before[i]);
        }
    }
    ~PassSignalsOn() {
        for (std::size_t i = 0; i < kSignals.size(); ++i) {
            sigaction(kSignals[i], &m_before[i], nullptr);
        }
        g_program = 0;
    }
    PassSignalsOn(const PassSignalsOn&) = delete;
    PassSignalsOn& operator=(const PassSignalsOn&) = delete;

private:
    static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> m_before{};
};

struct ProgramEnd {
    int exit_code = 0;  // as a shell gives it: 128 + a signal's number
    int signal = 0;     // the signal that ended it, or 0
};

// Runs `command` with the hook, its standard error passed through and read for an
// out-of-memory message.
ProgramEnd run_recorded(const std::vector<std::string>& command, const RecordFiles& files,
                        const HookFolder& hook, OomLogReader& messages) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) {
        throw BadInput("record: cannot make a pipe: " + std::string(std::strerror(errno)));
    }
    const pid_t child = fork();
    if (child < 0) {
        throw BadInput("record: cannot start " + command.front() + ": " + std::strerror(errno));
    }
    if (child == 0) {
        dup2(pipe_ends[1], STDERR_FILENO);
        close(pipe_ends[0]);
        close(pipe_ends[1]);
        const char* path = std::getenv("PYTHONPATH");
        const std::string python_path =
            hook.path().string() + (path && *path ? ":" + std::string(path) : "");
        setenv("PYTHONPATH", python_path.c_str(), 1);
        setenv("OOMLAB_RECORD_HOOK", hook.path().c_str(), 1);
        setenv("OOMLAB_RECORD_SNAPSHOT", files.snapshot.c_str(), 1);
        setenv("OOMLAB_RECORD_TRACE", files.trace.c_str(), 1);
        std::vector<char*> argv;
        for (const std::string& word : command) {
            argv.push_back(const_cast<char*>(word.c_str()));
        }
        argv.push_back(nullptr);
        execvp(argv[0], argv.data());
        const std::string failed =
            "oomlab-cli record: cannot run " + command.front() + ": " + std::strerror(errno) + "\n";
        (void)!write(STDERR_FILENO, failed.data(), failed.size());
        _exit(127);
    }
    close(pipe_ends[1]);
    const PassSignalsOn passed_on(child);
    char piece[1 << 16];
    for (;;) {
        const ssize_t read_bytes = read(pipe_ends[0], piece, sizeof piece);
        if (read_bytes < 0 && errno == EINTR) {
            continue;
        }
        if (read_bytes <= 0) {
            break;
        }
        std::cerr.write(piece, read_bytes).flush();
        messages.feed(std::string_view(piece, std::size_t(read_bytes)));
    }
    close(pipe_ends[0]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        return {128 + WTERMSIG(status), WTERMSIG(status)};
    }
    return {WEXITSTATUS(status), 0};
}

// Why no memory record was written, from how far the hook came and how the program ended.
std::string why_nothing_was_written(const HookFolder& hook, const ProgramEnd& end) {
    std::string reached;
    std::ifstream(hook.path() / "reached") >> reached;
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
    return "the program left without running Python's exit handlers (os._exit, or a crash "
           "of its own)";
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
std::optional<fs::path> written(const RecordFiles& files, fs::file_time_type since) {
    for (const fs::path& path : {files.snapshot, files.trace}) {
        std::error_code error;
        if (fs::exists(path, error) && fs::last_write_time(path, error) >= since) {
            return path;
        }
    }
    return std::nullopt;
}

}  // namespace

void add_record_command(CLI::App& app, int& exit_code) {
    auto* record = app.add_subcommand(
        "record",
        "Run a PyTorch program unchanged (oomlab-cli record -- python train.py ...) with its "
        "memory history kept: a CUDA memory snapshot written at an out-of-memory error or at "
        "exit (without CUDA, the profiler's memory events), then what it shows");
    auto out = std::make_shared<std::string>("memory-snapshot.pickle");
    record->add_option("--out", *out,
                       "The snapshot (default memory-snapshot.pickle); without CUDA the trace "
                       "goes beside it as .json");
    auto force = std::make_shared<bool>(false);
    record->add_flag("--force", *force, "Replace an --out file that is no memory record");
    auto command = std::make_shared<std::vector<std::string>>();
    record->add_option("COMMAND", *command, "The program and its arguments, after --")->required();
    record->footer(
        "Exits with the program's exit status. Only the program's first Python "
        "process records (not the processes it starts).");
    record->callback([command, out, force, &exit_code] {
        const RecordFiles files = files_for(fs::absolute(*out));
        // Before the program runs: one that trains for hours must find somewhere to write, and
        // a file of the user's that is no memory record is replaced only when asked.
        check_output_path(files.snapshot.string(), {"--out", {}, *force, is_memory_snapshot});
        check_output_path(files.trace.string(), {"--out", {}, *force, is_profiler_trace});
        const HookFolder hook;
        // A second's margin: file times may be coarser than the clock.
        const auto started = fs::file_time_type::clock::now() - std::chrono::seconds(1);
        OomLogReader messages;
        const ProgramEnd end = run_recorded(*command, files, hook, messages);
        exit_code = end.exit_code;
        std::cout << "oomlab-cli record: " << command->front() << " exited with " << exit_code
                  << '\n';
        const std::optional<fs::path> file = written(files, started);
        if (!file) {
            std::cout << "no memory record was written (" << files.snapshot.string() << " or "
                      << files.trace.string() << "): " << why_nothing_was_written(hook, end)
                      << '\n';
        } else {
            std::cout << "its memory, recorded in " << file->string() << ":\n";
            try {
                print_snapshot_report(read_snapshot_report(file->string()));
            } catch (const BadInput& error) {
                std::cout << "  it cannot be read: " << error.what() << '\n';
            }
        }
        try {
            const OomExplanation explanation = messages.explain();
            std::cout << "\nIts out-of-memory message:\n";
            print_oom_explanation(explanation);
        } catch (const BadInput&) {
            // No out-of-memory message: nothing more to say.
        }
    });
}

}  // namespace oomlab::cli
