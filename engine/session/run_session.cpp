#include "oomlab/session/run_session.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/key_relevance.h"
#include "oomlab/estimator/estimator.h"
#include "run_join.h"

namespace oomlab {
namespace {

// Forwards to the caller's listener, writes each batch to the store, and pauses after each
// step as long as the listener asks (ending the pause when the run is stopped).
class RecordingObserver final : public TrainObserver {
public:
    // `store` null: this rank records into another database than rank 0's, which holds its
    // outcome only (see record_ranks_elsewhere).
    RecordingObserver(RunStore* store, std::int64_t run_id, RunListener& listener, int rank,
                      const std::atomic<bool>& cancel)
        : m_store(store), m_run_id(run_id), m_listener(listener), m_rank(rank), m_cancel(cancel) {}

    void on_metrics(const std::vector<MetricRow>& rows) override {
        if (m_store) {
            m_store->append_metrics(m_run_id, rows);
        }
        for (const MetricRow& row : rows) {
            if (row.device_total_bytes) {
                m_device_total_bytes = *row.device_total_bytes;
            }
        }
        m_listener.on_metrics(rows);
    }
    void on_event(const EventRow& event) override {
        if (m_store && m_rank == 0) {
            m_store->add_event(m_run_id, event);
        } else if (m_store && event.kind != event_kind::kEval) {
            // Every rank has the combined evaluation; the rest is this rank's own.
            m_store->add_event(m_run_id, {event.step, event.kind,
                                          "rank " + std::to_string(m_rank) + ": " + event.message});
        }
        m_listener.on_event(event);
    }
    void on_progress(const TrainProgress& progress) override {
        m_listener.on_progress(progress);
        // The pause is asked again at each check: a resume or a Step ends it at once.
        const auto start = std::chrono::steady_clock::now();
        constexpr auto kCheck = std::chrono::milliseconds(20);
        while (!m_cancel.load()) {
            const auto until = start + std::chrono::milliseconds(m_listener.step_pause_ms());
            const auto now = std::chrono::steady_clock::now();
            if (now >= until) {
                break;
            }
            std::this_thread::sleep_for(
                std::min<std::chrono::steady_clock::duration>(kCheck, until - now));
        }
    }
    bool pauses_between_steps() const override { return m_listener.pauses_between_steps(); }

    std::int64_t device_total_bytes() const { return m_device_total_bytes; }

private:
    RunStore* m_store;
    std::int64_t m_run_id;
    RunListener& m_listener;
    int m_rank;
    const std::atomic<bool>& m_cancel;
    std::int64_t m_device_total_bytes = 0;
};

// Rank 0 records how each rank whose database is another one ended (its step rows stay
// unrecorded), and says so in the run's events.
void record_ranks_elsewhere(RunStore& store, std::int64_t run_id,
                            const std::vector<std::string>& reports) {
    for (std::size_t rank = 1; rank < reports.size(); ++rank) {
        const std::optional<RunOutcome> outcome = session::parse_rank_report(reports[rank]);
        if (!outcome) {
            continue;
        }
        store.finish_rank(run_id, static_cast<int>(rank), *outcome);
        store.add_event(run_id, {outcome->steps, std::string(event_kind::kNote),
                                 "rank " + std::to_string(rank) +
                                     " recorded into another database than rank 0's: its "
                                     "outcome is here, its step rows are not"});
    }
}

}  // namespace

std::vector<OomFix> fixes_for(const ExperimentConfig& config, const DataProfile& profile,
                              const std::string& device, std::int64_t device_total_bytes,
                              int world_size, const RunOutcome& outcome) {
    try {
        const OomSituation situation{config,
                                     profile,
                                     run_capacity_bytes(config, device_total_bytes),
                                     device.rfind("cuda", 0) == 0,
                                     world_size,
                                     outcome.fragmentation};
        return suggest_oom_fixes(situation);
    } catch (const std::exception&) {
        return {};  // advice that cannot be worked out must not fail the run's report
    }
}

std::string dataset_name(const ExperimentConfig& config) {
    if (config.dataset.path.empty()) {
        return "fortunes";
    }
    std::filesystem::path path(config.dataset.path);
    if (!path.has_filename()) {
        path = path.parent_path();  // a folder given with a trailing slash
    }
    // A name is one line of valid text, whatever bytes the file's name has.
    return printable_line(path.stem().string());
}

std::string default_run_name(const ExperimentConfig& config) {
    std::string name = dataset_name(config) + " " + get_config_value(config, "model.kind") + " b" +
                       std::to_string(config.train.batch_size);
    if (config.train.accumulation > 1) {
        name += "x" + std::to_string(config.train.accumulation);
    }
    name += " " + get_config_value(config, "memory.precision") + " " +
            get_config_value(config, "train.optimizer");
    if (config.memory.cap_mb > 0) {
        name += " cap" + std::to_string(config.memory.cap_mb) + "M";
    }
    return name;
}

RunResult run_and_record(const ExperimentConfig& config, const std::string& name, RunStore& store,
                         RunListener& listener, const std::atomic<bool>& cancel,
                         const std::optional<Rendezvous>& rendezvous) {
    PrepareOptions options;
    options.progress = [&](const std::string& stage, double fraction) {
        listener.on_prepare(stage, fraction);
    };
    options.rendezvous = rendezvous;
    options.cancel = &cancel;
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(config, options);
    const int rank = experiment->rank();

    RunResult result;
    result.info = experiment->info();
    RunTicket ticket;
    if (rank == 0) {
        NewRun run{name.empty() ? default_run_name(config) : name,
                   config_to_json(config),
                   result.info.device,
                   engine_version(),
                   torch_version(),
                   experiment->world_size(),
                   prediction_json(to_prediction(
                       estimate_memory(config, result.info.profile, experiment->world_size())))};
        ticket.run_id = store.create_run(run);
        ticket.uid = store.run_uid(ticket.run_id);
        ticket.config_json = run.config_json;
        const std::string note(event_kind::kNote);
        store.add_event(ticket.run_id, {0, note, "data: " + result.info.dataset});
        store.add_event(ticket.run_id, {0, note, "vectors: " + result.info.embeddings});
    }
    // The run's rows go where rank 0 records it: the other ranks write them into their own
    // database only when it is the same one (the same run, by identity).
    bool records_here = rank == 0;
    try {
        ticket = experiment->share_run(ticket);
        const std::optional<std::string> refusal =
            rank == 0 ? std::nullopt : session::refusal_to_join(ticket, config);
        if (const auto reason = experiment->first_refusal(refusal)) {
            throw BadInput("the ranks cannot train one run: " + *reason);
        }
        records_here = rank == 0 || session::holds_run(store, ticket);
    } catch (const std::exception& error) {
        if (rank == 0) {
            result.outcome.status = RunStatus::Failed;
            result.outcome.error = error.what();
            store.finish_run(ticket.run_id, result.outcome);
        }
        throw;
    }
    result.run_id = ticket.run_id;
    listener.on_run_created(result.run_id, result.info);
    if (rank == 0) {
        // Said where the run is watched, not only stored: nobody reads an effect into settings
        // that have none.
        const std::vector<std::string> notes = unused_settings(config, experiment->world_size());
        for (const std::string& note : notes) {
            const EventRow event{0, std::string(event_kind::kNote), note};
            store.add_event(result.run_id, event);
            listener.on_event(event);
        }
    }

    RecordingObserver recorder(records_here ? &store : nullptr, result.run_id, listener, rank,
                               cancel);
    try {
        result.outcome = experiment->train(recorder, cancel);
    } catch (const std::exception& error) {
        // The run exists: it must end with a status, never stay "running".
        result.outcome.status = RunStatus::Failed;
        result.outcome.error = error.what();
    }
    if (rank == 0) {
        store.finish_run(result.run_id, result.outcome);
    } else if (records_here) {
        store.finish_rank(result.run_id, rank, result.outcome);
    }
    if (experiment->world_size() > 1 &&
        (rank != 0 || result.outcome.status == RunStatus::Completed)) {
        try {
            // So the summary has every rank, also those that record into another database.
            const std::vector<std::string> reports = experiment->wait_until_all_recorded(
                records_here ? std::string() : session::rank_report(result.outcome));
            record_ranks_elsewhere(store, result.run_id, reports);
        } catch (const std::exception&) {
            // The run is saved; a rank that vanished now only misses from the summary.
        }
    }
    if (result.outcome.status == RunStatus::Oom) {
        result.fixes =
            fixes_for(config, result.info.profile, result.info.device,
                      recorder.device_total_bytes(), experiment->world_size(), result.outcome);
        if (experiment->rank() == 0) {
            // Kept with the run, so they are shown wherever it is, long after.
            store.set_fixes(result.run_id, oom_fixes_json(result.fixes));
        }
    }
    return result;
}

}  // namespace oomlab
