// `oomlab-cli record [--out FILE] -- python train.py ...`: runs a PyTorch program unchanged,
// with a startup hook that keeps its memory history (a CUDA memory snapshot, written at an
// out-of-memory error or at exit; without CUDA, the profiler's memory events), then says what
// it shows, and what its out-of-memory message means when it printed one.
#include <algorithm>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/snapshot_reader/recorded_program.h"
#include "program_group.h"
#include "record_program.h"
#include "record_tries.h"

namespace oomlab::cli {

namespace fs = std::filesystem;

namespace {

// --timeout, else twice the first run's time, at least 10 s.
double try_timeout(double asked, double first_seconds) {
    return asked > 0 ? asked : std::max(10.0, 2 * first_seconds);
}

// The longest --timeout taken: a week of one try.
constexpr double kMostTimeoutSeconds = 7 * 24 * 3600;

// A --try setting PyTorch would refuse, refused before anything is read or run.
void check_settings(const std::vector<std::string>& tries) {
    for (const std::string& setting : tries) {
        settings_to_try({setting}, {});
    }
}

// `record --after RECORD --try CONF...`: the program of an earlier record run again, in the
// folder it ran in, with each setting; the earlier run is the first row.
int run_tries_after(const std::string& record, const std::vector<std::string>& command,
                    const std::vector<std::string>& tries, const RecordedRun& limits, bool force) {
    if (!command.empty()) {
        throw BadInput("record --after: the program is the one " + record +
                           " was recorded from; name no other after --",
                       {"--after"});
    }
    if (tries.empty()) {
        throw BadInput("record --after: name the allocator settings to run it with (--try CONF)",
                       {"--try"});
    }
    check_settings(tries);
    check_input_path(record, "--after");
    const fs::path path = fs::absolute(record);
    const std::optional<RecordedProgram> program = read_recorded_program(path.string());
    if (!program) {
        throw BadInput("--after " + record + ": no " + recorded_program_path(record) +
                           " beside it, so its program is not known; oomlab-cli record writes "
                           "it: record the program with it",
                       {"--after"});
    }
    std::error_code error;
    fs::current_path(program->directory, error);
    if (error) {
        throw BadInput("--after " + record + ": the folder the program ran in, " +
                           program->directory + ", cannot be entered (" + error.message() + ")",
                       {"--after"});
    }
    RecordedOutcome first;
    first.end.exit_code = program->exit_code;
    first.end.seconds = program->seconds;
    first.file = path;
    first.report = read_snapshot_report(path.string());
    const std::vector<std::string> settings = settings_to_try(tries, first);
    std::cout << "oomlab-cli record: " << program->command.front() << " as recorded in "
              << path.string() << " (it exited with " << program->exit_code << "), run again in "
              << program->directory << '\n';
    RecordedRun again = limits;
    again.command = program->command;
    again.timeout_seconds = try_timeout(limits.timeout_seconds, program->seconds);
    run_tries(again, path, first, settings, force);
    return exit_status_unless_stopped(kExitOk);
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
    record->add_flag("--force", *force,
                     "Replace an --out file (or a try's, NAME-try-N) that is no memory record");
    auto command = std::make_shared<std::vector<std::string>>();
    record->add_option("COMMAND", *command, "The program and its arguments, after --");
    auto after = std::make_shared<std::string>();
    record->add_option("--after", *after,
                       "Instead of running the program first, take this record of an earlier "
                       "oomlab-cli record (the program, its folder and how it ended are kept "
                       "beside it as RECORD.program.json) and run only the --try settings");
    auto tries = std::make_shared<std::vector<std::string>>();
    record
        ->add_option("--try", *tries,
                     "Then run it again with this allocator setting (PYTORCH_CUDA_ALLOC_CONF, "
                     "e.g. expandable_segments:True), repeatable; \"advice\" for the settings "
                     "the first run's advice names; what each run reached is printed side by "
                     "side with the what-if's prediction")
        // One setting a --try: as a vector option it took the -- that ends the options, so
        // `--try X -- sh -c ...` read -c as an option of its own and was refused.
        ->allow_extra_args(false);
    auto timeout = std::make_shared<double>(0);
    record
        ->add_option("--timeout", *timeout,
                     "Seconds each try may run before it is stopped (default: twice the first "
                     "run's time, at least 10)")
        ->check(seconds_check("the seconds each try may run (0: twice the first run's time)", 0,
                              kMostTimeoutSeconds, "(a week)"));
    auto kill_after = std::make_shared<double>(-1);
    record
        ->add_option("--kill-after", *kill_after,
                     "Seconds a program has to end (writing its memory) once stopped, past "
                     "--timeout or when oomlab-cli is stopped, before it is killed (default: "
                     "5 past --timeout, 10 when stopped; stopping oomlab-cli twice kills it "
                     "at once)")
        ->check(seconds_check("the seconds a stopped program has to end", 0, kMostTimeoutSeconds,
                              "(a week)"));
    record->footer(
        "Exits with the program's exit status (its first run's). Only the program's first "
        "Python process records (not the processes it starts).");
    record->callback([command, out, force, tries, timeout, kill_after, after, &exit_code] {
        RecordedRun program{*command, std::nullopt, 0, *kill_after};
        if (!after->empty()) {
            program.timeout_seconds = *timeout;
            exit_code = run_tries_after(*after, *command, *tries, program, *force);
            return;
        }
        if (command->empty()) {
            throw BadInput(
                "record: name the program to run after -- (oomlab-cli record -- "
                "python train.py), or an earlier record with --after",
                {"COMMAND"});
        }
        const RecordFiles files = record_files_for(fs::absolute(*out));
        // Before the program runs: one that trains for hours must find somewhere to write, and
        // a file of the user's that is no memory record is replaced only when asked.
        check_record_outputs(files, *force, "--out");
        check_settings(*tries);
        const RecordedOutcome first = record_run(program, files);
        exit_code = first.end.exit_code;
        std::cout << "oomlab-cli record: " << command->front() << " exited with " << exit_code
                  << '\n';
        if (first.file) {
            write_recorded_program(first.file->string(), {*command, fs::current_path().string(),
                                                          first.end.exit_code, first.end.seconds});
        }
        if (first.report) {
            std::cout << "its memory, recorded in " << first.file->string() << ":\n";
            print_snapshot_report(*first.report);
        } else {
            std::cout << (first.file ? "its memory, recorded in " + first.file->string() + ": "
                                     : std::string())
                      << first.no_report << '\n';
        }
        if (first.explanation) {
            std::cout << "\nIts out-of-memory message:\n";
            print_oom_explanation(*first.explanation);
        }
        if (stop_requested() != 0) {
            // Stopped by a signal: it is passed on, and nothing more is run.
            exit_code = exit_status_unless_stopped(exit_code);
            if (!tries->empty()) {
                std::cout << "oomlab-cli record: stopped by " << strsignal(stop_requested())
                          << "; the tries (" << tries->size() << ") are not run\n";
            }
        } else if (!tries->empty()) {
            program.timeout_seconds = try_timeout(*timeout, first.end.seconds);
            run_tries(program, fs::absolute(*out), first, settings_to_try(*tries, first), *force);
            exit_code = exit_status_unless_stopped(exit_code);
        }
    });
}

}  // namespace oomlab::cli
