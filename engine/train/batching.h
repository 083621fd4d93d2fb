// Batches for one epoch: which examples go together (padding policy), and how their tensors
// reach the device (eager: the whole dataset resident there; streaming: a background thread).
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/prepare/batch_plan.h"
#include "oomlab/prepare/text_encoding.h"

namespace oomlab::train {

using prepare::EncodedExamples;

struct Batch {
    torch::Tensor ids;     // [B, L] int64
    torch::Tensor mask;    // [B, L] bool, true for real tokens
    torch::Tensor labels;  // [B] int64
    std::int64_t size() const { return labels.size(0); }
};

// The plans themselves are torch-free (oomlab/prepare/batch_plan.h), shared with the estimator.
using prepare::BatchPlan;
using prepare::plan_batches;
using prepare::shard_plan;

// Each example's length, as the plans read it.
inline prepare::ExampleLength lengths_of(const EncodedExamples& examples) {
    return [&examples](std::int64_t index) { return examples.length(index); };
}

// Builds one batch on the host (without its mask: ids and labels only).
Batch make_host_batch(const EncodedExamples& examples, const std::vector<std::int64_t>& batch,
                      Padding padding, int max_len, bool pinned, bool with_mask = true);

class BatchSource {
public:
    virtual ~BatchSource() = default;
    // The next batch on the device, or nothing at the end of the plan.
    virtual std::optional<Batch> next() = 0;
    // Bytes the source keeps on the device besides the current batch.
    virtual std::int64_t resident_bytes() const { return 0; }
};

// Batches built on the host by a background thread, a few ahead, then copied to the device
// (asynchronously from pinned buffers when `pinned`). `examples` must outlive the source.
// Beside the batch in use it holds up to kStreamingBatchesAhead ready ones and one built,
// waiting for room. How many it holds when a step peaks depends on how fast the thread ran;
// with `full_at_each_batch` (a batch-size trial) each batch is handed out only once the thread
// holds all it can again, so the trial measures the most a run can hold.
std::unique_ptr<BatchSource> make_streaming_batch_source(
    const EncodedExamples& examples, std::vector<std::vector<std::int64_t>> plan, Padding padding,
    int max_len, const torch::Device& device, bool pinned, bool full_at_each_batch = false);

// Eager loading keeps this resident for the whole run: every example padded to max_len.
struct ResidentDataset {
    torch::Tensor ids;      // [N, max_len] on the device
    torch::Tensor lengths;  // [N]
    torch::Tensor labels;   // [N]
    std::int64_t bytes() const;
};
ResidentDataset make_resident_dataset(const EncodedExamples& examples, int max_len,
                                      const torch::Device& device);
std::unique_ptr<BatchSource> make_resident_batch_source(
    std::shared_ptr<const ResidentDataset> dataset, const EncodedExamples& examples,
    std::vector<std::vector<std::int64_t>> plan, Padding padding, int max_len);

}  // namespace oomlab::train
