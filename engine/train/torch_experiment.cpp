// The Experiment the front ends hold, and the training engine's entry point.
#include <torch/cuda.h>

#include "oomlab/distributed/refusals.h"
#if OOMLAB_WITH_CUDA
#include "oomlab/measure/cuda_memory.h"
#endif
#include "oomlab/config/snapshot_paths.h"
#include "oomlab/session/training_backend.h"
#include "prepared_experiment.h"
#include "training_run.h"

namespace oomlab::train {
namespace {

class TorchExperiment final : public Experiment {
public:
    explicit TorchExperiment(PreparedExperiment prepared) : m_prepared(std::move(prepared)) {}

    const ExperimentConfig& config() const override { return m_prepared.config; }
    const ExperimentInfo& info() const override { return m_prepared.info; }

    int rank() const override { return m_prepared.group ? m_prepared.group->rank() : 0; }
    int world_size() const override {
        return m_prepared.group ? m_prepared.group->world_size() : 1;
    }
    RunTicket share_run(const RunTicket& ticket) override {
        RunTicket shared = ticket;
        if (m_prepared.group) {
            if (rank() == 0) {
                m_prepared.group->publish("run", run_ticket_text(ticket));
            } else {
                shared = parse_run_ticket(m_prepared.group->fetch("run"));
            }
        }
        std::string& snapshot = m_prepared.config.debug.memory_snapshot;
        snapshot = snapshot_path_for_run(snapshot, shared.run_id);
        return shared;
    }
    std::optional<std::string> first_refusal(const std::optional<std::string>& mine) override {
        if (!m_prepared.group) {
            return mine;
        }
        distributed::ProcessGroup& group = *m_prepared.group;
        const int ranks = world_size();
        if (mine) {
            group.publish("refusal/" + std::to_string(rank()), *mine);
        }
        // The highest of (ranks - rank) over the refusing ranks names the lowest of them.
        torch::Tensor lowest = torch::full({1}, mine ? ranks - rank() : 0, torch::kInt64);
        group.all_reduce_max(lowest, "agreeing to join the run");
        const auto highest = lowest.item<std::int64_t>();
        if (highest == 0) {
            return std::nullopt;
        }
        const int refusing = ranks - static_cast<int>(highest);
        return "rank " + std::to_string(refusing) + ": " +
               (refusing == rank() ? *mine : group.fetch("refusal/" + std::to_string(refusing)));
    }
    std::vector<std::string> wait_until_all_recorded(const std::string& report) override {
        std::vector<std::string> reports(world_size());
        if (!m_prepared.group) {
            return reports;
        }
        if (rank() != 0) {
            m_prepared.group->publish("recorded/" + std::to_string(rank()), report);
            return reports;
        }
        for (int other = 1; other < world_size(); ++other) {
            reports[other] = m_prepared.group->fetch("recorded/" + std::to_string(other));
        }
        return reports;
    }

    RunOutcome train(TrainObserver& observer, const std::atomic<bool>& cancel) override {
        TrainingRun run(m_prepared, observer, cancel);
        return run.execute();
    }

    RunOutcome train_worst_case(int batch_size) override {
        PreparedExperiment trial = m_prepared;  // shares the tensors; only the settings differ
        trial.config.train.batch_size = batch_size;
        trial.config.train.max_steps = 0;
        trial.config.memory.on_oom = OnOom::Stop;
        trial.config.debug.memory_snapshot.clear();  // a trial is not a run: no snapshot
        TrainObserver ignore;
        const std::atomic<bool> never{false};
        TrainingRun run(trial, ignore, never, /*worst_case_trial=*/true);
        return run.execute();
    }

private:
    PreparedExperiment m_prepared;
};

std::unique_ptr<Experiment> prepare(const ExperimentConfig& config, const PrepareOptions& options) {
    return make_torch_experiment(prepare_experiment(config, options));
}

std::vector<DeviceInfo> devices() {
    std::vector<DeviceInfo> result{{"cpu", "host processor (tracked tensor memory)", 0}};
    // device_count() is a size_t in 1.13, a signed count in 2.x.
    const auto count =
        static_cast<std::int64_t>(torch::cuda::is_available() ? torch::cuda::device_count() : 0);
    for (std::int64_t i = 0; i < count; ++i) {
#if OOMLAB_WITH_CUDA
        const int index = static_cast<int>(i);
        result.push_back({"cuda:" + std::to_string(i), memory::cuda::device_name(index),
                          memory::cuda::total_bytes(index)});
#else
        result.push_back({"cuda:" + std::to_string(i), "CUDA device", 0});
#endif
    }
    return result;
}

}  // namespace

std::unique_ptr<Experiment> make_torch_experiment(PreparedExperiment prepared) {
    return std::make_unique<TorchExperiment>(std::move(prepared));
}

}  // namespace oomlab::train

extern "C" const oomlab::session::TrainingBackend* oomlab_training_backend() {
    static const oomlab::session::TrainingBackend backend{
        oomlab::session::kTrainingBackendVersion, &oomlab::train::prepare, &oomlab::train::devices,
        &oomlab::distributed::announce_refusal};
    return &backend;
}
