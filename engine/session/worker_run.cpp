// A run trained by local worker processes, followed from the database as it is written.
#include <algorithm>
#include <chrono>

#include "oomlab/launch/worker_jobs.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/session/run_session.h"

namespace oomlab {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(250);

// The data's shape and the steps the run is planned to take, as rank 0 counts them (none
// when the data cannot be read here); an adapting run may take more.
struct StepPlan {
    DataProfile data;
    bool data_read = false;  // whether `data` is the data's, read here
    std::int64_t per_epoch = 0;
    std::int64_t total = 0;
};

StepPlan plan_steps(const ExperimentConfig& config, int processes) {
    StepPlan plan;
    try {
        plan.data = profile_data(config);
        plan.data_read = true;
        plan.per_epoch = steps_per_epoch(plan.data.train_examples, config.train.batch_size,
                                         config.train.accumulation, processes);
    } catch (const std::exception&) {
        // The workers report the data's problem; the progress only lacks its total.
    }
    plan.total =
        config.train.max_steps > 0 ? config.train.max_steps : plan.per_epoch * config.train.epochs;
    return plan;
}

// Reports what the workers wrote since the last call, as a run of this process reports it:
// rows, events, and progress from rank 0's step rows.
class RunFollower {
public:
    RunFollower(const RunStore& store, RunListener& listener, int processes, StepPlan plan)
        : m_store(store), m_listener(listener), m_processes(processes), m_plan(plan) {}

    // `run_id`: the run rank 0 reported creating (0: not yet).
    void poll(std::int64_t run_id) {
        if (run_id == 0) {
            return;
        }
        try {
            if (m_run_id == 0) {
                start(run_id);
            }
            std::vector<MetricRow> rows = m_store.metrics_after(m_run_id, m_last_metric);
            if (!rows.empty()) {
                m_listener.on_metrics(rows);
                report_progress(rows);
            }
            for (const EventRow& event : m_store.events_after(m_run_id, m_last_event)) {
                m_listener.on_event(event);
            }
        } catch (const std::exception&) {
            // A worker holds the write lock for a moment: read again at the next poll.
        }
    }

private:
    void start(std::int64_t run_id) {
        const std::optional<RunRecord> run = m_store.find_run(run_id);
        if (!run) {
            return;
        }
        m_run_id = run_id;
        // What the workers prepared, as this process reads the same data: the run's header
        // says it as for a run trained here.
        ExperimentInfo info;
        info.device = run->device + ", " + std::to_string(m_processes) + " processes";
        info.train_examples = m_plan.data.train_examples;
        info.valid_examples = m_plan.data.valid_examples;
        info.vocab_size = m_plan.data.vocab_rows;
        info.embedding_dim = m_plan.data.embedding_dim;
        info.steps_per_epoch = m_plan.per_epoch;
        info.total_steps = m_plan.total;
        info.profile = m_plan.data;
        m_listener.on_run_created(m_run_id, info);
    }

    void report_progress(const std::vector<MetricRow>& rows) {
        const MetricRow* last = nullptr;
        for (const MetricRow& row : rows) {
            last = row.rank == 0 && row.phase == "step" ? &row : last;
        }
        if (last == nullptr) {
            return;
        }
        TrainProgress progress;
        progress.step = last->step;
        progress.total_steps = std::max(m_plan.total, last->step);
        progress.epoch =
            m_plan.per_epoch > 0 ? static_cast<int>((last->step - 1) / m_plan.per_epoch + 1) : 1;
        progress.elapsed_seconds = last->wall_ms / 1000.0;
        if (m_plan.total > last->step && last->step > 0) {
            progress.eta_seconds =
                progress.elapsed_seconds / double(last->step) * double(m_plan.total - last->step);
        }
        m_listener.on_progress(progress);
    }

    const RunStore& m_store;
    RunListener& m_listener;
    int m_processes;
    StepPlan m_plan;
    std::int64_t m_run_id = 0;
    std::int64_t m_last_metric = 0;
    std::int64_t m_last_event = 0;
};

}  // namespace

RunResult run_with_workers_and_record(const ExperimentConfig& config, const std::string& name,
                                      RunStore& store, RunListener& listener,
                                      const std::atomic<bool>& cancel, int processes) {
    const StepPlan plan = plan_steps(config, processes);
    RunFollower follower(store, listener, processes, plan);
    auto next_poll = std::chrono::steady_clock::now();
    RunResult result;
    result.run_id = run_with_local_workers(
        config, name.empty() ? default_run_name(config) : name, store.path(), processes, cancel,
        [&](std::int64_t run_id) {
            if (std::chrono::steady_clock::now() >= next_poll) {
                follower.poll(run_id);
                next_poll = std::chrono::steady_clock::now() + kPollInterval;
            }
        },
        [&] { return listener.step_pause_ms(); });
    follower.poll(result.run_id);  // the last rows
    const std::optional<RunRecord> run = store.find_run(result.run_id);
    result.outcome = run->outcome;
    result.info.device = run->device;
    // The fixes are for the data as read for the plan (none when it could not be read here).
    if (result.outcome.status == RunStatus::Oom && plan.data_read) {
        std::int64_t device_total_bytes = 0;
        for (const MetricRow& row : store.metrics(result.run_id)) {
            device_total_bytes = row.device_total_bytes.value_or(device_total_bytes);
        }
        result.fixes = fixes_for(config, plan.data, run->device, device_total_bytes, processes,
                                 result.outcome);
    }
    return result;
}

}  // namespace oomlab
