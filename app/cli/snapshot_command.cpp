// `oomlab-cli snapshot show FILE`: what a CUDA memory snapshot of any PyTorch program says;
// `snapshot diff BEFORE AFTER`: what changed between two (before and after a fix);
// `snapshot whatif FILE --alloc-conf CONF`: its trace replayed through the allocator's model.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli_context.h"
#include "fail_over.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/text_table.h"
#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_diff.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_headroom.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab::cli {
namespace {

void print_groups(const std::string& title, const std::vector<SnapshotLine>& groups) {
    if (!groups.empty()) {
        std::cout << "  " << title << ":\n";
    }
    for (const SnapshotLine& group : groups) {
        char figure[32];
        std::snprintf(figure, sizeof figure, "%12s", format_bytes(line_bytes_held(group)).c_str());
        std::cout << "    " << figure << "  " << group.where;
        if (group.blocks > 0) {
            std::cout << " (" << line_blocks_words(group) << ")";
        }
        std::cout << '\n';
    }
}

// The peak inside each stage the program annotated (the ten highest), and those running at
// the device's peak.
void print_stages(const SnapshotDevice& d) {
    if (!d.stages_problem.empty()) {
        std::cout << "  stages: " << d.stages_problem << '\n';
    }
    if (d.stages.empty()) {
        return;
    }
    std::cout << "  peak allocated by stage (the program's annotations):\n";
    const std::vector<SnapshotAnnotatedStage> stages = stages_by_peak(d);
    for (std::size_t i = 0; i < stages.size() && i < 10; ++i) {
        char figure[32];
        std::snprintf(figure, sizeof figure, "%12s",
                      format_bytes(stages[i].peak_allocated).c_str());
        std::cout << "    " << figure << "  " << stages[i].name << " (ran " << stages[i].spans
                  << (stages[i].spans == 1 ? " time" : " times")
                  << (stages[i].events == 0
                          ? ", allocating nothing: what was allocated when it ran, after event "
                          : "; the most after event ")
                  << stages[i].peak_event << ")\n";
    }
    if (stages.size() > 10) {
        std::cout << "    ... " << stages.size() - 10 << " more (--json lists them)\n";
    }
    const std::vector<std::string> running = stages_at(d, d.peak_event);
    std::cout << "  at the peak allocated, running: ";
    for (std::size_t i = 0; i < running.size(); ++i) {
        std::cout << (i ? ", " : "") << running[i];
    }
    std::cout << (running.empty() ? "no annotated stage" : "") << '\n';
}

}  // namespace

void print_snapshot_report(const SnapshotReport& report) {
    if (report.devices.empty()) {
        std::cout << report.source << ": " << snapshot_empty_words(report) << '\n';
    }
    // Beside a device that held memory, one that held a few bytes is told in a line.
    const bool one_held_memory =
        std::any_of(report.devices.begin(), report.devices.end(),
                    [](const SnapshotDevice& d) { return !holds_little(d); });
    for (const SnapshotDevice& d : report.devices) {
        if (one_held_memory && holds_little(d)) {
            std::cout << snapshot_device_name(d.index) << ": " << format_bytes(d.peak_allocated)
                      << " allocated at most over " << d.events
                      << " events, nothing reserved: too little to change anything\n";
            continue;
        }
        std::cout << snapshot_device_name(d.index) << ": " << snapshot_end_words(d) << '\n'
                  << "  " << snapshot_peak_words(d) << '\n';
        if (const std::string free = snapshot_free_words(d); !free.empty()) {
            std::cout << "  " << free << '\n';
        }
        if (const std::optional<GpuEstimate> gpu = gpu_estimate(d)) {
            std::cout << "  on a GPU, an estimate: these requests would hold "
                      << format_bytes(gpu->gpu_peak_allocated)
                      << " at most and PyTorch's caching allocator would reserve "
                      << format_bytes(gpu->peak_reserved) << " (" << gpu->segments_at_peak
                      << " segments; " << format_bytes(gpu->peak_reserved_expandable)
                      << " with expandable_segments:True); " << kGpuEstimateLeavesOut << '\n';
        }
        for (const std::string& note : snapshot_end_notes(d)) {
            std::cout << "  " << note << '\n';
        }
        for (const std::string& problem : d.trace_problems) {
            std::cout << "  the trace does not add up: " << problem << '\n';
        }
        for (const SnapshotOom& oom : d.ooms) {
            std::cout << "  out of memory at event " << event_number(oom.event) << ": asked "
                      << format_bytes(oom.requested) << " with " << format_bytes(oom.device_free)
                      << " free on the device and " << format_bytes(oom.allocated)
                      << " allocated\n";
            if (const std::string limit = process_limit_note(oom); !limit.empty()) {
                std::cout << "    " << limit << '\n';
            }
        }
        const std::string alive = std::string("alive at ") + peak_moment(d);
        print_groups(alive + ", by what it was for", d.at_peak_by_kind);
        print_groups(alive + ", by source line", d.at_peak);
        print_groups(alive + ", by the metadata the program set", d.at_peak_by_metadata);
        print_stages(d);
        const std::vector<SnapshotAdvice> advice = snapshot_advice(d, report.alloc_conf);
        if (!advice.empty()) {
            std::cout << "  what to do:\n";
        }
        for (const SnapshotAdvice& item : advice) {
            std::cout << "    - " << item.what << ": " << item.why << '\n';
        }
    }
    if (!report.alloc_conf_problem.empty()) {
        std::cout << "note: " << report.alloc_conf_problem << '\n';
    }
    if (!report.experiment_problem.empty()) {
        std::cout << "note: " << report.experiment_problem << '\n';
    }
    if (!report.experiment_json.empty()) {
        std::cout << "recorded by an OOM Lab run: its settings are \"experiment\" in --json (a "
                     "config for --config), and the workbench's snapshot window loads them\n";
    }
}

namespace {

void print_moments(const SnapshotReport& report, std::size_t event) {
    for (const SnapshotDevice& d : report.devices) {
        const SnapshotMoment moment = snapshot_moment(d, event);
        std::cout << snapshot_device_name(d.index) << " after event " << moment.event << " of "
                  << d.events << ": " << format_bytes(moment.allocated) << " allocated, "
                  << format_bytes(moment.reserved) << " reserved\n";
        print_groups("alive then, by what it was for", moment.by_kind);
        print_groups("alive then, by source line", moment.by_line);
        print_groups("alive then, by the metadata the program set", moment.by_metadata);
    }
}

void print_changes(const std::string& title, const std::vector<SnapshotChange>& changes) {
    if (!changes.empty()) {
        std::cout << "  " << title << ":\n";
    }
    constexpr std::size_t kShown = 10;
    TextTable table({"", "", "", "", ""}, {0, 3}, "    ");
    for (std::size_t i = 0; i < changes.size() && i < kShown; ++i) {
        const SnapshotChange& change = changes[i];
        table.add_row({format_bytes(change.before), "->", format_bytes(change.after),
                       signed_bytes(change.change()), change.where});
    }
    table.print(std::cout);
}

void print_diff(const SnapshotReport& before, const SnapshotReport& after) {
    for (const SnapshotDeviceDiff& diff : diff_snapshots(before, after)) {
        std::cout << snapshot_device_name(diff.index) << ": peak " << format_bytes(diff.peak_before)
                  << " -> " << format_bytes(diff.peak_after) << " allocated ("
                  << signed_bytes(diff.peak_after - diff.peak_before) << "), "
                  << format_bytes(diff.reserved_before) << " -> "
                  << format_bytes(diff.reserved_after) << " reserved at " << diff.moment << "\n";
        const std::string alive = "alive at " + diff.moment;
        print_changes(alive + ", by what it was for", diff.kinds);
        print_changes(alive + ", by source line (the largest changes)", diff.lines);
    }
}

}  // namespace

void add_snapshot_command(CLI::App& app, int& exit_code) {
    auto* snapshot = app.add_subcommand(
        "snapshot",
        "Read a CUDA memory snapshot of any PyTorch program (its pickle), or the Chrome trace "
        "of PyTorch's profiler with profile_memory=True");
    snapshot->require_subcommand(1);
    auto* show = snapshot->add_subcommand(
        "show",
        "Reserved and allocated, the peak found by replaying the trace, what was alive then by "
        "source line, out-of-memory events, fragmentation, and what to do");
    auto file = std::make_shared<std::string>();
    show->add_option("FILE", *file,
                     "The snapshot: torch.cuda.memory._dump_snapshot(\"x.pickle\"), a run's "
                     "debug.memory_snapshot, or a profiler's trace: "
                     "torch.profiler.profile(profile_memory=True, with_stack=True) then "
                     "export_chrome_trace(\"trace.json\")")
        ->required();
    auto* json = show->add_flag("--json", "One JSON object");
    auto at = std::make_shared<std::int64_t>(0);
    auto* at_option =
        show->add_option("--at", *at,
                         "Also what was allocated, reserved and alive after this "
                         "many events of each device's trace (the peak's is shown "
                         "as 'after event N')")
            ->check(CLI::Validator(
                [](const std::string& text) -> std::string {
                    const bool digits = !text.empty() && text.size() <= 18 &&
                                        text.find_first_not_of("0123456789") == std::string::npos;
                    return digits
                               ? std::string()
                               : "a number of events, 0 or more, not '" + text.substr(0, 40) + "'";
                },
                "EVENTS"));
    auto show_memory = std::make_shared<std::string>();
    auto* show_memory_option = show->add_option(
        "--device-memory", *show_memory,
        "Also how close the program came to running out of memory on a device of this size, "
        "e.g. 80GiB: as it ran, and replayed with expandable segments");
    show->callback([=, &exit_code] {
        // Before the file is read: a wrong size is told at once, not after a long read.
        const bool has_memory = bool(*show_memory_option);
        const std::int64_t memory =
            has_memory ? device_memory_bytes(*show_memory, "--device-memory") : 0;
        const SnapshotReport report = read_snapshot_report(*file);
        const std::optional<std::size_t> moment =
            *at_option ? std::optional(std::size_t(*at)) : std::nullopt;
        const std::vector<SnapshotHeadroom> headroom =
            has_memory ? snapshot_headroom(report, memory) : std::vector<SnapshotHeadroom>{};
        if (*json) {
            nlohmann::ordered_json out =
                nlohmann::ordered_json::parse(snapshot_report_json(report, moment));
            if (has_memory) {
                out["headroom"] = nlohmann::ordered_json::parse(snapshot_headroom_json(headroom));
            }
            std::cout << out.dump() << '\n';
        } else {
            print_snapshot_report(report);
            if (moment) {
                print_moments(report, *moment);
            }
            if (has_memory) {
                std::cout << "headroom: " << snapshot_headroom_text(headroom);
            }
        }
        exit_code = kExitOk;
    });

    auto* diff = snapshot->add_subcommand(
        "diff",
        "Two snapshots side by side (before and after a fix): the peaks, and what was "
        "alive at each by kind and by source line, the largest changes first");
    auto files = std::make_shared<std::vector<std::string>>();
    diff->add_option("BEFORE AFTER", *files, "The two snapshots")->required()->expected(2);
    auto* diff_json = diff->add_flag("--json", "One JSON object");
    auto fail_over = std::make_shared<FailOverOption>(
        *diff, "a device's peak allocated or most reserved memory");
    diff->callback([=, &exit_code] {
        // Before the files are read: a wrong limit is told at once, not after a long read.
        const std::optional<GrowthLimit> limit = fail_over->limit();
        const SnapshotReport before = read_snapshot_report(files->at(0));
        const SnapshotReport after = read_snapshot_report(files->at(1));
        std::vector<Growth> growths;
        for (const SnapshotDeviceDiff& device : diff_snapshots(before, after)) {
            const std::string name = snapshot_device_name(device.index);
            growths.push_back({name + ": peak allocated", device.peak_before, device.peak_after});
            growths.push_back({name + ": most reserved", device.most_reserved_before,
                               device.most_reserved_after});
        }
        if (*diff_json) {
            nlohmann::ordered_json out =
                nlohmann::ordered_json::parse(snapshot_diff_json(before, after));
            if (limit) {
                out["fail_over"] = fail_over_json(growths, *limit);
            }
            std::cout << json_line(out) << '\n';
        } else {
            print_diff(before, after);
        }
        exit_code = limit ? fail_over_verdict(growths, *limit) : kExitOk;
    });

    add_snapshot_sql_command(*snapshot, exit_code);

    auto* whatif = snapshot->add_subcommand(
        "whatif",
        "Replay the snapshot's trace through a model of PyTorch's caching allocator: how "
        "closely it follows the real one, and what other PYTORCH_CUDA_ALLOC_CONF settings "
        "would have reserved, and whether its out-of-memory errors would still happen");
    auto whatif_file = std::make_shared<std::string>();
    whatif->add_option("FILE", *whatif_file, "The snapshot (a pickle with a trace)")->required();
    auto conf = std::make_shared<std::string>();
    auto* conf_option = whatif->add_option(
        "--alloc-conf", *conf,
        "Settings to replay, as PYTORCH_CUDA_ALLOC_CONF writes them, e.g. "
        "expandable_segments:True,max_split_size_mb:128 (default: the recorded ones)");
    auto device_memory = std::make_shared<std::string>();
    auto* memory_option = whatif->add_option(
        "--device-memory", *device_memory,
        "What the device lets the allocator reserve, e.g. 80GiB (default: what the program "
        "reserved at most, when it ran out of memory)");
    auto* whatif_json = whatif->add_flag("--json", "One JSON object");
    whatif->callback([=, &exit_code] {
        // Before the file is read: a wrong size is told at once, not after a long read.
        const std::optional<std::int64_t> memory =
            *memory_option ? std::optional(device_memory_bytes(*device_memory, "--device-memory"))
                           : std::nullopt;
        const SnapshotReport report = read_snapshot_report(*whatif_file);
        const auto results =
            snapshot_whatif(report, *conf_option ? std::optional(*conf) : std::nullopt, memory);
        std::cout << (*whatif_json ? snapshot_whatif_json(report, results) + "\n"
                                   : snapshot_whatif_text(report, results));
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
