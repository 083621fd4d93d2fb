// Where the estimator is known to miss a figure of a run by more than 10% (and 64 KiB), and
// why: one list for every test that holds runs to their predictions (the prediction grid,
// the shard grid, the random configurations). docs/estimator.md names the same, with sizes.
#pragma once

#include <string>

namespace oomlab::test {

// What decides the misses of a run.
struct PredictedRun {
    std::string model;      // model.kind
    std::string precision;  // memory.precision
    std::string shard = "none";
    int layers = 2;
    int accumulation = 1;
};

// The cause of a known miss of `category` in `module` (empty: the whole run's), or empty where
// the figure must hold.
inline std::string known_miss(const PredictedRun& run, const std::string& category,
                              const std::string& module) {
    const std::string last_layer = "lstm layer " + std::to_string(run.layers);
    if (run.model == "bilstm" && run.precision == "fp32" && run.accumulation > 1 &&
        (module == "head" || module == last_layer || (module.empty() && category == "gradients"))) {
        // Seen with bucket padding at 3 ranks: the last layer's gradients 1.5 MiB, predicted 3.
        return "accumulating batches of different lengths, the peak can fall on a step's first "
               "micro-batch, where the last layer's new weight gradient is the only one";
    }
    if (run.model == "bilstm" && run.precision == "bf16" && category != "peak" &&
        category != "parameters" && category != "optimizer_state") {
        // PyTorch 2.x's LibTorch only: its 16-bit matrix products on the CPU make other
        // float32 temporaries than 1.13's, which the estimator counts; the backward's moment
        // is then larger than the update's, where the estimate places the peak.
        return "with autocast, LibTorch 2.x's 16-bit products on the CPU make float32 "
               "temporaries of their own: the peak falls in backward, not at the update";
    }
    if (category != "activations") {
        return {};  // parameters, gradients and optimizer state hold everywhere else
    }
    if (run.model == "transformer" && run.precision == "bf16") {
        return "with autocast the transformer's backward peaks at another op than in float32";
    }
    return {};
}

}  // namespace oomlab::test
