// `oomlab-cli record [--out FILE] -- python train.py ...`: runs a PyTorch program unchanged,
// with a startup hook that keeps its memory history (a CUDA memory snapshot, written at an
// out-of-memory error or at exit; without CUDA, the profiler's memory events), then says what
// it shows, and what its out-of-memory message means when it printed one.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "record_program.h"
#include "record_tries.h"

namespace oomlab::cli {

namespace fs = std::filesystem;

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
    auto tries = std::make_shared<std::vector<std::string>>();
    record->add_option("--try", *tries,
                       "Then run it again with this allocator setting (PYTORCH_CUDA_ALLOC_CONF, "
                       "e.g. expandable_segments:True), repeatable; \"advice\" for the settings "
                       "the first run's advice names; what each run reached is printed side by "
                       "side with the what-if's prediction");
    auto timeout = std::make_shared<double>(0);
    record
        ->add_option("--timeout", *timeout,
                     "Seconds each try may run before it is stopped (default: twice the first "
                     "run's time, at least 10)")
        ->check(CLI::NonNegativeNumber);
    record->footer(
        "Exits with the program's exit status (its first run's). Only the program's first "
        "Python process records (not the processes it starts).");
    record->callback([command, out, force, tries, timeout, &exit_code] {
        const RecordFiles files = record_files_for(fs::absolute(*out));
        // Before the program runs: one that trains for hours must find somewhere to write, and
        // a file of the user's that is no memory record is replaced only when asked.
        check_output_path(files.snapshot.string(), {"--out", {}, *force, is_memory_snapshot});
        check_output_path(files.trace.string(), {"--out", {}, *force, is_profiler_trace});
        for (const std::string& setting : *tries) {
            settings_to_try({setting}, {});  // a setting PyTorch refuses, before anything runs
        }
        const RecordedOutcome first = record_run({*command, std::nullopt, 0}, files);
        exit_code = first.end.exit_code;
        std::cout << "oomlab-cli record: " << command->front() << " exited with " << exit_code
                  << '\n';
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
        if (!tries->empty()) {
            const double limit = *timeout > 0 ? *timeout : std::max(10.0, 2 * first.end.seconds);
            run_tries(*command, fs::absolute(*out), first, settings_to_try(*tries, first), limit);
        }
    });
}

}  // namespace oomlab::cli
