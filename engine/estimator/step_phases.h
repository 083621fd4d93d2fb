// One training step as the estimator sees it: what the config makes of the model, the batch
// and the ranks (worked out once), and the bytes alive in each phase of the step on top of
// what stays resident. estimate_memory sums them; module_shares.cpp splits the peak by module.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "activation_model.h"
#include "oomlab/config/experiment_config.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/run/breakdown.h"
#include "oomlab/run/run_record.h"

namespace oomlab::estimator {

constexpr std::int64_t kFloat = 4;

// Bytes of one element of a table stored in `dtype`.
std::int64_t element_bytes(DType dtype);

struct Step {
    const ExperimentConfig* config = nullptr;
    const DataProfile* profile = nullptr;
    int dim = 0;
    int batch = 0;
    int length = 0;  // the padded length of the longest micro-batch the step trains

    // Ranks and ZeRO: the rank predicted is the first, which owns the first 1/N of the
    // trainable parameters' elements, flattened in the model's order (the table first).
    std::int64_t ranks = 1;
    ShardMode shard = ShardMode::None;
    bool zero2 = false;  // ZeRO-2 or 3: gradients summed every micro-batch, the range kept
    bool zero3 = false;  // ZeRO-3: parameters too, a part gathered while it runs
    std::int64_t range_elements = 0;

    std::int64_t table = 0;  // the embedding table's weights on the device
    // A table kept in host memory on CUDA (embeddings.placement=cpu): its weights, gradient
    // and optimizer state live there; only the rows a batch looks up reach the device.
    std::int64_t host_bytes = 0;
    std::int64_t table_element = kFloat;
    std::int64_t others = 0;  // every other parameter, in float
    bool dense_table_grad = false;
    std::int64_t updated = 0;     // trainable bytes this rank updates
    std::int64_t gradients = 0;   // one micro-batch's gradients, whole
    std::int64_t kept_grads = 0;  // what this rank keeps of them for the update
    bool accumulating = false;
    std::int64_t earlier_grads = 0;  // the accumulated gradients of earlier micro-batches
    std::int64_t grad_sum_copy = 0;  // the table's new gradient beside the accumulated one
    std::int64_t weight_casts = 0;   // autocast's 16-bit copies of the weights
    std::int64_t kept_beside = 0;    // activations beside the saved ones (casts, kept graphs)

    // Gradient buckets (distributed.bucket_mb).
    std::int64_t largest_gradient = 0;
    bool largest_alone = false;  // larger than a bucket: summed alone, in place
    std::int64_t shared_bucket = 0;
    std::int64_t in_progress = 0;  // the gradient backward computes where it starts

    memory::ActivationBytes act;
    std::vector<memory::ModuleBytes> weights;  // each module's parameters but the table's

    std::int64_t share(std::int64_t bytes) const { return (bytes + ranks - 1) / ranks; }
    bool gradient_done(const std::string& module) const;
    // ZeRO-3: the whole parameters of `part` while its forward or backward runs.
    std::int64_t gathered_in(const std::string& part, bool backward) const;
};

// Temporaries of one parameter's update, each the parameter's size: Adam's sqrt and
// division, Adagrad's sqrt.
std::int64_t optimizer_temporaries(OptimizerKind optimizer);

// A micro-batch's tensors (ids, mask, labels) and their bytes.
std::vector<std::int64_t> batch_tensors(std::int64_t batch, std::int64_t length);
std::int64_t batch_bytes(std::int64_t batch, std::int64_t length);
// The training set held whole on the device (data.loading=eager), and how many micro-batches
// are alive at once beside it.
std::int64_t eager_data_bytes(const Step& step);
std::int64_t batches_resident(const Step& step);

// The padded length of an epoch's worst micro-batch: max_len (fixed padding), else the longest
// example.
int worst_length(const ExperimentConfig& config, const DataProfile& profile);

// The step whose longest micro-batch is padded to `length` tokens.
Step step_of(const ExperimentConfig& config, const DataProfile& profile, int world_size,
             int length);

// The parameters (this rank's range of them under ZeRO-3), optimizer state and data, alive
// for the whole run; returns their sum.
std::int64_t add_resident(const Step& step, MemoryBreakdown& breakdown);

// Bytes alive in one phase on top of the resident ones.
struct Phase {
    std::int64_t gradients = 0;
    std::int64_t other = 0;
    std::int64_t gathered = 0;  // ZeRO-3: a part's whole parameters, beside the range
    std::int64_t total() const { return gradients + other + gathered; }
};

enum class PhaseKind { Forward, Backward, Optimizer, Evaluation };

// The phase of the step that holds the most, and where in it the peak falls.
struct Peak {
    PhaseKind kind = PhaseKind::Forward;
    Phase bytes;
    bool backward_ending = false;  // backward's peak is at its end, the saved tensors freed
    std::string gathered_part;     // ZeRO-3: the part gathered then (all of them in evaluation)

    bool backward_starting() const { return kind == PhaseKind::Backward && !backward_ending; }
};

Peak peak_of(const Step& step);

// The peak by module, in forward order, then loss, optimizer and other.
std::vector<ModuleMemory> attribute_by_module(const Step& step, const Peak& peak);

}  // namespace oomlab::estimator
