#include "record_tries.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/common/text_table.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"
#include "program_group.h"

namespace oomlab::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kAdvised = "advice";
constexpr const char* kConfPrefix = "PYTORCH_CUDA_ALLOC_CONF=";

// The CPU's device of a profiler's trace: the program ran without CUDA.
const SnapshotDevice* cpu_device(const SnapshotReport& report) {
    for (const SnapshotDevice& device : report.devices) {
        if (device.index == kProfilerCpuIndex && !device.changes.empty()) {
            return &device;
        }
    }
    return nullptr;
}

struct Figures {
    std::int64_t peak_allocated = 0;
    std::int64_t reserved = 0;  // most reserved; without CUDA, the GPU estimate under `setting`
};

Figures figures_of(const SnapshotReport& report, const std::string& setting) {
    Figures figures;
    if (const SnapshotDevice* cpu = cpu_device(report)) {
        return {cpu->peak_allocated, gpu_peak_reserved(*cpu, setting).value_or(0)};
    }
    for (const SnapshotDevice& device : report.devices) {
        figures.peak_allocated = std::max(figures.peak_allocated, device.peak_allocated);
        figures.reserved = std::max(figures.reserved, device.peak_reserved);
    }
    return figures;
}

// What the first run's trace, replayed under `setting`, said it would reserve at most (and
// whether it would run out of memory on the device the program had).
std::string predicted(const SnapshotReport& first, const std::string& setting) {
    if (cpu_device(first)) {
        return format_bytes(figures_of(first, setting).reserved);
    }
    std::int64_t reserved = 0;
    bool out_of_memory = false;
    for (const SnapshotWhatIf& result : snapshot_whatif(first, setting, std::nullopt)) {
        reserved = std::max(reserved, result.replayed.peak_reserved);
        // The replay lists every out-of-memory error of the trace, each with whether it
        // still happens under `setting`.
        out_of_memory = out_of_memory ||
                        std::any_of(result.replayed.ooms.begin(), result.replayed.ooms.end(),
                                    [](const allocator::OomOutcome& oom) { return oom.happens; });
    }
    return format_bytes(reserved) + (out_of_memory ? ", out of memory" : "");
}

std::string where_it_stopped(const RecordedOutcome& outcome) {
    if (outcome.end.timed_out) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.1f", outcome.end.seconds);
        return std::string("stopped after ") + seconds + " s (--timeout)";
    }
    if (outcome.report) {
        for (const SnapshotDevice& device : outcome.report->devices) {
            if (!device.ooms.empty()) {
                return "out of memory at event " +
                       std::to_string(event_number(device.ooms.front().event)) + ", asking " +
                       format_bytes(device.ooms.front().requested);
            }
        }
    }
    if (outcome.out_of_memory()) {
        return "out of memory";
    }
    return outcome.end.exit_code == 0 ? "finished"
                                      : "exit status " + std::to_string(outcome.end.exit_code);
}

fs::path try_path(const fs::path& out, std::size_t number) {
    fs::path path = out;
    const std::string extension = out.extension().string();
    path.replace_extension();
    return path.string() + "-try-" + std::to_string(number) + extension;
}

}  // namespace

std::vector<std::string> settings_to_try(const std::vector<std::string>& asked,
                                         const RecordedOutcome& first) {
    std::vector<std::string> settings;
    for (const std::string& setting : asked) {
        if (setting != kAdvised) {
            // PyTorch aborts on a setting with an empty item (",", "a:b,,c:d", a comma last).
            std::string items = setting;
            items.erase(std::remove(items.begin(), items.end(), ' '), items.end());
            if (items.empty() || items.front() == ',' || items.back() == ',' ||
                items.find(",,") != std::string::npos) {
                throw BadInput("--try \"" + setting +
                                   "\": an empty setting between commas (PyTorch stops the "
                                   "program on it); write KEY:VALUE[,KEY:VALUE], e.g. "
                                   "expandable_segments:True",
                               {"--try"});
            }
            try {
                allocator::parse_alloc_conf(setting);
            } catch (const BadInput& error) {
                throw BadInput("--try \"" + setting + "\": " + error.what(), {"--try"});
            }
            settings.push_back(setting);
            continue;
        }
        if (!first.report) {
            continue;
        }
        for (const SnapshotDevice& device : first.report->devices) {
            for (const SnapshotAdvice& item : snapshot_advice(device, first.report->alloc_conf)) {
                if (item.what.rfind(kConfPrefix, 0) == 0) {
                    settings.push_back(item.what.substr(std::string(kConfPrefix).size()));
                }
            }
        }
    }
    std::vector<std::string> unique;
    for (const std::string& setting : settings) {
        if (std::find(unique.begin(), unique.end(), setting) == unique.end()) {
            unique.push_back(setting);
        }
    }
    return unique;
}

void run_tries(const RecordedRun& program, const fs::path& out, const RecordedOutcome& first,
               const std::vector<std::string>& settings, bool force) {
    if (settings.empty()) {
        std::cout << "\nNothing to try: the first run's advice names no allocator setting.\n";
        return;
    }
    for (std::size_t i = 0; i < settings.size(); ++i) {
        check_record_outputs(record_files_for(try_path(out, i + 1)), force, "--try " + settings[i]);
    }
    std::vector<RecordedOutcome> outcomes{first};
    for (std::size_t i = 0; i < settings.size(); ++i) {
        if (stop_requested() != 0) {
            std::cout << "oomlab-cli record: stopped by " << strsignal(stop_requested())
                      << "; the tries still to come (" << settings.size() - i << ") are not run\n";
            break;
        }
        std::cout << "\noomlab-cli record: try " << i + 1 << " of " << settings.size()
                  << ", PYTORCH_CUDA_ALLOC_CONF=" << settings[i] << " (at most "
                  << int(program.timeout_seconds) << " s)\n"
                  << std::flush;
        RecordedRun tried_run = program;
        tried_run.alloc_conf = settings[i];
        outcomes.push_back(record_run(tried_run, record_files_for(try_path(out, i + 1))));
        const RecordedOutcome& tried = outcomes.back();
        std::cout << "oomlab-cli record: exited with " << tried.end.exit_code << "; "
                  << (tried.file ? "its memory in " + tried.file->string() : tried.no_report)
                  << '\n';
    }
    const bool on_cpu = first.report && cpu_device(*first.report);
    std::cout << "\nThe program run again with each allocator setting "
                 "(PYTORCH_CUDA_ALLOC_CONF; nothing else in it was changed):\n";
    TextTable table({"setting", "exit", "out of memory", "peak allocated",
                     on_cpu ? "on a GPU, estimated" : "most reserved", "the what-if predicted",
                     "where it stopped"},
                    {1, 3, 4, 5}, "  ");
    for (const RecordedOutcome& outcome : outcomes) {
        const std::string setting = outcome.setting.value_or("");
        std::vector<std::string> row{outcome.setting ? setting : "as run",
                                     std::to_string(outcome.end.exit_code),
                                     outcome.out_of_memory() ? "yes" : "no"};
        if (outcome.report) {
            const Figures figures = figures_of(*outcome.report, setting);
            row.push_back(format_bytes(figures.peak_allocated));
            row.push_back(format_bytes(figures.reserved));
        } else {
            row.insert(row.end(), {"-", "-"});
        }
        row.push_back(outcome.setting && first.report ? predicted(*first.report, setting) : "-");
        row.push_back(where_it_stopped(outcome));
        table.add_row(std::move(row));
    }
    if (on_cpu) {
        table.add_line(
            "  without CUDA the setting changes nothing the program does; each run's "
            "requests are replayed through the caching allocator's model under it");
    }
    table.print(std::cout);
}

}  // namespace oomlab::cli
