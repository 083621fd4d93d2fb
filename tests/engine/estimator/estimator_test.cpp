// The estimator's own arithmetic, pinned by hand: tiny configurations whose every byte is
// worked out in the comments, so a change to the model of memory shows up as a diff here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "engine_support.h"
#include "estimator/library_workspaces.h"
#include "oomlab/allocator/cublas_workspaces.h"
#include "oomlab/estimator/estimator.h"
#include "test_support.h"
#include "tiny_run.h"

namespace oomlab {
namespace {

using test::tiny;
using test::tiny_profile;

TEST(Estimator, BagWithSgdByHand) {
    const MemoryEstimate estimate = estimate_memory(tiny({}), tiny_profile());
    const MemoryBreakdown& b = estimate.breakdown;
    EXPECT_EQ(b.embedding_table, 10 * 4 * 4);                  // 160
    EXPECT_EQ(b.parameters, ((4 * 3 + 3) + (3 * 2 + 2)) * 4);  // 23 floats: 92
    EXPECT_EQ(b.optimizer_state, 0);
    // Streaming: 4 batches in flight of ids (8 B) + mask (1 B) per token and a label each.
    EXPECT_EQ(b.data, 4 * (2 * 5 * 9 + 2 * 8));  // 424
    // Forward peaks in the pooling: the looked-up rows (2x5x4 floats, 160) and the masked
    // mean (40 + 64) saved, and a temporary as large as the rows (160); the head has saved
    // nothing yet (its 96 and the logits' 48 come later) and no gradient is alive.
    EXPECT_EQ(b.activations, 264 + 160);
    EXPECT_EQ(b.gradients, 0);
    EXPECT_EQ(estimate.peak_bytes, 160 + 92 + 424 + 424);  // 1100
}

TEST(Estimator, BagWithAdamAccumulationAndEagerDataByHand) {
    const MemoryEstimate estimate = estimate_memory(
        tiny({"train.optimizer=adam", "train.accumulation=2", "data.loading=eager"}),
        tiny_profile());
    const MemoryBreakdown& b = estimate.breakdown;
    EXPECT_EQ(b.optimizer_state, 2 * (160 + 92));  // two moments of every trainable byte
    // Every example resident at max_len (5 ids + 2 words of offsets and label) and a batch.
    EXPECT_EQ(b.data, 6 * (5 * 8 + 2 * 8) + (2 * 5 * 9 + 2 * 8));  // 442
    // Accumulating: the previous micro-batch's gradients (252) stay alive during forward.
    EXPECT_EQ(b.gradients, 160 + 92);
    EXPECT_EQ(b.activations, 264 + 160);
    EXPECT_EQ(estimate.peak_bytes, 160 + 92 + 504 + 442 + 252 + 424);  // 1874
}

TEST(Estimator, TransformerBlockByHand) {
    const ExperimentConfig config =
        tiny({"model.kind=transformer", "model.d_model=8", "model.heads=2", "model.ffn=16",
              "model.layers=1", "model.dropout=0", "train.padding=fixed"});
    const MemoryEstimate estimate = estimate_memory(config, tiny_profile());
    const MemoryBreakdown& b = estimate.breakdown;
    // Projection 4->8 (40), positions 5x8 (40), one block (600: two norms of 16, qkv 216,
    // output 72, FFN 144 + 136), the final norm (16) and the head 8->2 (18): 714 floats.
    EXPECT_EQ(b.parameters, 714 * 4);
    // Saved per block, 2x5 tokens: 8 tensors of width 8 (2,560), two of width 16 (1,280), the
    // attention map 2x2x5x5 (400); the stem (rows 160 + projection 320). Backward peaks in
    // the block: the head has passed on its input's gradient (320) and freed the rest, the
    // widest temporary (the FFN's 640) is alive, and so are the first gradients: the head's
    // (34 floats) and the block's output layer's (136).
    EXPECT_EQ(b.activations, (480 + 4240 + 320) + 640);  // 5,680
    EXPECT_EQ(b.gradients, (34 + 136) * 4);
    EXPECT_EQ(estimate.peak_bytes, 160 + 2856 + 424 + 680 + 5680);  // 9,800
}

TEST(Estimator, CheckpointingKeepsOnlyTheBlockInputsByHand) {
    const ExperimentConfig config =
        tiny({"model.kind=transformer", "model.d_model=8", "model.heads=2", "model.ffn=16",
              "model.layers=1", "model.dropout=0", "train.padding=fixed",
              "memory.checkpointing=layers"});
    const MemoryEstimate estimate = estimate_memory(config, tiny_profile());
    // Saved: stem 480, the block's input 320. Backward recomputes the block (4,240) with its
    // widest temporary (640) beside the head's passed-on gradient (320) and the first
    // gradients (the head's and the block's output layer's, 680): at this size that is the
    // peak, above the plain run's. At the end of backward the block is gone again.
    EXPECT_EQ(estimate.breakdown.gradients, (34 + 136) * 4);
    EXPECT_EQ(estimate.breakdown.activations, 480 + 320 + 320 + 4240 + 640);
    EXPECT_EQ(estimate.peak_bytes, 160 + 2856 + 424 + 680 + 6000);  // 10,120
}

TEST(Estimator, CapAndFitFollowTheCapInMiB) {
    const MemoryEstimate none = estimate_memory(tiny({}), tiny_profile());
    EXPECT_EQ(none.cap_bytes, 0);
    EXPECT_TRUE(none.fits);
    const MemoryEstimate capped = estimate_memory(tiny({"memory.cap_mb=1"}), tiny_profile());
    EXPECT_EQ(capped.cap_bytes, std::int64_t{1} << 20);
    EXPECT_TRUE(capped.fits);
}

// The prediction by module is the same peak cut another way: whichever phase peaks (forward,
// the start or end of backward, the update), the modules add up to the breakdown.
TEST(Estimator, ModulesAddUpToTheBreakdown) {
    const std::vector<ExperimentConfig> grid = {
        tiny({}),
        tiny({"train.optimizer=adam", "train.accumulation=4"}),
        tiny({"model.kind=transformer", "train.accumulation=4", "train.optimizer=adam"}),
        tiny({"model.kind=transformer", "memory.checkpointing=layers", "model.layers=3"}),
        tiny({"model.kind=bilstm", "model.layers=2", "memory.precision=bf16"}),
        tiny({"model.kind=bilstm", "train.accumulation=2", "embeddings.trainable=false"}),
        // A table far larger than the batch: backward peaks at its end, all gradients alive.
        tiny({"train.batch_size=1", "train.max_len=1"}),
    };
    for (std::size_t i = 0; i < grid.size(); ++i) {
        const MemoryEstimate estimate = estimate_memory(grid[i], tiny_profile());
        MemoryBreakdown summed;
        for (const ModuleMemory& module : estimate.by_module) {
            summed.parameters += module.parameters;
            summed.gradients += module.gradients;
            summed.optimizer_state += module.optimizer_state;
            summed.activations += module.activations.value_or(0);
            EXPECT_GE(module.activations.value_or(0), 0) << module.module;
        }
        const MemoryBreakdown& b = estimate.breakdown;
        const std::string config = "config " + std::to_string(i);
        EXPECT_EQ(summed.parameters, b.embedding_table + b.parameters) << config;
        EXPECT_EQ(summed.gradients, b.gradients) << config;
        EXPECT_EQ(summed.optimizer_state, b.optimizer_state) << config;
        EXPECT_EQ(summed.activations, b.activations) << config;
    }
}

// Accumulating, the transformer's backward peaks where it starts: the last block holds its
// saved tensors and the step's temporaries; the embeddings only what they saved.
TEST(Estimator, AccumulationPutsTheTemporariesWhereBackwardStarts) {
    const MemoryEstimate estimate = estimate_memory(
        tiny({"model.kind=transformer", "model.layers=2", "train.accumulation=4"}), tiny_profile());
    std::int64_t embeddings = -1;
    std::int64_t first = -1;
    std::int64_t last = -1;
    for (const ModuleMemory& module : estimate.by_module) {
        const std::int64_t held = module.activations.value_or(0);
        embeddings = module.module == "embeddings" ? held : embeddings;
        first = module.module == "block 1" ? held : first;
        last = module.module == "block 2" ? held : last;
    }
    EXPECT_GT(last, first);
    EXPECT_EQ(embeddings, 2 * 5 * 4 * 4);  // the looked-up rows; no copy of the table's grad
}

}  // namespace
}  // namespace oomlab

namespace oomlab {
namespace {

TEST(Estimator, ShardingKeepsOneRanksShareOfTheOptimizerState) {
    // Adam: two copies of the 160 + 92 = 252 trainable bytes, 504; each of 2 ranks keeps 252.
    const DataProfile profile = tiny_profile();
    const MemoryEstimate alone = estimate_memory(tiny({"train.optimizer=adam"}), profile);
    EXPECT_EQ(alone.breakdown.optimizer_state, 504);
    const MemoryEstimate unsharded =
        estimate_memory(tiny({"train.optimizer=adam", "distributed.shard=none"}), profile, 2);
    EXPECT_EQ(unsharded.breakdown.optimizer_state, 504);
    EXPECT_GE(unsharded.peak_bytes, alone.peak_bytes) << "plus the all-reduce bucket";
    const MemoryEstimate zero1 =
        estimate_memory(tiny({"train.optimizer=adam", "distributed.shard=optimizer"}), profile, 2);
    EXPECT_EQ(zero1.breakdown.optimizer_state, 252);
    EXPECT_LT(zero1.peak_bytes, unsharded.peak_bytes);
    const MemoryEstimate zero2 =
        estimate_memory(tiny({"train.optimizer=adam", "distributed.shard=gradients"}), profile, 2);
    EXPECT_EQ(zero2.breakdown.optimizer_state, 252);
    // The per-module rows add up to the same state.
    std::int64_t state = 0;
    for (const ModuleMemory& module : zero2.by_module) {
        state += module.optimizer_state;
    }
    EXPECT_NEAR(state, 252, 4);
    // Alone, distributed.shard changes nothing.
    EXPECT_EQ(
        estimate_memory(tiny({"train.optimizer=adam", "distributed.shard=optimizer"}), profile)
            .peak_bytes,
        alone.peak_bytes);
}

// ZeRO-3: a rank holds 1/N of the parameters and of Adam's two moments, 4 + 8 bytes per value
// in float32, 12 of the 16 bytes per parameter of DeepSpeed's ZeRO paper (16Ψ/N); the
// gradients are 1/N once summed, but the table's is made whole by backward before its sum,
// and that moment is this model's peak.
TEST(Estimator, ZeroThreeKeepsOneRanksShareOfEveryModelState) {
    DataProfile profile = tiny_profile();
    profile.vocab_rows = 1000;
    profile.embedding_dim = 50;
    // The table's 1000 x 50 values, the hidden layer's 50 x 3 + 3 and the output's 3 x 2 + 2.
    const std::int64_t values = 1000 * 50 + 153 + 8;
    const std::int64_t table_gradient = 1000 * 50 * 4;
    for (const int ranks : {2, 4}) {
        ExperimentConfig config = tiny({"train.optimizer=adam", "distributed.bucket_mb=0"});
        config.distributed.shard = ShardMode::Parameters;
        const MemoryEstimate zero3 = estimate_memory(config, profile, ranks);
        const MemoryBreakdown& b = zero3.breakdown;
        const std::int64_t range = (values + ranks - 1) / ranks;
        // The range is the table's first values: rank 0 keeps no other parameter, and at the
        // end of backward no part is gathered (the table's backward reads only the ids).
        EXPECT_EQ(b.embedding_table, range * 4) << ranks;
        EXPECT_EQ(b.parameters, 0) << ranks;
        EXPECT_EQ(b.optimizer_state, (2 * 4 * values + ranks - 1) / ranks) << ranks;
        EXPECT_NEAR(b.embedding_table + b.parameters + b.optimizer_state, 12.0 * values / ranks, 8)
            << ranks;
        // Each gradient summed alone: the summed range and the table's whole new gradient.
        EXPECT_EQ(b.gradients, (4 * values + ranks - 1) / ranks + table_gradient) << ranks;
        config.distributed.shard = ShardMode::Gradients;
        const MemoryEstimate zero2 = estimate_memory(config, profile, ranks);
        // What the rank no longer keeps of the parameters.
        EXPECT_EQ(zero2.peak_bytes - zero3.peak_bytes, 4 * values - range * 4) << ranks;
    }
}

}  // namespace
}  // namespace oomlab

namespace oomlab {
namespace {

TEST(EmbeddingTable, RowsAreTheVocabularysWordsAndThePadAndUnknownRows) {
    EmbeddingsConfig embeddings;
    embeddings.vocab = VocabMode::Dataset;
    EXPECT_EQ(embedding_table_rows(embeddings, 400000, 8000), 8002);
    embeddings.vocab = VocabMode::Full;
    EXPECT_EQ(embedding_table_rows(embeddings, 400000, 8000), 400002);
    embeddings.vocab = VocabMode::Top;
    embeddings.top_n = 50000;
    EXPECT_EQ(embedding_table_rows(embeddings, 400000, 8000), 50002);
    EXPECT_EQ(embedding_table_rows(embeddings, 1000, 8000), 1002);  // fewer vectors than top_n
}

// The cost the GloVe panel shows is the one the estimator adds up: in the table's dtype, the
// dense gradient only, the optimizer's copies of the table.
TEST(EmbeddingTable, CostIsWhatTheEstimatorCountsForTheTable) {
    ExperimentConfig config;
    config.embeddings.dtype = DType::Fp16;
    config.train.optimizer = OptimizerKind::Adam;
    const std::int64_t weights = 1002 * 50 * 2;
    EmbeddingTableCost cost = embedding_table_cost(config, 1002, 50);
    EXPECT_EQ(cost.weights, weights);
    EXPECT_EQ(cost.gradient, weights);
    EXPECT_EQ(cost.optimizer_state, 2 * weights);

    DataProfile profile;
    profile.vocab_rows = 1002;
    profile.embedding_dim = 50;
    profile.lengths.assign(64, 8);
    profile.train_examples = 64;
    profile.longest = 8;
    profile.mean_length = 8;
    const MemoryEstimate estimate = estimate_memory(config, profile);
    EXPECT_EQ(estimate.breakdown.embedding_table, cost.weights);
    ASSERT_FALSE(estimate.by_module.empty());
    EXPECT_EQ(estimate.by_module.front().module, "embeddings");
    EXPECT_EQ(estimate.by_module.front().optimizer_state, cost.optimizer_state);

    config.embeddings.sparse_grad = true;
    EXPECT_EQ(embedding_table_cost(config, 1002, 50).gradient, 0);
    config.embeddings.trainable = false;
    cost = embedding_table_cost(config, 1002, 50);
    EXPECT_EQ(cost.gradient + cost.optimizer_state, 0);

    config.embeddings.dtype = DType::Int8;
    EXPECT_EQ(embedding_table_cost(config, 1002, 50).weights, 1002 * 50 + 1002 * 4)
        << "a byte an element and a float scale a row";
}

using test::kMiB;

// Measured on an H200 (bench/results/gpu-2026-11-26.md): a bag model's peak was 65 MiB above
// its tensors, with PyTorch's own script too: two cuBLAS handles of 32 MiB and cuBLASLt's 1 MiB.
TEST(Estimator, CudaAddsCublasWorkspacesToThePeakAndItsTemporaries) {
    ASSERT_EQ(std::getenv("CUBLAS_WORKSPACE_CONFIG"), nullptr);
    const MemoryEstimate cpu = estimate_memory(tiny({}), tiny_profile());
    const MemoryEstimate cuda = estimate_memory(tiny({"device=cuda"}), tiny_profile());
    EXPECT_EQ(cpu.library_workspaces, 0);
    EXPECT_EQ(cuda.library_workspaces, 65 * kMiB);
    EXPECT_EQ(cuda.peak_bytes - cpu.peak_bytes, 65 * kMiB);
    EXPECT_EQ(cuda.breakdown.activations - cpu.breakdown.activations, 65 * kMiB);
    const auto other = [](const MemoryEstimate& estimate) {
        return estimate.by_module.back().module == "other"
                   ? estimate.by_module.back().activations.value_or(0)
                   : -1;
    };
    EXPECT_EQ(other(cuda) - other(cpu), 65 * kMiB);
}

TEST(Estimator, CublasWorkspaceConfigSetsTheSizePerHandle) {
    ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:2:16:8", 1);  // PyTorch's default before Hopper
    const std::int64_t bytes = estimator::cuda_library_workspace_bytes(tiny({"device=cuda:0"}));
    ::unsetenv("CUBLAS_WORKSPACE_CONFIG");
    EXPECT_EQ(bytes, 2 * (8 * kMiB + 128 * 1024) + kMiB);
}

TEST(Estimator, CublasWorkspaceConfigIsReadAsPyTorchReadsIt) {
    using allocator::parse_cublas_workspace_config;
    EXPECT_EQ(parse_cublas_workspace_config(":4096:8"), 32 * kMiB);
    EXPECT_EQ(parse_cublas_workspace_config(":16:8"), 128 * 1024);
    EXPECT_EQ(parse_cublas_workspace_config(":4096:2:16:8"), 8 * kMiB + 128 * 1024);
    EXPECT_EQ(parse_cublas_workspace_config("x:4096:1"), 4 * kMiB);
    EXPECT_EQ(parse_cublas_workspace_config(""), std::nullopt);
    EXPECT_EQ(parse_cublas_workspace_config("4096"), std::nullopt);
    EXPECT_EQ(parse_cublas_workspace_config(":4096"), std::nullopt);
    EXPECT_EQ(parse_cublas_workspace_config(":a:b"), std::nullopt);
}

}  // namespace
}  // namespace oomlab
