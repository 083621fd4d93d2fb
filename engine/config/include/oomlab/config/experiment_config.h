// The experiment: every setting of a run, as plain typed values. Each field is also a dotted
// config key (see config_keys.h), which is how files, --set and the GUI address it.
#pragma once

#include <cstdint>
#include <string>

#include "oomlab/common/format.h"
#include "oomlab/data/dataset.h"

namespace oomlab {

enum class EmbeddingSource { Default, File, Synthetic };
enum class VocabMode { Full, Dataset, Top };
enum class EmbeddingPlacement { Device, Cpu };
// Int8 is for embedding tables only (a row of int8 and its fp32 scale), never a precision.
enum class DType { Fp32, Fp16, Bf16, Int8 };
enum class ModelKind { Bag, BiLstm, Transformer };
enum class Padding { Fixed, Dynamic, Bucket };
enum class OptimizerKind { Sgd, Momentum, Adam, AdamW, Adagrad };
enum class Checkpointing { None, Layers };
enum class DataLoading { Eager, Streaming };
enum class EmptyCache { Never, Step, Eval };
enum class OnOom { Stop, Halve, Adapt };
enum class DistributedBackend { Auto, Gloo, Nccl };
enum class ShardMode { None, Optimizer, Gradients, Parameters };

struct DatasetConfig {
    std::string path;        // empty: the embedded default
    std::string valid_path;  // empty: split valid_ratio off the training data
    DatasetFormat format = DatasetFormat::Auto;
    double valid_ratio = 0.1;
};

struct EmbeddingsConfig {
    EmbeddingSource source = EmbeddingSource::Default;
    std::string path;                // a GloVe / word2vec text file or its cache
    std::string variant = "6B.50d";  // shape for synthetic vectors and the case rule
    VocabMode vocab = VocabMode::Dataset;
    std::int64_t top_n = 0;  // with VocabMode::Top
    bool trainable = true;
    EmbeddingPlacement placement = EmbeddingPlacement::Device;
    DType dtype = DType::Fp32;
    bool sparse_grad = false;
};

struct ModelConfig {
    ModelKind kind = ModelKind::Bag;
    int hidden = 128;  // MLP width (bag), LSTM state per direction (bilstm)
    int layers = 2;    // LSTM or encoder layers
    int heads = 4;
    int d_model = 128;
    int ffn = 256;
    double dropout = 0.1;
};

struct TrainConfig {
    int epochs = 3;
    std::int64_t max_steps = 0;  // 0: by epochs
    int batch_size = 32;
    int accumulation = 1;
    int max_len = 64;
    Padding padding = Padding::Dynamic;
    OptimizerKind optimizer = OptimizerKind::Adam;
    double lr = 1e-3;
    std::uint64_t seed = 42;
};

struct MemoryConfig {
    DType precision = DType::Fp32;
    Checkpointing checkpointing = Checkpointing::None;
    EmptyCache empty_cache = EmptyCache::Never;
    std::int64_t cap_mb = 0;  // 0: no cap
    OnOom on_oom = OnOom::Stop;
    // PYTORCH_CUDA_ALLOC_CONF's syntax. CUDA: the caching allocator's settings; CPU: the same
    // allocator modelled, so reserved memory and fragmentation exist there too. "": unset.
    std::string alloc_conf;

    std::int64_t cap_bytes() const { return cap_mb * kBytesPerMiB; }  // 0: no cap
};

struct DataConfig {
    DataLoading loading = DataLoading::Streaming;
    bool pin_memory = false;
};

// Streaming loading holds, beside the batch in use, this many ready batches and one being
// built: what the estimator counts, and what a batch-size trial must hold too.
inline constexpr int kStreamingBatchesAhead = 2;

struct EvalConfig {
    int every = 0;  // optimizer steps between validations; 0: end of each epoch
    bool no_grad = true;
};

struct DebugConfig {
    bool keep_loss_graph = false;
    std::string memory_snapshot;  // file to write the allocator's history to (memory_viz)
};

// Data-parallel training over several processes (one per rank); a single process ignores it.
struct DistributedConfig {
    DistributedBackend backend = DistributedBackend::Auto;  // auto: NCCL on CUDA, Gloo on the CPU
    ShardMode shard = ShardMode::None;  // ZeRO-1 (optimizer state), 2 (and gradients), 3 (and
                                        // parameters)
    int timeout_s = 60;                 // of every collective: a rank that stops ends the run
    int bucket_mb = 25;  // gradients summed in one collective (DDP's bucket_cap_mb); 0: each alone
};

struct ExperimentConfig {
    DatasetConfig dataset;
    EmbeddingsConfig embeddings;
    ModelConfig model;
    TrainConfig train;
    MemoryConfig memory;
    DataConfig data;
    EvalConfig eval;
    DebugConfig debug;
    DistributedConfig distributed;
    std::string device = "auto";  // auto, cpu, cuda, cuda:N

    // cuda or cuda:N; "auto" is resolved to a device when a run starts.
    bool on_cuda() const { return device.rfind("cuda", 0) == 0; }
};

}  // namespace oomlab
