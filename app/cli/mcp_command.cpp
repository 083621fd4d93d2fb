// oomlab-cli mcp: OOM Lab's analyses as tools an AI assistant calls over MCP (mcp_server.h):
// an OOM message explained, a snapshot shown, compared, queried in SQL or replayed under other
// allocator settings, a config's memory estimated, saved runs listed, shown and compared. Each
// answers the same JSON as the command's --json. Files are read only within the folders given with
// --allow, and nothing is run.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "cli_context.h"
#include "mcp_server.h"
#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/run/memory_diff.h"
#include "oomlab/run/run_json.h"
#include "oomlab/snapshot_reader/snapshot_diff.h"
#include "oomlab/snapshot_reader/snapshot_headroom.h"
#include "oomlab/snapshot_reader/snapshot_report.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab::cli {
namespace {

namespace fs = std::filesystem;
using mcp::Argument;
using mcp::Json;
using mcp::Tool;

// The config keys that name files: held to the allowed folders as the tools' paths are.
constexpr const char* kPathKeys[] = {"dataset.path", "dataset.valid_path", "embeddings.path"};

// The folders whose files the tools may read (--allow), each resolved once.
class AllowedFolders {
public:
    explicit AllowedFolders(const std::vector<std::string>& folders) {
        for (const std::string& folder : folders) {
            std::error_code error;
            const fs::path real = fs::canonical(folder, error);
            if (error || !fs::is_directory(real)) {
                throw BadInput("--allow " + folder + ": not a folder");
            }
            m_folders.push_back(real);
        }
    }

    // `path` when it lies within an allowed folder, links resolved; BadInput naming `what`.
    std::string check(const std::string& path, const std::string& what) const {
        if (m_folders.empty()) {
            throw BadInput(what + " " + path +
                           ": this server reads no file (it was started without --allow DIR)");
        }
        std::error_code error;
        const fs::path real = fs::weakly_canonical(fs::absolute(path), error);
        for (const fs::path& folder : m_folders) {
            const auto within =
                std::mismatch(folder.begin(), folder.end(), real.begin(), real.end());
            if (!error && within.first == folder.end()) {
                return real.string();
            }
        }
        std::string folders;
        for (const fs::path& folder : m_folders) {
            folders += (folders.empty() ? "" : ", ") + folder.string();
        }
        throw BadInput(what + " " + path + ": outside the folders this server may read (" +
                       folders + "; oomlab-cli mcp --allow DIR adds one)");
    }

private:
    std::vector<fs::path> m_folders;
};

std::string text_of(const Json& arguments, const char* name) {
    return arguments.value(name, std::string());
}

Json parsed(const std::string& json) {
    return Json::parse(json);
}

std::optional<std::int64_t> device_memory(const Json& arguments) {
    return arguments.contains("device_memory")
               ? std::optional(
                     device_memory_bytes(text_of(arguments, "device_memory"), "device_memory"))
               : std::nullopt;
}

// At most this many rows of a query's answer go back to the assistant: its context is small.
constexpr std::size_t kMostSqlRows = 1000;

// `query` on the snapshot (or snapshot database) at `path`: {"columns", "rows", "truncated"}.
Json snapshot_sql_answer(const std::string& path, const std::string& query) {
    Json answer{{"columns", Json::array()}, {"rows", Json::array()}, {"truncated", false}};
    query_snapshot_or_database(path, query, [&](const std::vector<std::string>& row) {
        if (answer["columns"].empty()) {
            answer["columns"] = row;
        } else if (answer["rows"].size() < kMostSqlRows) {
            answer["rows"].push_back(row);
        } else {
            answer["truncated"] = true;
        }
    });
    return answer;
}

std::vector<Tool> snapshot_tools(const std::shared_ptr<AllowedFolders>& allowed) {
    const Argument path{"path", "string",
                        "A memory snapshot (torch.cuda.memory._dump_snapshot's pickle, or a "
                        "profiler's Chrome trace with profile_memory=True)",
                        true};
    const Argument headroom{"device_memory", "string",
                            "What the device holds, e.g. 80GiB: the headroom against it"};
    return {
        {"snapshot_show",
         "Reserved and allocated memory of a PyTorch program's memory snapshot, the peak found "
         "by replaying its trace, what was alive then by source line and by kind, out-of-memory "
         "events, fragmentation, and what to do, with the figures behind it",
         {path,
          {"at_event", "integer", "Also the state after this many events of each device's trace"},
          headroom},
         [allowed](const Json& arguments) {
             const std::optional<std::int64_t> memory = device_memory(arguments);
             const SnapshotReport report =
                 read_snapshot_report(allowed->check(text_of(arguments, "path"), "path"));
             const std::optional<std::size_t> moment =
                 arguments.contains("at_event")
                     ? std::optional(std::size_t(
                           std::max<std::int64_t>(0, arguments["at_event"].get<std::int64_t>())))
                     : std::nullopt;
             Json out = parsed(snapshot_report_json(report, moment));
             if (memory) {
                 out["headroom"] =
                     parsed(snapshot_headroom_json(snapshot_headroom(report, *memory)));
             }
             return out;
         }},
        {"snapshot_diff",
         "Two snapshots side by side (before and after a change): each device's peak, and what "
         "was alive at it by kind and by source line, the largest changes first",
         {{"before", "string", "The snapshot before the change", true},
          {"after", "string", "The snapshot after it", true}},
         [allowed](const Json& arguments) {
             const SnapshotReport before =
                 read_snapshot_report(allowed->check(text_of(arguments, "before"), "before"));
             const SnapshotReport after =
                 read_snapshot_report(allowed->check(text_of(arguments, "after"), "after"));
             return parsed(snapshot_diff_json(before, after));
         }},
        {"snapshot_sql",
         "One read-only SQL SELECT on a snapshot's tables (devices, events, stacks, "
         "held_from_start, segments, blocks, ooms, stages; views allocations and at_peak, what "
         "was alive at each device's peak), e.g. SELECT line, sum(size) FROM at_peak GROUP BY "
         "line ORDER BY 2 DESC; at most 1000 rows",
         {{"path", "string", "A memory snapshot or trace, or a database snapshot sql --out wrote",
           true},
          {"query", "string", "One SELECT", true}},
         [allowed](const Json& arguments) {
             return snapshot_sql_answer(allowed->check(text_of(arguments, "path"), "path"),
                                        text_of(arguments, "query"));
         }},
        {"snapshot_whatif",
         "A snapshot's trace replayed through a model of PyTorch's CUDA caching allocator: how "
         "closely it follows the real one, and what other PYTORCH_CUDA_ALLOC_CONF settings would "
         "reserve, and whether its out-of-memory errors would still happen",
         {path,
          {"alloc_conf", "string",
           "Settings to replay, as PYTORCH_CUDA_ALLOC_CONF writes them, e.g. "
           "expandable_segments:True (default: the recorded ones)"},
          {"device_memory", "string",
           "What the device lets the allocator reserve, e.g. 80GiB (default: what the program "
           "reserved at most, when it ran out of memory)"}},
         [allowed](const Json& arguments) {
             const std::optional<std::int64_t> memory = device_memory(arguments);
             const SnapshotReport report =
                 read_snapshot_report(allowed->check(text_of(arguments, "path"), "path"));
             const std::optional<std::string> conf =
                 arguments.contains("alloc_conf") ? std::optional(text_of(arguments, "alloc_conf"))
                                                  : std::nullopt;
             return parsed(snapshot_whatif_json(report, snapshot_whatif(report, conf, memory)));
         }},
    };
}

// A setting's value as `--set` takes it: text as it is, numbers and truth values written out.
std::string setting_text(const std::string& key, const Json& value) {
    if (value.is_string()) {
        return value.get<std::string>();
    }
    if (value.is_number() || value.is_boolean()) {
        return value.dump();
    }
    throw BadInput("settings." + key + " is " + value.type_name() +
                   ": give a string, a number or true/false");
}

Tool estimate_tool(const std::shared_ptr<AllowedFolders>& allowed) {
    return {"estimate",
            "Predict the memory of a text classifier's training config by category (parameters, "
            "gradients, optimizer state, activations...) and by module, without training; the "
            "keys are `oomlab-cli config keys`'s (train.batch_size, memory.precision, ...)",
            {{"settings", "object",
              "Config keys and their values, e.g. {\"train.batch_size\": 64, "
              "\"memory.precision\": \"bf16\"}"},
             {"processes", "integer",
              "Predict one rank of a data-parallel run of this many processes (default 1)"}},
            [allowed](const Json& arguments) {
                ConfigOptions options;
                const Json settings = arguments.value("settings", Json::object());
                for (const auto& [key, value] : settings.items()) {
                    const std::string text = setting_text(key, value);
                    const bool names_a_file = std::find(std::begin(kPathKeys), std::end(kPathKeys),
                                                        key) != std::end(kPathKeys);
                    options.overrides.push_back(key + "=" +
                                                (names_a_file && !text.empty()
                                                     ? allowed->check(text, "settings." + key)
                                                     : text));
                }
                const std::int64_t processes = arguments.value("processes", std::int64_t{1});
                if (processes < 1 || processes > kMostRanks) {
                    throw BadInput("processes is " + std::to_string(processes) + ": from 1 to " +
                                   std::to_string(kMostRanks));
                }
                const ExperimentConfig config = options.build();
                validate_data_parallel(config, int(processes), config.device.rfind("cuda", 0) == 0);
                return estimate_json(estimate_memory(config, profile_data(config), int(processes)));
            }};
}

std::vector<Tool> run_tools(const std::shared_ptr<AllowedFolders>& allowed) {
    const Argument database{"database", "string",
                            "An OOM Lab run database (SQLite; the workbench's is "
                            "~/.local/share/oomlab/runs.sqlite)",
                            true};
    const auto store_of = [allowed](const Json& arguments) {
        return open_saved_runs(allowed->check(text_of(arguments, "database"), "database"),
                               "database");
    };
    return {
        {"runs_list",
         "The saved runs of a database, newest first: each one's settings, outcome, peak memory "
         "and breakdown",
         {database, {"limit", "integer", "At most this many runs (default 20)"}},
         [store_of](const Json& arguments) {
             const RunStore store = store_of(arguments);
             const std::int64_t limit = arguments.value("limit", std::int64_t{20});
             Json runs = Json::array();
             for (const RunRecord& run : store.list_runs()) {
                 if (std::int64_t(runs.size()) >= limit) {
                     break;
                 }
                 runs.push_back(parsed(run_summary_json(run)));
             }
             return Json{{"runs", runs}};
         }},
        {"runs_show",
         "One saved run whole: its settings, outcome, memory by category, by module and by rank, "
         "and the estimator's prediction beside what it measured",
         {database, {"run", "integer", "The run's id", true}},
         [store_of](const Json& arguments) {
             const RunStore store = store_of(arguments);
             return parsed(
                 run_summary_json(require_run(store, arguments["run"].get<std::int64_t>())));
         }},
        {"runs_diff",
         "What differs between two saved runs at their peaks, per category and per module",
         {database,
          {"a", "integer", "The first run's id", true},
          {"b", "integer", "The second run's id", true}},
         [store_of](const Json& arguments) {
             const RunStore store = store_of(arguments);
             const RunRecord a = require_run(store, arguments["a"].get<std::int64_t>());
             const RunRecord b = require_run(store, arguments["b"].get<std::int64_t>());
             return parsed(memory_diff_json(diff_memory(a.outcome, b.outcome)));
         }},
    };
}

std::vector<Tool> oomlab_tools(const std::shared_ptr<AllowedFolders>& allowed) {
    std::vector<Tool> tools{
        {"explain_oom",
         "What a PyTorch out-of-memory message means (true lack of memory, fragmentation, memory "
         "held by other processes, one request larger than the device) and what to try first; "
         "every wording of PyTorch 1.x and 2.x, CUDA's, the CPU allocator's and MPS's",
         {{"message", "string", "The error's text, or a whole log that holds it", true}},
         [](const Json& arguments) {
             OomLogReader reader;
             reader.feed(text_of(arguments, "message"));
             return parsed(oom_explanation_json(reader.explain()));
         }}};
    for (std::vector<Tool> more : {snapshot_tools(allowed), run_tools(allowed)}) {
        tools.insert(tools.end(), more.begin(), more.end());
    }
    tools.push_back(estimate_tool(allowed));
    return tools;
}

}  // namespace

void add_mcp_command(CLI::App& app, int& exit_code) {
    auto* command = app.add_subcommand(
        "mcp",
        "Serve OOM Lab's analyses to an AI assistant over the Model Context Protocol (standard "
        "input and output): explain, snapshot show/diff/whatif, estimate, runs list/show/diff");
    auto folders = std::make_shared<std::vector<std::string>>();
    command->add_option("--allow", *folders,
                        "A folder whose files (snapshots, run databases, datasets) the tools may "
                        "read; none without it");
    command->callback([folders, &exit_code] {
        const auto allowed = std::make_shared<AllowedFolders>(*folders);
        mcp::Server server(
            "oomlab", engine_version(),
            "OOM Lab's analyses of GPU memory in PyTorch training: explain an out-of-memory "
            "message; read a memory snapshot (torch.cuda.memory._dump_snapshot) or a profiler "
            "trace, compare two, replay one under other allocator settings; predict a text "
            "classifier config's memory; read saved runs. Figures are bytes. Files are read only "
            "within the folders the server was started with (--allow).",
            oomlab_tools(allowed));
        std::cerr << "oomlab-cli mcp: serving on standard input and output\n";
        server.serve(std::cin, std::cout);
        exit_code = kExitOk;
    });
}

}  // namespace oomlab::cli
