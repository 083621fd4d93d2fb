#include "oomlab/run/run_session.h"

#include "oomlab/common/version.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"

namespace oomlab {
namespace {

// Forwards to the caller's listener and writes each batch to the store.
class RecordingObserver final : public TrainObserver {
public:
    RecordingObserver(RunStore& store, std::int64_t run_id, RunListener& listener)
        : m_store(store), m_run_id(run_id), m_listener(listener) {}

    void on_metrics(const std::vector<MetricRow>& rows) override {
        m_store.append_metrics(m_run_id, rows);
        m_listener.on_metrics(rows);
    }
    void on_event(const EventRow& event) override {
        m_store.add_event(m_run_id, event);
        m_listener.on_event(event);
    }
    void on_progress(const TrainProgress& progress) override { m_listener.on_progress(progress); }

private:
    RunStore& m_store;
    std::int64_t m_run_id;
    RunListener& m_listener;
};

}  // namespace

std::string default_run_name(const ExperimentConfig& config) {
    std::string name = get_config_value(config, "model.kind") + " b" +
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

RunResult run_and_record(const ExperimentConfig& config, const std::string& name,
                         RunStore& store, RunListener& listener, const std::atomic<bool>& cancel) {
    PrepareOptions options;
    options.progress = [&](const std::string& stage, double fraction) {
        listener.on_prepare(stage, fraction);
    };
    Experiment experiment = Experiment::prepare(config, options);

    RunResult result;
    result.info = experiment.info();
    NewRun run{name.empty() ? default_run_name(config) : name, config_to_json(config),
               result.info.device, engine_version(), torch_version()};
    result.run_id = store.create_run(run);
    store.add_event(result.run_id, {0, "note", "data: " + result.info.dataset});
    store.add_event(result.run_id, {0, "note", "vectors: " + result.info.embeddings});
    listener.on_run_created(result.run_id, result.info);

    RecordingObserver recorder(store, result.run_id, listener);
    try {
        result.outcome = experiment.train(recorder, cancel);
    } catch (const std::exception& error) {
        // The run exists: it must end with a status, never stay "running".
        result.outcome.status = RunStatus::Failed;
        result.outcome.error = error.what();
    }
    store.finish_run(result.run_id, result.outcome);
    return result;
}

}  // namespace oomlab
