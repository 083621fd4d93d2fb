#include "runs_import.h"

#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_context.h"
#include "oomlab/common/format.h"
#include "oomlab/common/text_table.h"
#include "oomlab/common/utf8.h"
#include "oomlab/lessons/class_predictions.h"
#include "oomlab/store/run_store.h"
#include "oomlab/trackers/mlflow_class.h"
#include "oomlab/trackers/mlflow_export.h"
#include "oomlab/trackers/mlflow_import.h"

namespace oomlab::cli {

void add_runs_import_command(CLI::App& runs, int& exit_code) {
    auto* command = runs.add_subcommand(
        "import", "Runs sent to an MLflow server (a class's, from their machines), read back");
    // One object the options write into, kept alive by the callback.
    struct Options {
        std::string db = default_db_path();
        std::string from;
        trackers::MlflowSource source;
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    command->add_option("--from", options->from, "Where the runs are: mlflow")
        ->required()
        ->check(CLI::IsMember({"mlflow"}));
    command
        ->add_option("--tracking-uri", options->source.tracking_uri,
                     "The tracking server, http://HOST:PORT")
        ->required();
    command
        ->add_option("--experiment", options->source.experiment,
                     "The experiment the runs were sent to")
        ->capture_default_str();
    command->add_option("--db", options->db, "Run database (SQLite; made when missing)")
        ->capture_default_str();
    command->add_flag("--json", options->json, "One JSON object");
    command->callback([options, &exit_code] {
        const trackers::MlflowSource& source = options->source;
        trackers::check_tracking_uri(source.tracking_uri, "--tracking-uri");
        RunStore store = RunStore::open(options->db);
        const trackers::MlflowImport imported = trackers::import_from_mlflow(store, source);
        if (options->json) {
            std::cout << json_line(
                             nlohmann::ordered_json{{"imported", imported.added},
                                                    {"on_server", imported.on_server},
                                                    {"already_here", imported.already_here},
                                                    {"being_sent", imported.being_sent},
                                                    {"not_from_oomlab", imported.not_from_oomlab},
                                                    {"notes", imported.notes}})
                      << '\n';
        } else {
            std::cout << trackers::describe(source, imported) << '\n';
        }
        exit_code = kExitOk;
    });
}

namespace {

nlohmann::ordered_json counts_json(const std::vector<std::pair<std::string, std::size_t>>& counts) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& [answer, count] : counts) {
        list.push_back({{"answer", answer}, {"students", count}});
    }
    return list;
}

nlohmann::ordered_json tallies_json(const std::vector<LessonTally>& tallies) {
    nlohmann::ordered_json lessons = nlohmann::ordered_json::array();
    for (const LessonTally& tally : tallies) {
        nlohmann::ordered_json disagreeing = nlohmann::ordered_json::array();
        for (const StudentPrediction* student : tally.disagreeing()) {
            disagreeing.push_back({{"student", student->student},
                                   {"predicted", answer_text(tally.asks, student->predicted)},
                                   {"measured", answer_text(tally.asks, *student->measured)}});
        }
        lessons.push_back({{"lesson", tally.lesson},
                           {"students", tally.students.size()},
                           {"predicted", counts_json(tally.predicted_counts())},
                           {"measured", counts_json(tally.measured_counts())},
                           {"disagreeing", disagreeing}});
    }
    return lessons;
}

}  // namespace

void add_runs_class_command(CLI::App& runs, int& exit_code) {
    auto* command = runs.add_subcommand(
        "class",
        "A class's runs on an MLflow server as they train: who is running, done or "
        "out of memory, each one's last step, loss and memory");
    auto source = std::make_shared<trackers::MlflowSource>();
    auto json = std::make_shared<bool>(false);
    auto predictions = std::make_shared<bool>(false);
    command
        ->add_option("--tracking-uri", source->tracking_uri,
                     "The tracking server, http://HOST:PORT")
        ->required();
    command->add_option("--experiment", source->experiment, "The experiment the class sends to")
        ->capture_default_str();
    command->add_flag("--json", *json, "One JSON object, with each run's series");
    command->add_flag("--predictions", *predictions,
                      "Also what the class predicted for each lesson against what its runs "
                      "measured (for after the reveal)");
    command->callback([source, json, predictions, &exit_code] {
        trackers::check_tracking_uri(source->tracking_uri, "--tracking-uri");
        const trackers::ClassProgress progress = trackers::read_class_progress(*source);
        const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count();
        const auto last = [](const trackers::StepSeries& series) {
            return series.empty() ? std::optional<trackers::StepValue>() : series.back();
        };
        if (*json) {
            const auto points = [](const trackers::StepSeries& series) {
                nlohmann::ordered_json list = nlohmann::ordered_json::array();
                for (const trackers::StepValue& point : series) {
                    list.push_back({point.step, point.value});
                }
                return list;
            };
            nlohmann::ordered_json listed = nlohmann::ordered_json::array();
            for (const trackers::ClassRun& run : progress.runs) {
                listed.push_back({{"uid", run.uid},
                                  {"student", run.student},
                                  {"name", run.name},
                                  {"status", run_status_name(run.status)},
                                  {"state", trackers::class_state(run, now_ms)},
                                  {"whole", run.whole},
                                  {"last_ms", run.last_ms},
                                  {"loss", points(run.loss)},
                                  {"reserved_MiB", points(run.memory)}});
            }
            nlohmann::ordered_json reply = {{"runs", listed},
                                            {"not_from_oomlab", progress.not_from_oomlab},
                                            {"notes", progress.notes}};
            if (*predictions) {
                reply["lessons"] = tallies_json(class_predictions(progress));
            }
            std::cout << json_line(reply) << '\n';
            exit_code = kExitOk;
            return;
        }
        std::cout << "MLflow " << trackers::uri_without_password(source->tracking_uri) << ": "
                  << trackers::class_counts(progress, now_ms) << '\n';
        TextTable table({"student", "run", "status", "step", "loss", "reserved"}, {3, 4, 5});
        for (const trackers::ClassRun& run : progress.runs) {
            const auto loss = last(run.loss);
            const auto memory = last(run.memory);
            std::ostringstream loss_text;
            if (loss) {
                loss_text << std::fixed << std::setprecision(4) << loss->value;
            }
            const std::int64_t step = std::max(loss ? loss->step : 0, memory ? memory->step : 0);
            table.add_row({printable_line(run.student), printable_line(run.name),
                           trackers::class_state(run, now_ms), std::to_string(step),
                           loss_text.str(),
                           memory ? format_bytes(std::llround(memory->value * kBytesPerMiB)) : ""});
        }
        table.print(std::cout);
        if (*predictions) {
            for (const LessonTally& tally : class_predictions(progress)) {
                std::cout << '\n' << describe(tally);
            }
        }
        for (const std::string& note : progress.notes) {
            std::cout << "note: " << note << '\n';
        }
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
