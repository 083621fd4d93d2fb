#include "prepared_experiment.h"

#include <torch/nn.h>

#include <unistd.h>

#include <filesystem>

#include "oomlab/snapshot_writer/memory_snapshot.h"
#if OOMLAB_WITH_CUDA
#include "oomlab/measure/cuda_memory.h"
#endif
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/snapshot_paths.h"
#include "oomlab/estimator/estimator.h"
#include "oomlab/glove/variants.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/prepare/tokenized_data.h"
#include "oomlab/prepare/vector_source.h"
#include "oomlab/torch_utils/device.h"

namespace oomlab::train {
namespace {

void check_device_support(const ExperimentConfig& config, const torch::Device& device) {
#if OOMLAB_WITH_CUDA
    if (device.is_cuda() && config.memory.cap_mb > 0) {
        const std::int64_t total_mib = memory::cuda::total_bytes(device.index()) >> 20;
        if (config.memory.cap_mb > total_mib) {
            throw BadInput("memory.cap_mb: " + std::to_string(config.memory.cap_mb) +
                           " MiB is more than " + device.str() + " has (" +
                           std::to_string(total_mib) + " MiB); choose a smaller cap or 0");
        }
    }
#endif
    if (!device.is_cpu()) {
        return;
    }
    if (config.memory.precision == DType::Fp16) {
        throw BadInput(
            "memory.precision=fp16 needs a CUDA device: LibTorch has no fp16 autocast "
            "or grad scaling on the CPU. Use memory.precision=bf16 on the CPU.");
    }
    if (config.embeddings.dtype == DType::Fp16 && config.embeddings.trainable) {
        throw BadInput(
            "embeddings.dtype=fp16 with embeddings.trainable=true needs a CUDA device: "
            "LibTorch's CPU kernels cannot update fp16 tensors. Use "
            "embeddings.dtype=bf16, or freeze the table.");
    }
}

// The host's memory, and on CUDA the device's: where the model's parameters are made.
std::pair<std::int64_t, std::string> memory_of(const torch::Device& device) {
    const std::int64_t host = std::int64_t(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
#if OOMLAB_WITH_CUDA
    if (device.is_cuda() && memory::cuda::total_bytes(device.index()) < host) {
        return {memory::cuda::total_bytes(device.index()), device.str() + "'s memory"};
    }
#else
    (void)device;  // no CUDA in this build: the host's memory
#endif
    return {host, "this machine's memory"};
}

// A model whose parameters alone are more than the machine (or its GPU) holds could only be
// killed by the kernel or end out of memory after allocating what it could: said before a
// byte of them exists (count_parameters builds the model). One that fits the machine but not
// memory.cap_mb starts, and ends out of memory at the cap, with the fixes that make it fit.
void refuse_parameters_past_memory(const ExperimentConfig& config, const DataProfile& profile,
                                   const torch::Device& device) {
    const MemoryBreakdown b =
        estimate_memory(config, profile, 1, BatchesAssumed::EpochWorst).breakdown;
    const std::int64_t parameters = b.parameters + b.embedding_table;
    const auto [most, where] = memory_of(device);
    if (most <= 0 || parameters <= most) {
        return;
    }
    // The keys that size this kind of model, as the message names them.
    std::vector<std::string> keys;
    switch (config.model.kind) {
        case ModelKind::Transformer:
            keys = {"model.d_model", "model.ffn", "model.layers"};
            break;
        case ModelKind::BiLstm:
            keys = {"model.hidden", "model.layers"};
            break;
        case ModelKind::Bag:
            keys = {"model.hidden"};
            break;
    }
    std::string sizes;
    for (const std::string& key : keys) {
        sizes += (sizes.empty() ? "" : ", ") + key + "=" + get_config_value(config, key);
    }
    throw BadInput("the model's parameters alone take " + format_bytes(parameters) + " (" + sizes +
                       "), more than " + where + " (" + format_bytes(most) +
                       "): it could not even be built; make the model smaller",
                   keys);
}

// Parameter counts from the model's shapes, as the estimator counts them: building it to count
// them took 3.25 GB of host memory for a transformer far over its memory.cap_mb, before the run
// was stopped at the cap (tests hold the count to the built model's).
void count_parameters(PreparedExperiment& prepared) {
    const std::int64_t others = parameters_besides_table(
        prepared.config, int(prepared.initial_embeddings.size(1)), prepared.num_classes);
    const std::int64_t table = prepared.initial_embeddings.numel();
    prepared.info.parameters = others + table;
    prepared.info.trainable_parameters =
        others + (prepared.config.embeddings.trainable ? table : 0);
}

}  // namespace

void check_snapshot_path(const ExperimentConfig& config) {
    memory::check_snapshot_path(
        config.debug.memory_snapshot,
        {config.dataset.path, config.dataset.valid_path, config.embeddings.path});
}

PreparedExperiment prepare_experiment(const ExperimentConfig& config,
                                      const PrepareOptions& options) {
    const auto report = [&](const std::string& stage, double fraction) {
        if (options.progress) {
            options.progress(stage, fraction);
        }
    };
    validate_config(config);
    PreparedExperiment prepared;
    prepared.config = config;
    prepared.device = torch_utils::resolve_device(config.device);
    const Rendezvous alone;
    const Rendezvous& rendezvous = options.rendezvous.value_or(alone);
    if (prepared.device.is_cuda() && !prepared.device.has_index() && rendezvous.world_size > 1) {
        // One device per process on each machine, as torchrun assigns them.
        prepared.device = torch::Device(torch::kCUDA, rendezvous.local_rank);
    }
    check_device_support(config, prepared.device);
    validate_data_parallel(config, rendezvous.world_size, prepared.device.is_cuda());
    std::string& snapshot = prepared.config.debug.memory_snapshot;
    snapshot = snapshot_path_for_rank(snapshot, rendezvous.rank, rendezvous.world_size);
    if (!snapshot.empty()) {
        // Written at the end of the run: a path that cannot be written must fail now.
        check_snapshot_path(prepared.config);
    }
    ExperimentInfo& info = prepared.info;
    info.device = torch_utils::describe_device(prepared.device);

    std::shared_ptr<const prepare::TokenizedData> data = options.data;  // read by the session
    if (!data) {
        report("dataset", 0.0);
        data = prepare::load_tokenized_data(config);
    }
    info.dataset = data->split.train.source;
    info.train_examples = static_cast<std::int64_t>(data->split.train.examples.size());
    info.valid_examples = static_cast<std::int64_t>(data->split.valid.examples.size());
    info.label_names = data->split.train.label_names;
    prepared.num_classes = static_cast<int>(info.label_names.size());
    const prepare::TokenLists& train_tokens = data->train_tokens;
    const prepare::TokenLists& valid_tokens = data->valid_tokens;

    report("embeddings", 0.1);
    GloveLoadOptions load_options;
    load_options.progress = [&](double fraction) { report("embeddings", 0.1 + 0.8 * fraction); };
    load_options.write_cache_in_background = true;  // the first run trains while it is written
    const prepare::LoadedVectors vectors = prepare::load_vectors(
        config.embeddings, data->train_words, config.train.seed, load_options);
    info.embeddings = vectors.description;

    const prepare::EmbeddingRows rows = prepare::build_embedding_rows(
        config.embeddings, vectors.table, train_tokens, config.train.seed,
        [&](std::int64_t count, int dim) {
            prepared.initial_embeddings = torch::empty({count, dim}, torch::kFloat32);
            return prepared.initial_embeddings.data_ptr<float>();
        });
    info.vocab_size = rows.rows;
    info.embedding_dim = rows.dim;
    info.vectors_found = rows.vectors_found;
    info.dataset_words = rows.dataset_words;
    info.profile =
        profile_tokens(config, info.train_examples, info.valid_examples,
                       static_cast<int>(info.label_names.size()), train_tokens, valid_tokens);
    prepare::profile_vectors(
        info.profile, config.embeddings,
        {vectors.table.size(), rows.dim, rows.vectors_found, vectors.synthetic},
        rows.dataset_words);
    prepared.train_examples = prepare::encode_examples(train_tokens, data->split.train.examples,
                                                       rows, config.train.max_len);
    prepared.valid_examples = prepare::encode_examples(valid_tokens, data->split.valid.examples,
                                                       rows, config.train.max_len);
    prepare::release_kept_data();

    info.steps_per_epoch = steps_per_epoch(info.train_examples, config.train.batch_size,
                                           config.train.accumulation, rendezvous.world_size);
    info.total_steps = config.train.max_steps > 0 ? config.train.max_steps
                                                  : info.steps_per_epoch * config.train.epochs;
    refuse_parameters_past_memory(config, info.profile, prepared.device);
    count_parameters(prepared);
    if (rendezvous.world_size > 1) {
        // Last: a mistake in the input fails on every rank alike, before any of them waits.
        if (info.train_examples < rendezvous.world_size) {
            throw BadInput("dataset.path: its " + std::to_string(info.train_examples) +
                               " training examples are fewer than the " +
                               std::to_string(rendezvous.world_size) +
                               " processes, and each needs a batch of its own; use at most " +
                               std::to_string(info.train_examples) +
                               " processes, or a larger dataset",
                           {"dataset.path"});
        }
        if (info.train_examples / config.train.batch_size < rendezvous.world_size) {
            throw BadInput(
                "train.batch_size=" + std::to_string(config.train.batch_size) + ": the " +
                    std::to_string(info.train_examples) + " training examples make " +
                    std::to_string(info.train_examples / config.train.batch_size) +
                    " full batches, fewer than the " + std::to_string(rendezvous.world_size) +
                    " processes (each needs one); use at most " +
                    std::to_string(info.train_examples / rendezvous.world_size),
                {"train.batch_size"});
        }
        report("joining the other processes", 0.95);
        prepared.group = std::make_shared<distributed::ProcessGroup>(
            rendezvous, config.distributed.backend, prepared.device,
            std::chrono::seconds(config.distributed.timeout_s), options.cancel);
    }
    report("ready", 1.0);
    return prepared;
}

}  // namespace oomlab::train
