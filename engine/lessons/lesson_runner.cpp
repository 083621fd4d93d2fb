// Running a lesson and checking what it claims against what was measured.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "oomlab/common/format.h"
#include "oomlab/common/utf8.h"
#include "oomlab/lessons/lesson.h"
#include "oomlab/run/breakdown.h"

namespace oomlab {
namespace {

const LessonRunResult* result_for(const LessonResult& result, const std::string& label) {
    for (const auto& run : result.runs) {
        if (run.run.label == label) {
            return &run;
        }
    }
    return nullptr;
}

std::optional<std::int64_t> module_bytes(const ModuleMemory& module, std::string_view kind) {
    if (kind == "parameters") {
        return module.parameters;
    }
    if (kind == "gradients") {
        return module.gradients;
    }
    if (kind == "optimizer_state") {
        return module.optimizer_state;
    }
    return module.activations;
}

// "activations of block 1" for "activations@block 1"; other metrics as they are.
// A kind of a module's memory in words ("optimizer state").
std::string kind_words(std::string kind) {
    std::replace(kind.begin(), kind.end(), '_', ' ');
    return kind;
}

// A metric in words, as the lesson's reader says it ("peak memory", "activations and
// temporaries"; "gradients of block 1").
std::string metric_words(const std::string& metric) {
    if (metric == "peak_bytes") {
        return "peak memory";
    }
    if (metric == "mean_step_peak") {
        return "mean step peak";
    }
    if (metric == "mean_device_used") {
        return "mean device memory used";
    }
    if (metric == "mean_reserved") {
        return "mean reserved";
    }
    if (metric == "val_accuracy") {
        return "validation accuracy";
    }
    const auto key = std::find(kBreakdownKeys.begin(), kBreakdownKeys.end(), metric);
    if (key != kBreakdownKeys.end()) {
        return std::string(kBreakdownLabels[key - kBreakdownKeys.begin()]);
    }
    const auto at = metric.find('@');
    return at == std::string::npos
               ? kind_words(metric)
               : kind_words(metric.substr(0, at)) + " of " + metric.substr(at + 1);
}

ClaimCheck check_largest(const LessonClaim& claim, const LessonResult& result) {
    const LessonRunResult* run = result_for(result, claim.label);
    if (!run) {
        return {"claim names a run the lesson does not have: " + claim.label, false};
    }
    const ModuleMemory* largest = nullptr;
    std::int64_t total = 0;
    for (const ModuleMemory& module : run->record.outcome.by_module) {
        const std::int64_t bytes = module_bytes(module, claim.metric).value_or(0);
        total += bytes;
        if (!largest || bytes > module_bytes(*largest, claim.metric).value_or(0)) {
            largest = &module;
        }
    }
    if (!largest || total == 0) {
        return {claim.label + ": no " + kind_words(claim.metric) +
                    " by module measured (claim: " + claim.module + " holds the most)",
                false};
    }
    const std::int64_t held = module_bytes(*largest, claim.metric).value_or(0);
    char text[256];
    std::snprintf(text, sizeof text, "%s: %s holds the most %s, %s of %s (claim: %s)",
                  claim.label.c_str(), largest->module.c_str(), kind_words(claim.metric).c_str(),
                  format_bytes(held).c_str(), format_bytes(total).c_str(), claim.module.c_str());
    return {text, largest->module == claim.module};
}

// "oom, fragmented: 17.4 MiB reserved but free in 10 block(s), the largest 4.0 MiB, none
// large enough for 8.0 MiB", or "oom, not fragmented" where the allocator told nothing.
std::string ending(const RunRecord& record, bool with_free_space) {
    std::string text(run_status_name(record.outcome.status));
    if (!with_free_space) {
        return text;
    }
    const std::optional<Fragmentation>& free_space = record.outcome.fragmentation;
    if (!free_space) {
        return text + ", no free space recorded";
    }
    return text + ", " + (free_space->fragmented() ? "fragmented: " : "not fragmented: ") +
           format_bytes(free_space->reserved_free_bytes) + " free in " +
           std::to_string(free_space->free_blocks) + " block(s), the largest " +
           format_bytes(free_space->largest_free_block) + ", for " +
           format_bytes(free_space->requested_bytes);
}

std::string steps_words(std::int64_t steps) {
    return std::to_string(steps) + (steps == 1 ? " step" : " steps");
}

// What a status claim says of the run's end: "oom", "oom, fragmented", "oom after at least
// 10 steps".
std::string claimed_ending(const LessonClaim& claim) {
    return std::string(run_status_name(claim.status)) +
           (!claim.fragmented   ? ""
            : *claim.fragmented ? ", fragmented"
                                : ", not fragmented") +
           (claim.after_steps ? " after at least " + steps_words(*claim.after_steps) : "");
}

ClaimCheck check_status(const LessonClaim& claim, const LessonResult& result) {
    const LessonRunResult* run = result_for(result, claim.label);
    if (!run) {
        return {claim.label + " did not run", false};
    }
    const RunOutcome& outcome = run->record.outcome;
    const bool fragmented = outcome.fragmentation && outcome.fragmentation->fragmented();
    const bool holds = outcome.status == claim.status &&
                       (!claim.fragmented || *claim.fragmented == fragmented) &&
                       (!claim.after_steps || outcome.steps >= *claim.after_steps);
    return {claim.label + " ends " + ending(run->record, claim.fragmented.has_value()) +
                (claim.after_steps ? " after " + steps_words(outcome.steps) : "") +
                " (claim: " + claimed_ending(claim) + ")",
            holds};
}

ClaimCheck check(const LessonClaim& claim, const LessonResult& result) {
    char text[256];
    if (claim.kind == LessonClaim::Kind::Largest) {
        return check_largest(claim, result);
    }
    if (claim.kind == LessonClaim::Kind::Status) {
        return check_status(claim, result);
    }
    const LessonRunResult* smaller = result_for(result, claim.smaller);
    const LessonRunResult* than = result_for(result, claim.than);
    if (!smaller || !than) {
        return {"claim names a run the lesson does not have: " + claim.smaller + ", " + claim.than,
                false};
    }
    const double a = lesson_metric(claim.metric, smaller->record, smaller->metrics);
    const double b = lesson_metric(claim.metric, than->record, than->metrics);
    const double ratio = b > 0 ? a / b : INFINITY;
    std::snprintf(text, sizeof text, "%s: %s is %.2f x %s (claim: at most %.2f x)",
                  metric_words(claim.metric).c_str(), claim.smaller.c_str(), ratio,
                  claim.than.c_str(), claim.at_most);
    return {text, ratio <= claim.at_most};
}

}  // namespace

bool LessonResult::all_hold() const {
    for (const auto& check : checks) {
        if (!check.holds) {
            return false;
        }
    }
    return true;
}

std::string describe_claim(const LessonClaim& claim) {
    char text[256];
    switch (claim.kind) {
        case LessonClaim::Kind::Status:
            return claim.label + " ends " + claimed_ending(claim);
        case LessonClaim::Kind::Largest:
            return "in " + claim.label + ", " + claim.module + " holds the most " +
                   kind_words(claim.metric);
        case LessonClaim::Kind::Ratio:
            break;
    }
    std::snprintf(text, sizeof text, "%s: %s is at most %.2f x %s",
                  metric_words(claim.metric).c_str(), claim.smaller.c_str(), claim.at_most,
                  claim.than.c_str());
    return text;
}

bool is_lesson_metric(const std::string& metric) {
    const auto at = metric.find('@');
    if (at != std::string::npos) {
        const std::string_view kind(metric.data(), at);
        return at + 1 < metric.size() &&
               std::find(kModuleMemoryKinds.begin(), kModuleMemoryKinds.end(), kind) !=
                   kModuleMemoryKinds.end();
    }
    return metric == "peak_bytes" || metric == "mean_step_peak" || metric == "mean_device_used" ||
           metric == "mean_reserved" || metric == "val_accuracy" ||
           std::find(kBreakdownKeys.begin(), kBreakdownKeys.end(), metric) != kBreakdownKeys.end();
}

double lesson_metric(const std::string& metric, const RunRecord& record,
                     const std::vector<MetricRow>& metrics) {
    if (metric == "peak_bytes") {
        return double(record.outcome.peak_bytes);
    }
    if (metric == "val_accuracy") {
        return record.outcome.val_accuracy.value_or(NAN);  // NAN: the run kept no validation set
    }
    if (const auto at = metric.find('@'); at != std::string::npos) {
        const std::string module = metric.substr(at + 1);
        for (const ModuleMemory& held : record.outcome.by_module) {
            if (held.module == module) {
                const auto bytes = module_bytes(held, std::string_view(metric.data(), at));
                return bytes ? double(*bytes) : NAN;
            }
        }
        return NAN;
    }
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        if (kBreakdownKeys[i] == metric) {
            return double(breakdown_field(record.outcome.breakdown, i));
        }
    }
    double sum = 0;
    int count = 0;
    for (const auto& row : metrics) {
        if (row.phase != phase::kStep) {
            continue;
        }
        if (metric == "mean_step_peak" && row.peak_bytes) {
            sum += double(*row.peak_bytes);
            ++count;
        } else if (metric == "mean_device_used" && row.device_used_bytes) {
            sum += double(*row.device_used_bytes);
            ++count;
        } else if (metric == "mean_reserved" && row.reserved_bytes) {
            sum += double(*row.reserved_bytes);
            ++count;
        }
    }
    return count ? sum / count : NAN;
}

LessonDevice lesson_device(const Lesson& lesson) {
    const ExperimentConfig config = lesson_config(lesson, lesson.runs.front());
    if (config.device != "auto") {
        return {config.on_cuda(), "", ""};
    }
    const std::vector<DeviceInfo> devices = available_devices();
    const auto gpus = std::count_if(devices.begin(), devices.end(), [](const DeviceInfo& device) {
        return device.name.rfind("cuda", 0) == 0;
    });
    if (gpus > 0 && gpus < lesson.processes) {
        // NCCL takes one GPU per process: two processes on one GPU cannot form a group.
        return {false, "cpu",
                "the lesson ran on the CPU: its " + std::to_string(lesson.processes) +
                    " processes need a GPU each under NCCL, and this machine has " +
                    std::to_string(gpus)};
    }
    return {gpus > 0, "", ""};
}

const std::vector<LessonClaim>& lesson_claims(const Lesson& lesson, bool on_cuda) {
    return on_cuda && lesson.on_cuda && lesson.on_cuda->claims ? *lesson.on_cuda->claims
                                                               : lesson.claims;
}

LessonResult run_lesson(const Lesson& lesson, RunStore& store, RunListener& listener,
                        const std::atomic<bool>& cancel) {
    LessonResult result;
    const LessonDevice device = lesson_device(lesson);
    const bool on_cuda = device.cuda && lesson.on_cuda;
    result.device_note = on_cuda ? lesson.on_cuda->why : device.note;
    for (const auto& run : lesson.runs) {
        const std::string name = printable_line(lesson.name + ": " + run.label);
        // Several processes each write their own rows into the store's file.
        ExperimentConfig config = lesson_config(lesson, run, on_cuda);
        if (!device.instead.empty()) {
            config.device = device.instead;
        }
        const std::int64_t run_id =
            lesson.processes > 1 ? run_with_workers_and_record(config, name, store, listener,
                                                               cancel, lesson.processes)
                                       .run_id
                                 : run_and_record(config, name, store, listener, cancel).run_id;
        const std::optional<RunRecord> record = store.find_run(run_id);
        result.runs.push_back({run, *record, store.metrics(run_id)});
        if (record->outcome.status == RunStatus::Cancelled) {
            return result;
        }
    }
    for (const auto& claim : lesson_claims(lesson, on_cuda)) {
        result.checks.push_back(check(claim, result));
    }
    return result;
}

}  // namespace oomlab
