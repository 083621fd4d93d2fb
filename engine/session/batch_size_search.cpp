#include "oomlab/session/batch_size_search.h"

#include <algorithm>

#include "oomlab/common/errors.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/session/experiment.h"

namespace oomlab {
namespace {

// Stop when the answer is known to within this fraction (and one example).
constexpr double kPrecision = 1.0 / 32;

// The largest batch the estimator says fits, up to `most`, by bisection on its prediction.
int predicted_batch(ExperimentConfig config, const DataProfile& profile, std::int64_t cap, int most,
                    int world_size) {
    int fits = 0;
    int fails = most + 1;
    while (fails - fits > 1) {
        const int middle = fits + (fails - fits) / 2;
        config.train.batch_size = middle;
        (estimate_memory(config, profile, world_size, BatchesAssumed::EpochWorst).peak_bytes <= cap
             ? fits
             : fails) = middle;
    }
    return fits;
}

}  // namespace

int search_largest_batch(int predicted, int most, const std::function<bool(int)>& fits_at) {
    int fits = 0;          // largest batch known to fit
    int fails = most + 1;  // smallest batch known not to fit
    int trials = 0;
    // Start at the prediction and step outwards until the answer is bracketed, then bisect.
    int next = std::clamp(predicted, 1, most);
    while (fails - fits > std::max(1, static_cast<int>(fits * kPrecision))) {
        (fits_at(next) ? fits : fails) = next;
        ++trials;
        if (fits == most) {
            break;
        }
        const bool bracketed = fails <= most;
        if (!bracketed) {
            // Near the prediction in small steps; far past it (the estimator was far off) by
            // doubling, so that the answer is bracketed in a few trials either way.
            const double growth = fits < 2 * std::max(1, predicted) ? 1.1 : 2.0;
            next = std::min(most, std::max(fits + 1, static_cast<int>(fits * growth)));
        } else if (fits == 0 && trials == 1) {
            next = std::max(1, static_cast<int>(fails * 0.9));
        } else {
            next = fits + (fails - fits) / 2;
        }
        if (next <= fits || next >= fails) {
            next = fits + (fails - fits) / 2;
        }
        if (next == fits) {
            break;
        }
    }
    return fits;
}

BatchSizeSearch find_batch_size(const ExperimentConfig& config,
                                const std::function<void(const BatchTrial&)>& on_trial,
                                const std::optional<Rendezvous>& rendezvous) {
    if (config.memory.cap_mb <= 0) {
        throw BadInput(
            "memory.cap_mb: find-batch-size needs a memory cap to fit under; set "
            "memory.cap_mb (e.g. --set memory.cap_mb=512)");
    }
    if (config.debug.keep_loss_graph) {
        throw BadInput(
            "debug.keep_loss_graph=true keeps every step's graph, so a run's memory grows with "
            "every step and no short trial stands for it; set debug.keep_loss_graph=false to "
            "search (`estimate` predicts the whole run with it)",
            {"debug.keep_loss_graph"});
    }
    BatchSizeSearch search;
    search.cap_bytes = config.memory.cap_bytes();
    const DataProfile profile = profile_data(config);
    const int world_size = rendezvous ? rendezvous->world_size : 1;
    // Every rank of a run needs a full batch of its own.
    const int most = static_cast<int>(profile.train_examples / world_size);
    search.predicted = predicted_batch(config, profile, search.cap_bytes, most, world_size);
    PrepareOptions options;
    options.rendezvous = rendezvous;
    ExperimentConfig prepared = config;
    prepared.train.batch_size = std::clamp(search.predicted, 1, most);  // one the data allows
    const std::unique_ptr<Experiment> experiment = Experiment::prepare(prepared, options);

    const auto trial = [&](int batch) {
        ExperimentConfig trial_config = config;
        trial_config.train.batch_size = batch;
        BatchTrial result{
            batch, false, 0,
            estimate_memory(trial_config, profile, world_size, BatchesAssumed::EpochWorst)
                .peak_bytes};
        const RunOutcome outcome = experiment->train_worst_case(batch);
        if (outcome.status != RunStatus::Completed && outcome.status != RunStatus::Oom) {
            throw Error("the trial of train.batch_size=" + std::to_string(batch) +
                        " failed: " + outcome.error);
        }
        result.fits = outcome.status == RunStatus::Completed;
        result.peak_bytes = outcome.peak_bytes;
        search.trials.push_back(result);
        if (on_trial) {
            on_trial(result);
        }
        return result.fits;
    };
    search.batch_size = search_largest_batch(search.predicted, most, trial);
    return search;
}

}  // namespace oomlab
