// The data-parallel side of a training run on one rank: gradients summed over the ranks in
// buckets of at most distributed.bucket_mb (DDP's bucket_cap_mb) and averaged, and with ZeRO
// sharding (distributed.shard) the slice of the parameters whose optimizer state, and
// gradients, this rank keeps.
//
// Sharding splits the flattened trainable parameters into equal ranges, one per rank, as
// DeepSpeed does, so each rank's share is 1/N of the elements even when one tensor (the
// embedding table) dominates. This rank's optimizer updates views of its range in place;
// after the update each range is sent from its owner to every rank. ZeRO-3
// (data_parallel_zero3.cpp) keeps only the range: each part of the model gathers its
// parameters before its forward and backward and frees them after.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/distributed/process_group.h"
#include "oomlab/model/text_classifier.h"
#include "oomlab/snapshot_writer/module_scope.h"
#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::train {

// Every trainable element in one flat order (the parameters one after another), and the
// pieces of parameters that fall in this rank's range of it (sharded modes).
struct FlatLayout {
    struct Piece {
        std::size_t parameter;
        std::int64_t offset;  // in the flattened parameter
        std::int64_t length;
        std::int64_t shard_offset;  // in this rank's range
    };
    std::vector<std::int64_t> starts;  // each parameter's first element
    std::vector<std::int64_t> sizes;   // each parameter's elements
    std::int64_t total = 0;
    std::int64_t begin = 0, end = 0;  // this rank's range
    std::vector<Piece> pieces;

    // The range [first, second) of rank `owner` of `world`.
    std::pair<std::int64_t, std::int64_t> range_of(std::int64_t owner, std::int64_t world) const;
    // Where each of `parameters` (indices, in order) meets [begin, end): shard_offset counts
    // from `begin`.
    std::vector<Piece> pieces_in(const std::vector<std::size_t>& parameters, std::int64_t begin,
                                 std::int64_t end) const;
    std::vector<std::size_t> every_parameter() const;
};

// The gradients reduced together, in the order backward produces them.
struct GradientBuckets {
    std::vector<std::vector<std::size_t>> members;  // parameter indices, backward order
    std::vector<std::size_t> bucket_of;             // each parameter's bucket
    std::vector<std::int64_t> offset_in_bucket;     // each parameter's first element there
    std::vector<std::int64_t> elements;             // each bucket's
};

// ZeRO-2 during a step: the buckets filling up in this backward pass, their gradients so far,
// the next bucket to reduce, the reductions made, and this rank's summed range.
struct Zero2Step {
    std::vector<torch::Tensor> pending;
    std::vector<std::size_t> arrived;
    std::size_t next_bucket = 0;
    std::int64_t reductions = 0;
    torch::Tensor range_gradient;
};

// ZeRO-3 during a run: each part's parameters, the storages they free and gather again (a
// parameter may be a view of a storage its part shares), and the collectives of one
// micro-batch, which a rank leaving a step makes again with zeros.
struct Zero3Parts {
    struct Part {
        const model::MemoryModule* module = nullptr;
        std::vector<std::size_t> parameters;                         // trainable ones, indices
        std::vector<std::pair<c10::Storage, std::size_t>> storages;  // and their full bytes
        bool gathered = true;
        std::size_t gradients_arrived = 0;  // in this backward
    };
    struct Collective {
        int root = -1;  // a broadcast's; -1: a sum
        std::int64_t elements = 0;
        c10::ScalarType dtype = c10::ScalarType::Float;
    };
    std::vector<Part> parts;
    std::vector<std::size_t> part_of;     // each trainable parameter's
    bool holding_all = false;             // gathered for evaluation: the hooks leave them
    std::vector<Collective> made;         // in this step
    std::vector<Collective> micro_batch;  // a whole micro-batch's, once one completed
    std::size_t made_at_micro_batch = 0;  // `made` when this micro-batch began
    model::TextClassifier* model = nullptr;
};

class DataParallel : private model::PartHooks {
public:
    // A bucket holds at most `bucket_bytes` of gradients (one larger parameter alone; 0: each
    // its own). ZeRO-2's range of the gradients, and its buckets waiting for their sum, are
    // marked as gradients of `range_owner` in the allocator's ledger (the optimizer's row: it
    // is what the update reads).
    DataParallel(distributed::ProcessGroup& group, ShardMode shard,
                 std::vector<torch::Tensor> trainable, std::int64_t bucket_bytes,
                 memory::ModuleId range_owner = memory::kNoModule);

    ~DataParallel() override;
    DataParallel(const DataParallel&) = delete;
    DataParallel& operator=(const DataParallel&) = delete;

    int rank() const { return m_group.rank(); }
    int world_size() const { return m_group.world_size(); }

    // What this rank's optimizer updates: every trainable parameter, or views of its range.
    const std::vector<torch::Tensor>& optimizer_parameters() const;
    // The views of `parameter` this rank's optimizer updates (the parameter itself unsharded).
    std::vector<torch::Tensor> optimizer_tensors_of(const torch::Tensor& parameter) const;

    // Every rank starts from rank 0's weights, as DDP does.
    void share_initial_parameters();
    // ZeRO-3, after share_initial_parameters: keeps this rank's range in tensors of its own
    // (what the optimizer then updates), frees every trainable parameter and gathers each
    // part of `model` around its forward and backward from now on.
    void shard_parameters(model::TextClassifier& model);
    bool shards_parameters() const { return m_shard == ShardMode::Parameters; }
    // The bytes of `parameter` this rank keeps between steps (all of it unless ZeRO-3).
    std::int64_t kept_bytes(const torch::Tensor& parameter) const;
    // ZeRO-3: every part gathered (evaluation, the final check) until release_all().
    void gather_all();
    void release_all();
    // After each micro-batch's backward. ZeRO-2 has reduced each bucket as backward filled
    // it, kept this rank's range and freed the rest; this checks every one came.
    void after_backward();
    // When this rank leaves a step early (out of memory, stopped) that plans `micro_batches`
    // micro-batches: ZeRO-2 reduces inside backward, so this rank still takes part, with zeros,
    // in every reduction the others make in the step, and drops the step's partial sums; the
    // ranks' collectives then pair up again where they agree on the step.
    void leave_step(int micro_batches);
    // Before the optimizer step: the gradients (this rank's range when sharded) are the mean
    // over the ranks.
    void before_step();
    // After the optimizer step: each rank's updated range reaches every rank.
    void after_step();

    // The largest of every rank's `status` (0: fine; higher: something every rank must act
    // on), so that all ranks take the same branch.
    int agree(int status);
    // Sums `values` over the ranks, in place (evaluation).
    void sum(torch::Tensor& values);

    // A hash of this rank's trainable parameters' bytes; throws Error when the ranks differ.
    std::uint64_t check_identical_parameters();

private:
    class RangeHook;
    bool shards_gradients() const {
        return m_shard == ShardMode::Gradients || m_shard == ShardMode::Parameters;
    }
    // ZeRO-3 (data_parallel_zero3.cpp).
    void before_forward(const model::MemoryModule& part) override;
    void after_forward(const model::MemoryModule& part) override;
    void before_backward(const model::MemoryModule& part) override;
    Zero3Parts::Part* part_of(const model::MemoryModule& module);
    void gather(Zero3Parts::Part& part);
    void release(Zero3Parts::Part& part);
    void part_gradient_arrived(std::size_t index);
    void micro_batch_completed();
    // A rank leaving a ZeRO-3 step makes every collective the others still make in it.
    void make_the_rest_of_the_step(int micro_batches);
    // The collectives of a step, recorded under ZeRO-3.
    void sum_in_step(torch::Tensor& tensor, const char* what);
    void broadcast_in_step(torch::Tensor& tensor, int root, const char* what);

    void reduce_buckets();  // every gradient, summed in place
    // ZeRO-2 (data_parallel_zero2.cpp). Hooks on_gradient to each parameter's accumulator.
    void install_gradient_hooks();
    // As backward accumulates the gradient of parameter `index`: moves it into its bucket and
    // frees it (the buckets it fills are reduced at the next gradient or after backward).
    void on_gradient(std::size_t index);
    // Reduces the full buckets in bucket order: every rank reduces them in the same order,
    // whichever fills first.
    void reduce_full_buckets();
    // Sums bucket `bucket` across the ranks, adds this rank's range of it to the range
    // gradient and frees it.
    void reduce_bucket(std::size_t bucket);
    void add_to_range(std::size_t index, const torch::Tensor& summed);

    distributed::ProcessGroup& m_group;
    ShardMode m_shard;
    memory::ModuleId m_range_owner;
    std::vector<torch::Tensor> m_parameters;
    FlatLayout m_layout;
    std::vector<torch::Tensor> m_views;  // the pieces as tensors the optimizer updates
    GradientBuckets m_buckets;
    Zero2Step m_zero2;
    // ZeRO-2: the parameters' gradient accumulators, which run the reduction (a parameter
    // holds its own only weakly).
    std::vector<compat::GradAccumulator> m_accumulators;
    Zero3Parts m_zero3;
};

}  // namespace oomlab::train
