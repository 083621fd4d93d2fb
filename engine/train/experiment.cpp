// Experiment::prepare: everything that can fail because of the user's input happens here,
// before a run exists.
#include <torch/nn.h>

#include <filesystem>

#include "../model/text_classifier.h"
#if OOMLAB_WITH_CUDA
#include "../memory/cuda_memory.h"
#endif
#include "experiment_impl.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/glove/variants.h"
#include "tokenized_data.h"
#include "vector_source.h"

namespace oomlab {
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
        throw BadInput("memory.precision=fp16 needs a CUDA device: LibTorch has no fp16 autocast "
                       "or grad scaling on the CPU. Use memory.precision=bf16 on the CPU.");
    }
    if (config.embeddings.dtype == DType::Fp16 && config.embeddings.trainable) {
        throw BadInput("embeddings.dtype=fp16 with embeddings.trainable=true needs a CUDA device: "
                       "LibTorch's CPU kernels cannot update fp16 tensors. Use "
                       "embeddings.dtype=bf16, or freeze the table.");
    }
}

// The snapshot is written at the end of the run; a folder that is not there should fail now,
// not after the training it was meant to record.
void check_snapshot_path(const std::string& path) {
    if (path.empty()) {
        return;
    }
    namespace fs = std::filesystem;
    const fs::path file(path);
    const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
    std::error_code error;
    if (fs::is_directory(file, error)) {
        throw BadInput("debug.memory_snapshot: \"" + path +
                       "\" is a folder; give a file name such as snapshot.pickle");
    }
    if (!fs::is_directory(folder, error)) {
        throw BadInput("debug.memory_snapshot: the folder \"" + folder.string() +
                       "\" does not exist; create it or choose another file");
    }
}

// Parameter counts without building a second copy of a large table.
void count_parameters(Experiment::Impl& impl) {
    const torch::Tensor tiny_table = torch::zeros({2, impl.initial_embeddings.size(1)});
    const auto model = model::make_classifier(impl.config, tiny_table, impl.num_classes);
    std::int64_t others = 0;
    std::int64_t trainable_others = 0;
    for (const auto& parameter : model->parameters()) {
        others += parameter.numel();
        trainable_others += parameter.requires_grad() ? parameter.numel() : 0;
    }
    const std::int64_t tiny = tiny_table.numel();
    const std::int64_t table = impl.initial_embeddings.numel();
    impl.info.parameters = others - tiny + table;
    impl.info.trainable_parameters =
        trainable_others - (impl.config.embeddings.trainable ? tiny - table : 0);
}

}  // namespace

Experiment::Experiment(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
Experiment::~Experiment() = default;
Experiment::Experiment(Experiment&&) noexcept = default;
Experiment& Experiment::operator=(Experiment&&) noexcept = default;

const ExperimentConfig& Experiment::config() const { return m_impl->config; }
const ExperimentInfo& Experiment::info() const { return m_impl->info; }

Experiment Experiment::prepare(const ExperimentConfig& config, const PrepareOptions& options) {
    const auto report = [&](const std::string& stage, double fraction) {
        if (options.progress) {
            options.progress(stage, fraction);
        }
    };
    validate_config(config);
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    impl->device = train::resolve_device(config.device);
    check_device_support(config, impl->device);
    check_snapshot_path(config.debug.memory_snapshot);
    ExperimentInfo& info = impl->info;
    info.device = train::describe_device(impl->device);

    report("dataset", 0.0);
    const train::TokenizedData data = train::load_tokenized_data(config);
    info.dataset = data.split.train.source;
    info.train_examples = static_cast<std::int64_t>(data.split.train.examples.size());
    info.valid_examples = static_cast<std::int64_t>(data.split.valid.examples.size());
    info.label_names = data.split.train.label_names;
    impl->num_classes = static_cast<int>(info.label_names.size());
    const train::TokenLists& train_tokens = data.train_tokens;
    const train::TokenLists& valid_tokens = data.valid_tokens;

    report("embeddings", 0.1);
    GloveLoadOptions load_options;
    load_options.progress = [&](double fraction) { report("embeddings", 0.1 + 0.8 * fraction); };
    const train::LoadedVectors vectors = train::load_vectors(
        config.embeddings, train::distinct_words(train_tokens), config.train.seed, load_options);
    info.embeddings = vectors.description;

    const train::EmbeddingRows rows = train::build_embedding_rows(
        config.embeddings, vectors.table, train_tokens, config.train.seed,
        [&](std::int64_t count, int dim) {
            impl->initial_embeddings = torch::empty({count, dim}, torch::kFloat32);
            return impl->initial_embeddings.data_ptr<float>();
        });
    info.vocab_size = rows.rows;
    info.embedding_dim = rows.dim;
    info.vectors_found = rows.vectors_found;
    info.dataset_words = rows.dataset_words;
    impl->train_examples =
        train::encode_examples(train_tokens, data.split.train.examples, rows,
                                config.train.max_len);
    impl->valid_examples =
        train::encode_examples(valid_tokens, data.split.valid.examples, rows,
                                config.train.max_len);

    info.steps_per_epoch = train::steps_per_epoch(info.train_examples, config.train.batch_size,
                                                  config.train.accumulation);
    info.total_steps = config.train.max_steps > 0 ? config.train.max_steps
                                                  : info.steps_per_epoch * config.train.epochs;
    count_parameters(*impl);
    report("ready", 1.0);
    return Experiment(std::move(impl));
}

}  // namespace oomlab
