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
        // LibTorch 1.13 shows the first, 2.x both.
        return "accumulating, the head's gradient for the LSTM is still alive at the peak, and "
               "the last layer's new weight gradient is being summed into the accumulated one";
    }
    // ZeRO-3 sums its gradients as ZeRO-2 does: the same moments, the same misses.
    const bool zero2 = run.shard == "gradients" || run.shard == "parameters";
    if (run.model == "bilstm" && zero2 && category == "gradients" && module == last_layer) {
        // PyTorch 2.x's LibTorch only: the last layer's weight gradient exists at that moment,
        // before it moves into its bucket (258 KiB here).
        return "the last layer's new weight gradient, not yet in its bucket";
    }
    if (run.model == "bilstm" && zero2 && run.layers == 1 && category != "parameters" &&
        category != "optimizer_state") {
        // One layer: its backward, freeing its saved tensors as it goes, stays below its
        // forward (the looked-up rows still alive), so the run peaks in forward, before any
        // gradient, where the estimator expects the backward.
        return "the LSTM frees its saved tensors during its backward: one layer peaks in forward";
    }
    if (run.model == "bilstm" && zero2 && module.empty() && category == "peak") {
        // Up to 8% at 2 ranks with fixed padding; with bucket padding beside it, 11% at 3.
        return "the LSTM frees its saved tensors during its backward: the peak is lower";
    }
    if (category != "activations") {
        return {};  // parameters, gradients and optimizer state hold everywhere else
    }
    if (run.model == "transformer" && run.precision == "bf16") {
        return "with autocast the transformer's backward peaks at another op than in float32";
    }
    if (run.model == "bilstm" && run.precision == "bf16" && !module.empty()) {
        return "with autocast the first LSTM layer keeps more of its tensors in 16 bits and the "
               "last holds more float32 gradients than the model's one 16-bit share says";
    }
    if (run.model == "bilstm" && zero2 &&
        (module.empty() || module == last_layer || module == "head")) {
        // Seen in a memory snapshot of rank 0: the LSTM's backward frees each time step's saved
        // tensors while its input gradients grow, so its peak (with the bucket) comes while part
        // of them is freed; the estimator adds the whole backward temporary to every saved
        // tensor, and the gradient of the LSTM's output the head made is still alive.
        return "the LSTM frees its saved tensors during its backward";
    }
    return {};
}

}  // namespace oomlab::test
