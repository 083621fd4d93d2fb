// oomlab-cli estimate: the predicted memory of a config, before any run.
#include <iostream>

#include <nlohmann/json.hpp>

#include "calibration.h"
#include "cli_context.h"
#include "fail_over.h"
#include "oomlab/common/files.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/run/run_json.h"

namespace oomlab::cli {

nlohmann::ordered_json estimate_json(const MemoryEstimate& estimate) {
    const auto or_null = [](const std::optional<std::int64_t>& bytes) {
        return bytes ? nlohmann::ordered_json(*bytes) : nlohmann::ordered_json(nullptr);
    };
    return {{"peak_bytes", estimate.peak_bytes},
            {"cap_bytes", estimate.cap_bytes},
            {"fits", estimate.fits},
            {"worst_batch_length", estimate.worst_batch_length},
            {"batches", estimate.assumed == BatchesAssumed::ThisRun ? "this_run" : "epoch_worst"},
            {"epoch_worst_length", estimate.epoch_worst_length},
            {"epoch_worst_peak_bytes", estimate.epoch_worst_peak_bytes},
            {"library_workspaces", estimate.library_workspaces},
            {"host_bytes", estimate.host_bytes},
            {"reserved_bytes", or_null(estimate.reserved_bytes)},
            {"reserved_peak_bytes", or_null(estimate.reserved_peak_bytes)},
            {"caching_allocator", estimate.caching_allocator},
            {"allocator_out_of_memory", estimate.allocator_out_of_memory},
            {"breakdown", breakdown_value(estimate.breakdown)},
            {"by_module", module_memory_value(estimate.by_module)}};
}

void print_estimate(const MemoryEstimate& estimate) {
    std::cout << "predicted peak " << format_bytes(estimate.peak_bytes);
    if (estimate.cap_bytes > 0) {
        std::cout << " of a " << format_bytes(estimate.cap_bytes)
                  << " cap: " << (estimate.fits ? "fits" : "does NOT fit");
    }
    std::cout << " (its longest batch padded to " << estimate.worst_batch_length << " tokens)\n";
    if (estimate.epoch_worst_peak_bytes > estimate.peak_bytes) {
        std::cout << "  the run is too short to draw its data's worst batch ("
                  << estimate.epoch_worst_length
                  << " tokens): with it, as in a longer run, the peak would be "
                  << format_bytes(estimate.epoch_worst_peak_bytes) << '\n';
    }
    if (estimate.reserved_bytes) {
        const std::int64_t cache = *estimate.reserved_bytes - estimate.peak_bytes;
        std::cout << (estimate.caching_allocator ? "  the caching allocator reserves "
                                                 : "  on CUDA the caching allocator would reserve ")
                  << format_bytes(*estimate.reserved_bytes) << " at the peak ("
                  << format_bytes(cache) << " of it cached, free), at most "
                  << format_bytes(*estimate.reserved_peak_bytes) << '\n';
    }
    if (estimate.allocator_out_of_memory) {
        std::cout << "  under the cap the allocator finds no room for a request although the"
                     " tensors alone would fit: the segments it opens, or the pieces its cache is"
                     " left in, do not fit (memory.alloc_conf=expandable_segments:True grows one"
                     " segment instead)\n";
    }
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        std::cout << "  " << kBreakdownKeys[i] << ": "
                  << format_bytes(breakdown_field(estimate.breakdown, i)) << '\n';
    }
    if (estimate.library_workspaces > 0) {
        std::cout << "  (activations include " << format_bytes(estimate.library_workspaces)
                  << " of cuBLAS workspaces, which PyTorch keeps allocated on CUDA)\n";
    }
    if (estimate.breakdown.other > 0) {
        std::cout << "  (other: outside the allocator, the CUDA context and the libraries' code,"
                     " as an H200 holds them; beside the peak, not in it)\n";
    }
    if (estimate.host_bytes > 0) {
        std::cout << "  in host memory, not the device's: " << format_bytes(estimate.host_bytes)
                  << " (the embedding table, its gradient and optimizer state:"
                     " embeddings.placement=cpu)\n";
    }
    RunOutcome predicted;
    predicted.by_module = estimate.by_module;
    print_by_module(predicted);
}

namespace {

// What an earlier `estimate --json`, kept as a memory check's baseline, predicted: the peak, and
// the most the caching allocator reserves (the estimate of a CUDA config).
std::vector<Growth> against_baseline(const std::string& path, const MemoryEstimate& estimate) {
    constexpr std::uint64_t kMostBaselineBytes = 64u << 20;
    const std::string text = read_text_input(path, "--baseline", kMostBaselineBytes);
    const nlohmann::json baseline = parse_json_document(text, path);
    const auto bytes_at = [&](const char* key) -> std::optional<std::int64_t> {
        const auto found = baseline.is_object() ? baseline.find(key) : baseline.end();
        if (!baseline.is_object() || found == baseline.end() || found->is_null()) {
            return std::nullopt;
        }
        if (!found->is_number_integer() || found->get<std::int64_t>() < 0 ||
            found->get<std::int64_t>() > kMostDeviceBytes) {
            throw bad_input_at(path, 0, std::string("\"") + key + "\" is not a size in bytes");
        }
        return found->get<std::int64_t>();
    };
    const std::optional<std::int64_t> peak = bytes_at("peak_bytes");
    if (!peak) {
        throw bad_input_at(path, 0,
                           "no \"peak_bytes\": a baseline is what `oomlab-cli estimate --json` "
                           "wrote for the config before the change");
    }
    std::vector<Growth> growths{{"the predicted peak", *peak, estimate.peak_bytes}};
    const std::optional<std::int64_t> reserved = bytes_at("reserved_peak_bytes");
    if (reserved && estimate.reserved_peak_bytes) {
        growths.push_back({"the most reserved", *reserved, *estimate.reserved_peak_bytes});
    }
    return growths;
}

void print_growths(const std::vector<Growth>& growths, const std::string& baseline) {
    std::cout << "against the baseline " << printable_line(baseline) << ":\n";
    for (const Growth& growth : growths) {
        std::cout << "  " << growth.what << ": " << format_bytes(growth.before) << " -> "
                  << format_bytes(growth.after) << " ("
                  << signed_bytes(growth.after - growth.before) << ")\n";
    }
}

}  // namespace

void add_estimate_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand(
        "estimate", "Predict the memory of a config by category, without training");
    auto options = std::make_shared<ConfigOptions>();
    options->add_to(*command);
    auto json = std::make_shared<bool>(false);
    command->add_flag("--json", *json, "One JSON object");
    auto nproc = std::make_shared<int>(1);
    command
        ->add_option("--nproc", *nproc,
                     "Predict one rank of a data-parallel run of N processes (distributed.shard)")
        ->check(CLI::Range(1, kMostRanks));
    auto db = std::make_shared<std::string>(default_db_path());
    command->add_option("--db", *db, "Run database whose runs give the estimator's record")
        ->capture_default_str();
    auto baseline = std::make_shared<std::string>();
    auto* baseline_option = command->add_option(
        "--baseline", *baseline,
        "An earlier `estimate --json` (the config before a change): this estimate beside it");
    auto fail_over =
        std::make_shared<FailOverOption>(*command, "the predicted peak, or the most reserved,");
    fail_over->option()->needs(baseline_option);
    command->callback([=, &exit_code] {
        const std::optional<GrowthLimit> limit = fail_over->limit();
        const ExperimentConfig config = options->build();
        validate_data_parallel(config, *nproc, config.device.rfind("cuda", 0) == 0);
        const MemoryEstimate estimate = estimate_memory(config, profile_data(config), *nproc);
        const std::vector<Growth> growths =
            *baseline_option ? against_baseline(*baseline, estimate) : std::vector<Growth>{};
        const std::optional<EstimateRecord> record =
            estimate_record(*db, get_config_value(config, "model.kind"));
        if (*json) {
            auto value = estimate_json(estimate);
            value["record"] = record ? record_json(record->all) : nlohmann::ordered_json(nullptr);
            value["record_of_model"] =
                record ? record_json(record->of_model) : nlohmann::ordered_json(nullptr);
            if (*baseline_option) {
                value["baseline"] = fail_over_json(growths, limit);
            }
            std::cout << json_line(value) << '\n';
        } else {
            print_estimate(estimate);
            if (record) {
                print_estimate_record(*record);
            }
            if (*baseline_option) {
                print_growths(growths, *baseline);
            }
        }
        exit_code = limit ? fail_over_verdict(growths, *limit) : kExitOk;
    });
}

}  // namespace oomlab::cli
