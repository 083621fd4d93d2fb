#include "run_join.h"

#include <sstream>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"

namespace oomlab::session {
namespace {

// Values that name where something is on this host, not what is trained.
bool names_a_place(const std::string& key) {
    return key == "dataset.path" || key == "dataset.valid_path" || key == "embeddings.path" ||
           key == "debug.memory_snapshot" || key == "device";
}

// A value as a message shows it: whole when short.
std::string shown(const std::string& value) {
    constexpr std::size_t kMost = 40;
    return value.size() <= kMost ? value : value.substr(0, kMost) + "...";
}

}  // namespace

bool holds_run(const RunStore& store, const RunTicket& ticket) {
    return !ticket.uid.empty() && store.run_with_uid(ticket.uid) == ticket.run_id;
}

std::vector<std::string> settings_that_differ(const ExperimentConfig& mine,
                                              const ExperimentConfig& rank0) {
    std::vector<std::string> differ;
    for (const ConfigKeyInfo& key : config_keys()) {
        const std::string name(key.name);
        if (names_a_place(name)) {
            continue;
        }
        const std::string here = get_config_value(mine, name);
        const std::string there = get_config_value(rank0, name);
        if (here != there) {
            differ.push_back(name + " (rank 0: " + shown(there) + ", here: " + shown(here) + ")");
        }
    }
    return differ;
}

std::optional<std::string> refusal_to_join(const RunTicket& ticket,
                                           const ExperimentConfig& config) {
    ExperimentConfig rank0;
    try {
        rank0 = parse_config_json(ticket.config_json, "rank 0's settings");
    } catch (const std::exception& error) {
        return std::string("cannot read the settings rank 0 trains (") + error.what() +
               "): start every rank with the same OOM Lab";
    }
    const std::vector<std::string> differ = settings_that_differ(config, rank0);
    if (differ.empty()) {
        return std::nullopt;
    }
    std::string message = "its settings differ from rank 0's: ";
    for (std::size_t i = 0; i < differ.size(); ++i) {
        message += (i > 0 ? ", " : "") + differ[i];
    }
    return message + ". Start every rank with the same config and --set options";
}

std::string rank_report(const RunOutcome& outcome) {
    std::ostringstream out;
    out << run_status_name(outcome.status) << ' ' << outcome.steps << ' ' << outcome.peak_bytes;
    for (const ModuleMemory& module : outcome.by_module) {
        out << '\n'
            << module.parameters << ' ' << module.gradients << ' ' << module.optimizer_state << ' '
            << module.activations.value_or(-1) << ' ' << module.module;
    }
    return out.str();
}

}  // namespace oomlab::session

namespace oomlab {

std::string run_ticket_text(const RunTicket& ticket) {
    return std::to_string(ticket.run_id) + "\n" + ticket.uid + "\n" + ticket.config_json;
}

RunTicket parse_run_ticket(const std::string& text) {
    const std::size_t first = text.find('\n');
    const std::size_t second = first == std::string::npos ? first : text.find('\n', first + 1);
    RunTicket ticket;
    const std::string number = text.substr(0, first);
    const bool digits = !number.empty() && number.size() <= 18 &&
                        number.find_first_not_of("0123456789") == std::string::npos;
    if (second == std::string::npos || !digits) {
        throw Error("rank 0 shared a run this rank cannot read: \"" +
                    printable_line(text.substr(0, 80)) + "\"");
    }
    ticket.run_id = std::stoll(number);
    ticket.uid = text.substr(first + 1, second - first - 1);
    ticket.config_json = text.substr(second + 1);
    return ticket;
}

}  // namespace oomlab

namespace oomlab::session {

std::optional<RunOutcome> parse_rank_report(const std::string& report) {
    std::istringstream in(report);
    std::string status;
    RunOutcome outcome;
    if (!(in >> status >> outcome.steps >> outcome.peak_bytes)) {
        return std::nullopt;
    }
    const std::optional<RunStatus> parsed = parse_run_status(status);
    if (!parsed) {
        return std::nullopt;
    }
    outcome.status = *parsed;
    ModuleMemory module;
    std::int64_t activations = 0;
    while (in >> module.parameters >> module.gradients >> module.optimizer_state >> activations &&
           in.get() == ' ' && std::getline(in, module.module)) {
        module.activations = activations >= 0 ? std::optional(activations) : std::nullopt;
        outcome.by_module.push_back(module);
    }
    return outcome;
}

}  // namespace oomlab::session
