#include "experiment_impl.h"
#include "training_run.h"

namespace oomlab {

RunOutcome Experiment::train(TrainObserver& observer, const std::atomic<bool>& cancel) {
    train::TrainingRun run(*m_impl, observer, cancel);
    return run.execute();
}

RunOutcome Experiment::train_worst_case(int batch_size) {
    Impl trial_impl_view = *m_impl;  // shares the tensors; only the settings differ
    trial_impl_view.config.train.batch_size = batch_size;
    trial_impl_view.config.train.max_steps = 0;
    trial_impl_view.config.memory.on_oom = OnOom::Stop;
    TrainObserver ignore;
    const std::atomic<bool> never{false};
    train::TrainingRun run(trial_impl_view, ignore, never, /*worst_case_trial=*/true);
    return run.execute();
}

}  // namespace oomlab
