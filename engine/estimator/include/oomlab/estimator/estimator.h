// Predicts a run's memory by category, before any run, from the config, the data's shape and
// the model's shapes: parameters, gradients, optimizer state, data, activations (with
// precision, checkpointing, accumulation and padding), and the peak.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/run/breakdown.h"
#include "oomlab/run/prediction_check.h"
#include "oomlab/run/run_record.h"

namespace oomlab {

// Which micro-batches a peak is predicted for.
enum class BatchesAssumed {
    // Those the run will draw: the data order is seeded, so its batches, their padded lengths
    // and its steps are known before it starts. What the run will measure.
    ThisRun,
    // An epoch's worst, padded to the longest example: what a run of these settings that goes
    // on long enough meets, and what a batch size found for them must survive.
    EpochWorst,
};

struct MemoryEstimate {
    MemoryBreakdown breakdown;       // at the predicted peak
    std::int64_t peak_bytes = 0;     // what the allocator must hold at the worst step
    std::int64_t cap_bytes = 0;      // memory.cap_mb in bytes; 0 = none
    bool fits = true;                // peak_bytes <= cap_bytes (or no cap)
    int worst_batch_length = 1;      // padded length of the longest micro-batch assumed
    bool every_batch_worst = false;  // train.padding=fixed: every batch has that length
    BatchesAssumed assumed = BatchesAssumed::ThisRun;
    // The peak with an epoch's worst micro-batch, padded to epoch_worst_length: the same as
    // peak_bytes unless the run is too short to draw that batch.
    std::int64_t epoch_worst_peak_bytes = 0;
    int epoch_worst_length = 1;
    // On CUDA, cuBLAS's workspaces (in the peak and its activations and temporaries, where a
    // run measures them: they are no tensor of the model's).
    std::int64_t library_workspaces = 0;
    // In host memory, not the device's: a table kept there on CUDA (embeddings.placement=cpu),
    // its gradient and optimizer state.
    std::int64_t host_bytes = 0;
    // What PyTorch's caching allocator reserves for these tensors (its model replaying the
    // step's tensors one request each): at the peak, peak_bytes and the cache then, and the
    // most at any moment. Not predicted under ZeRO-2/3.
    std::optional<std::int64_t> reserved_bytes;
    std::optional<std::int64_t> reserved_peak_bytes;
    // Whether this run's tensors pass through such an allocator (CUDA, or memory.alloc_conf on
    // the CPU): then breakdown.allocator_cache holds the cache at the peak, and `fits` asks
    // the allocator too.
    bool caching_allocator = false;
    // Under the cap, a request found no room even after the cache was released although the
    // tensors alone fit: the segments it opens (2 MiB, 20 MiB) or the pieces its cache is left
    // in (fragmentation) do not fit.
    bool allocator_out_of_memory = false;
    // The breakdown at the peak by module, under the names runs use (`estimate --json`,
    // key by_module): the model's modules in forward order, then loss, optimizer, other.
    std::vector<ModuleMemory> by_module;
};

// `world_size` > 1: the memory of each rank of a data-parallel run (distributed.shard), the
// first rank's batches assumed.
MemoryEstimate estimate_memory(const ExperimentConfig& config, const DataProfile& profile,
                               int world_size = 1,
                               BatchesAssumed assumed = BatchesAssumed::ThisRun);

// The estimate as it is stored with a run and checked against what the run measures.
MemoryPrediction to_prediction(const MemoryEstimate& estimate);

// What an embedding table of `rows` x `dim` costs in one process, as the estimator counts it:
// its weights in embeddings.dtype and, when trainable, its dense gradient (none with
// sparse_grad: that one grows with the batch) and the optimizer's state, in the same dtype.
struct EmbeddingTableCost {
    std::int64_t weights = 0;
    std::int64_t gradient = 0;
    std::int64_t optimizer_state = 0;
};
EmbeddingTableCost embedding_table_cost(const ExperimentConfig& config, std::int64_t rows, int dim);

// The model's parameters but the embedding table's (elements), counted from its shapes as
// the estimator counts them: the model need not be built to know them.
std::int64_t parameters_besides_table(const ExperimentConfig& config, int embedding_dim,
                                      int num_classes);

// Copies of each trainable value the optimizer keeps: SGD 0, momentum and Adagrad 1, Adam 2.
std::int64_t optimizer_state_copies(OptimizerKind optimizer);

}  // namespace oomlab
