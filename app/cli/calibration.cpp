// oomlab-cli runs calibration, and the record `estimate` prints.
#include "calibration.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli_context.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/text_table.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/store/run_store.h"

namespace oomlab::cli {
namespace {

std::string percent(double fraction) {
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f%%", 100 * fraction);
    return text;
}

}  // namespace

std::optional<EstimateRecord> estimate_record(const std::string& db, const std::string& model) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(db, error) ||
        std::filesystem::file_size(db, error) == 0) {
        return std::nullopt;  // nothing saved yet: an estimate never makes a store
    }
    const PredictionRecords records = prediction_records(RunStore::open(db).list_runs(), 10);
    return EstimateRecord{records.all, records.of_model(model), model};
}

nlohmann::ordered_json case_json(const CalibrationCase& one) {
    return {{"run_id", one.run_id},
            {"name", one.name},
            {"model", one.model},
            {"predicted_peak_bytes", one.predicted},
            {"measured_peak_bytes", one.measured},
            {"off", one.off()},
            {"cause", one.cause}};
}

nlohmann::ordered_json record_json(const PredictionRecord& record) {
    nlohmann::ordered_json worst = nlohmann::ordered_json::array();
    for (const CalibrationCase& one : record.worst) {
        worst.push_back(case_json(one));
    }
    return {{"runs", record.runs},
            {"under", record.under},
            {"worst_under", record.worst_under},
            {"outside_tolerance", record.outside_tolerance},
            {"summary", describe(record)},
            {"worst", worst}};
}

void print_estimate_record(const EstimateRecord& record) {
    std::cout << "record: " << describe(record.all);
    if (!record.model.empty() && record.of_model.runs > 0) {
        std::cout << "; of the " << record.model << " runs: " << describe(record.of_model);
    }
    std::cout << '\n';
    for (const CalibrationCase& one : record.of_model.worst) {
        if (!one.under() || !prediction_disagrees(one.predicted, one.measured)) {
            continue;
        }
        std::cout << "  wrong here before: run " << one.run_id << " measured "
                  << format_bytes(one.measured) << " against " << format_bytes(one.predicted)
                  << " predicted (" << percent(one.off()) << ")"
                  << (one.cause.empty() ? "" : ": " + one.cause) << '\n';
    }
}

void add_calibration_command(CLI::App& runs, int& exit_code) {
    auto* command = runs.add_subcommand(
        "calibration", "How often the estimator was under the measured peak, the worst cases");
    auto db = std::make_shared<std::string>(default_db_path());
    auto json = std::make_shared<bool>(false);
    auto model = std::make_shared<std::string>();
    auto count = std::make_shared<std::size_t>(10);
    command->add_option("--db", *db, "Run database (SQLite)")->capture_default_str();
    command->add_flag("--json", *json, "One JSON object");
    command->add_option("--model", *model, "Only runs of this model.kind (bag, bilstm, ...)");
    command->add_option("--worst", *count, "How many of the worst cases to list")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    command->callback([=, &exit_code] {
        const PredictionRecord record =
            prediction_record(open_saved_runs(*db).list_runs(), *count, *model);
        if (*json) {
            std::cout << json_line(record_json(record)) << '\n';
            exit_code = kExitOk;
            return;
        }
        std::cout << describe(record) << "; " << record.outside_tolerance
                  << " off by more than 10% (and 64 KiB)\n";
        if (!record.worst.empty()) {
            std::cout << "worst cases:\n";
        }
        TextTable table({"", "", "", "", "", "", "", ""}, {3, 5, 6}, "  ");
        for (const CalibrationCase& one : record.worst) {
            table.add_row({"run " + std::to_string(one.run_id), one.model, "predicted",
                           format_bytes(one.predicted), "measured", format_bytes(one.measured),
                           percent(one.off()), one.name});
            if (!one.cause.empty()) {
                table.add_line("      " + one.cause);
            }
        }
        table.print(std::cout);
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
