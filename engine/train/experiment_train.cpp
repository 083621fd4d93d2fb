#include "experiment_impl.h"
#include "training_run.h"

namespace oomlab {

RunOutcome Experiment::train(TrainObserver& observer, const std::atomic<bool>& cancel) {
    train::TrainingRun run(*m_impl, observer, cancel);
    return run.execute();
}

}  // namespace oomlab
