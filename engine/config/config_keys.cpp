#include "oomlab/config/config_keys.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <type_traits>
#include <utility>

#include "choice_tables.h"
#include "oomlab/allocator/allocator_settings.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"
#include "oomlab/config/snapshot_paths.h"
#include "oomlab/config/value_parsing.h"
#include "oomlab/glove/variants.h"

namespace oomlab {
namespace {

using namespace config_detail;

struct KeyEntry {
    ConfigKeyInfo info;
    std::function<std::string(const ExperimentConfig&)> get;
    std::function<void(ExperimentConfig&, std::string_view)> set;
};

// Each builder takes an accessor lambda returning a reference to the field.
template <typename Access>
KeyEntry integer_key(std::string name, Access access, double minimum, double maximum,
                     std::string help) {
    // No key is unbounded: at most what its field holds, so a huge value is an error, never
    // a value that wraps around.
    using Field = std::decay_t<decltype(access(std::declval<ExperimentConfig&>()))>;
    const double field_max = static_cast<double>(std::numeric_limits<Field>::max() >> 1);
    maximum = maximum > minimum ? std::min(maximum, field_max) : field_max;
    KeyEntry entry{{name, ValueKind::Integer, {}, minimum, maximum, std::move(help)}, {}, {}};
    entry.get = [access](const ExperimentConfig& c) {
        return std::to_string(access(const_cast<ExperimentConfig&>(c)));
    };
    entry.set = [access, name, minimum, maximum](ExperimentConfig& c, std::string_view text) {
        auto& field = access(c);
        field =
            static_cast<std::decay_t<decltype(field)>>(parse_integer(name, text, minimum, maximum));
    };
    return entry;
}

template <typename Access>
KeyEntry real_key(std::string name, Access access, double minimum, double maximum,
                  std::string help) {
    KeyEntry entry{{name, ValueKind::Real, {}, minimum, maximum, std::move(help)}, {}, {}};
    entry.get = [access](const ExperimentConfig& c) {
        return format_real(access(const_cast<ExperimentConfig&>(c)));
    };
    entry.set = [access, name, minimum, maximum](ExperimentConfig& c, std::string_view text) {
        access(c) = parse_real(name, text, minimum, maximum);
    };
    return entry;
}

template <typename Access>
KeyEntry boolean_key(std::string name, Access access, std::string help) {
    KeyEntry entry{{name, ValueKind::Boolean, {"true", "false"}, 0, 0, std::move(help)}, {}, {}};
    entry.get = [access](const ExperimentConfig& c) {
        return std::string(access(const_cast<ExperimentConfig&>(c)) ? "true" : "false");
    };
    entry.set = [access, name](ExperimentConfig& c, std::string_view text) {
        access(c) = parse_boolean(name, text);
    };
    return entry;
}

// `check`, when given, refuses text the key cannot use (throws BadInput naming the key).
template <typename Access>
KeyEntry text_key(std::string name, Access access, std::string help,
                  void (*check)(std::string_view key, std::string_view text) = nullptr) {
    KeyEntry entry{{name, ValueKind::Text, {}, 0, 0, std::move(help)}, {}, {}};
    entry.get = [access](const ExperimentConfig& c) {
        return access(const_cast<ExperimentConfig&>(c));
    };
    entry.set = [access, name, check](ExperimentConfig& c, std::string_view text) {
        // Saved as JSON with every run: it must be text, not arbitrary bytes.
        require_utf8(text, name, "rename the file or folder to a UTF-8 name");
        if (check != nullptr) {
            check(name, text);
        }
        access(c) = text;
    };
    return entry;
}

template <typename Enum, typename Access>
KeyEntry choice_key(std::string name, Access access, const ChoiceTable<Enum>& table,
                    std::string help) {
    std::vector<std::string> names;
    for (const auto& item : table) {
        names.emplace_back(item.name);
    }
    KeyEntry entry{{name, ValueKind::Choice, names, 0, 0, std::move(help)}, {}, {}};
    entry.get = [access, &table](const ExperimentConfig& c) {
        return std::string(choice_name(access(const_cast<ExperimentConfig&>(c)), table));
    };
    entry.set = [access, name, &table](ExperimentConfig& c, std::string_view text) {
        access(c) = parse_choice(name, text, table);
    };
    return entry;
}

// Refuses a PYTORCH_CUDA_ALLOC_CONF the allocator would not read, naming the key.
void check_alloc_conf(std::string_view key, std::string_view text) {
    try {
        allocator::parse_alloc_conf(text);
    } catch (const BadInput& error) {
        throw BadInput(std::string(key) + ": " + error.what());
    }
}

KeyEntry vocab_key() {
    KeyEntry entry{{"embeddings.vocab",
                    ValueKind::Choice,
                    {"full", "dataset", "top:N"},
                    0,
                    0,
                    "Rows of the embedding table: every GloVe word, only the words of the "
                    "dataset, or the N most frequent GloVe words. The table is often the "
                    "largest tensor of the model."},
                   {},
                   {}};
    entry.get = [](const ExperimentConfig& c) -> std::string {
        switch (c.embeddings.vocab) {
            case VocabMode::Full:
                return "full";
            case VocabMode::Dataset:
                return "dataset";
            case VocabMode::Top:
                return "top:" + std::to_string(c.embeddings.top_n);
        }
        return "?";
    };
    entry.set = [](ExperimentConfig& c, std::string_view text) {
        if (text == "full" || text == "dataset") {
            c.embeddings.vocab = text == "full" ? VocabMode::Full : VocabMode::Dataset;
            return;
        }
        if (text.substr(0, 4) != "top:") {
            throw_bad_choice("embeddings.vocab", text, {"full", "dataset", "top:N (N >= 1)"});
        }
        c.embeddings.top_n = parse_integer("embeddings.vocab", text.substr(4), 1, 0);
        c.embeddings.vocab = VocabMode::Top;
    };
    return entry;
}

KeyEntry dataset_format_key() {
    KeyEntry entry{{"dataset.format",
                    ValueKind::Choice,
                    {},
                    0,
                    0,
                    "On-disk format of the dataset; auto detects it from the content."},
                   {},
                   {}};
    for (DatasetFormat format :
         {DatasetFormat::Auto, DatasetFormat::LabelTabText, DatasetFormat::TextTabLabel,
          DatasetFormat::LabelSpaceText, DatasetFormat::Csv, DatasetFormat::FastText,
          DatasetFormat::Folder, DatasetFormat::JsonLines, DatasetFormat::Fortunes}) {
        entry.info.choices.emplace_back(dataset_format_name(format));
    }
    entry.get = [](const ExperimentConfig& c) {
        return std::string(dataset_format_name(c.dataset.format));
    };
    entry.set = [choices = entry.info.choices](ExperimentConfig& c, std::string_view text) {
        const auto format = parse_dataset_format(text);
        if (!format) {
            throw_bad_choice("dataset.format", text, choices);
        }
        c.dataset.format = *format;
    };
    return entry;
}

KeyEntry variant_key() {
    KeyEntry entry{{"embeddings.variant",
                    ValueKind::Choice,
                    {},
                    0,
                    0,
                    "The GloVe variant: its shape for synthetic vectors, and whether its "
                    "words keep case."},
                   {},
                   {}};
    for (const auto& variant : glove_variants()) {
        entry.info.choices.push_back(variant.name);
    }
    entry.get = [](const ExperimentConfig& c) { return c.embeddings.variant; };
    entry.set = [choices = entry.info.choices](ExperimentConfig& c, std::string_view text) {
        if (!find_glove_variant(text)) {
            throw_bad_choice("embeddings.variant", text, choices);
        }
        c.embeddings.variant = text;
    };
    return entry;
}

constexpr double kNoMax = 0;
constexpr double kMaxCapMiB = 1 << 24;  // 16 TiB: beyond any device

std::vector<KeyEntry> build_registry() {
    using C = ExperimentConfig;
    std::vector<KeyEntry> keys;
    keys.push_back(text_key(
        "dataset.path", [](C & c) -> auto& { return c.dataset.path; },
        "Training data: a file or a folder of class folders. Empty: the "
        "embedded default dataset."));
    keys.push_back(text_key(
        "dataset.valid_path", [](C & c) -> auto& { return c.dataset.valid_path; },
        "Validation data. Empty: split dataset.valid_ratio off the "
        "training data."));
    keys.push_back(dataset_format_key());
    keys.push_back(real_key(
        "dataset.valid_ratio", [](C & c) -> auto& { return c.dataset.valid_ratio; }, 0, 0.9,
        "Fraction of the training data held out for validation "
        "when no validation data is given (seeded)."));
    keys.push_back(choice_key(
        "embeddings.source", [](C & c) -> auto& { return c.embeddings.source; }, kEmbeddingSources,
        "default: a GloVe file of the variant if one is installed, else "
        "synthetic vectors; file: embeddings.path; synthetic: seeded "
        "vectors of the variant's exact shape."));
    keys.push_back(text_key(
        "embeddings.path", [](C & c) -> auto& { return c.embeddings.path; },
        "A GloVe or word2vec text file (or its binary cache)."));
    keys.push_back(variant_key());
    keys.push_back(vocab_key());
    keys.push_back(boolean_key(
        "embeddings.trainable", [](C & c) -> auto& { return c.embeddings.trainable; },
        "Fine-tune the embedding table. Frozen tables need no gradient "
        "and no optimizer state: with Adam that saves 3x the table."));
    keys.push_back(choice_key(
        "embeddings.placement", [](C & c) -> auto& { return c.embeddings.placement; }, kPlacements,
        "Keep the table on the training device, or on the host and ship "
        "only the rows a batch looks up."));
    keys.push_back(choice_key(
        "embeddings.dtype", [](C & c) -> auto& { return c.embeddings.dtype; }, kTableDTypes,
        "Storage type of the embedding table: 16-bit halves it; int8 (a scale per row, "
        "frozen tables only) takes a quarter."));
    keys.push_back(boolean_key(
        "embeddings.sparse_grad", [](C & c) -> auto& { return c.embeddings.sparse_grad; },
        "Sparse gradients for the table: only the rows a batch used, "
        "instead of a dense gradient the size of the table."));
    keys.push_back(choice_key(
        "model.kind", [](C & c) -> auto& { return c.model.kind; }, kModelKinds,
        "bag: mean of the word vectors and an MLP; bilstm: a bidirectional "
        "LSTM; transformer: an encoder over projected embeddings."));
    keys.push_back(integer_key(
        "model.hidden", [](C & c) -> auto& { return c.model.hidden; }, 1, 65536,
        "Hidden width: the MLP (bag) or the LSTM state per direction."));
    keys.push_back(integer_key(
        "model.layers", [](C & c) -> auto& { return c.model.layers; }, 1, 64,
        "LSTM or encoder layers. Activations grow with every layer."));
    keys.push_back(integer_key(
        "model.heads", [](C & c) -> auto& { return c.model.heads; }, 1, 256,
        "Attention heads; the attention maps grow with heads x length^2."));
    keys.push_back(integer_key(
        "model.d_model", [](C & c) -> auto& { return c.model.d_model; }, 1, 65536,
        "Transformer width; embeddings are projected to it."));
    keys.push_back(integer_key(
        "model.ffn", [](C & c) -> auto& { return c.model.ffn; }, 1, 262144,
        "Transformer feed-forward width."));
    keys.push_back(real_key(
        "model.dropout", [](C & c) -> auto& { return c.model.dropout; }, 0, 0.95,
        "Dropout probability (its masks are saved for backward)."));
    keys.push_back(integer_key(
        "train.epochs", [](C & c) -> auto& { return c.train.epochs; }, 1, 100000,
        "Passes over the training data (unless train.max_steps is set)."));
    keys.push_back(integer_key(
        "train.max_steps", [](C & c) -> auto& { return c.train.max_steps; }, 0, kNoMax,
        "Stop after this many optimizer steps; 0: run train.epochs."));
    keys.push_back(integer_key(
        "train.batch_size", [](C & c) -> auto& { return c.train.batch_size; }, 1, 1 << 20,
        "Examples per micro-batch. Activation memory grows linearly "
        "with it."));
    keys.push_back(integer_key(
        "train.accumulation", [](C & c) -> auto& { return c.train.accumulation; }, 1, 4096,
        "Micro-batches per optimizer step: the same effective batch with "
        "a fraction of the activation memory."));
    keys.push_back(integer_key(
        "train.max_len", [](C & c) -> auto& { return c.train.max_len; }, 1, 1 << 20,
        "Tokens kept per example; longer texts are cut."));
    keys.push_back(choice_key(
        "train.padding", [](C & c) -> auto& { return c.train.padding; }, kPaddings,
        "Pad every batch to max_len (fixed), to its longest example "
        "(dynamic), or batch examples of similar length (bucket)."));
    keys.push_back(choice_key(
        "train.optimizer", [](C & c) -> auto& { return c.train.optimizer; }, kOptimizers,
        "Optimizer state: none for sgd, one copy of the trainable "
        "parameters for momentum and adagrad, two for adam and adamw."));
    keys.push_back(real_key(
        "train.lr", [](C & c) -> auto& { return c.train.lr; }, 0, 10, "Learning rate."));
    keys.push_back(integer_key(
        "train.seed", [](C & c) -> auto& { return c.train.seed; }, 0, kNoMax,
        "Seed for initialisation, shuffling and the split: the same seed "
        "gives the same run."));
    keys.push_back(choice_key(
        "memory.precision", [](C & c) -> auto& { return c.memory.precision; }, kPrecisions,
        "Autocast: 16-bit activations where safe. fp16 uses dynamic loss "
        "scaling (CUDA only); bf16 needs none."));
    keys.push_back(choice_key(
        "memory.checkpointing", [](C & c) -> auto& { return c.memory.checkpointing; },
        kCheckpointing,
        "Recompute each encoder block in backward instead of keeping its "
        "activations: less memory for about a third more compute."));
    keys.push_back(choice_key(
        "memory.empty_cache", [](C & c) -> auto& { return c.memory.empty_cache; }, kEmptyCache,
        "Return the allocator's cached blocks to the device after every "
        "step or evaluation: reserved drops to allocated, at a cost."));
    keys.push_back(integer_key(
        "memory.cap_mb", [](C & c) -> auto& { return c.memory.cap_mb; }, 0, kMaxCapMiB,
        "Simulate a smaller device: allocations beyond this many MiB "
        "fail with out-of-memory. 0: no cap."));
    keys.push_back(text_key(
        "memory.alloc_conf", [](C & c) -> auto& { return c.memory.alloc_conf; },
        "PyTorch's caching allocator, in PYTORCH_CUDA_ALLOC_CONF's syntax "
        "(expandable_segments:True,max_split_size_mb:128). CUDA: set before the allocator "
        "starts. CPU: the allocator is modelled, so memory is reserved in segments, cached "
        "and fragmented as on a GPU, and memory.cap_mb caps what it reserves; "
        "backend:native models the default. Empty: CUDA's defaults; on the CPU tensor bytes "
        "only.",
        check_alloc_conf));
    keys.push_back(choice_key(
        "memory.on_oom", [](C & c) -> auto& { return c.memory.on_oom; }, kOnOom,
        "On out-of-memory: stop; halve the batch and retry; or halve the "
        "micro-batch and double accumulation (same effective batch)."));
    keys.push_back(choice_key(
        "data.loading", [](C & c) -> auto& { return c.data.loading; }, kLoadings,
        "eager: the whole encoded dataset resident on the device; "
        "streaming: batches prepared by a background thread."));
    keys.push_back(boolean_key(
        "data.pin_memory", [](C & c) -> auto& { return c.data.pin_memory; },
        "Pinned host buffers for faster, asynchronous copies (CUDA)."));
    keys.push_back(integer_key(
        "eval.every", [](C & c) -> auto& { return c.eval.every; }, 0, kNoMax,
        "Validate every N optimizer steps; 0: at the end of each epoch."));
    keys.push_back(boolean_key(
        "eval.no_grad", [](C & c) -> auto& { return c.eval.no_grad; },
        "Evaluate without autograd. Off shows the classic mistake: "
        "evaluation keeps activations for a backward that never comes."));
    keys.push_back(boolean_key(
        "debug.keep_loss_graph", [](C & c) -> auto& { return c.debug.keep_loss_graph; },
        "The classic leak: sum the loss tensors with their graphs instead "
        "of their values (and retain graphs so backward still runs), so "
        "every step's activations stay alive."));
    keys.push_back(text_key(
        "debug.memory_snapshot", [](C & c) -> auto& { return c.debug.memory_snapshot; },
        "Write the allocator's history, each allocation tagged with its "
        "category, to this file at the end of the run; open it at "
        "pytorch.org/memory_viz. {run} in the name becomes the run's id, {rank} "
        "the process's rank (several processes without {rank}: .rank<r> is added, "
        "a sweep or lesson without {run}: .run<id>). Empty: none.",
        check_snapshot_placeholders));
    keys.push_back(choice_key(
        "distributed.backend", [](C & c) -> auto& { return c.distributed.backend; },
        kDistributedBackends,
        "How the processes of a data-parallel run talk (torch.distributed): auto picks NCCL "
        "on CUDA and Gloo on the CPU."));
    keys.push_back(choice_key(
        "distributed.shard", [](C & c) -> auto& { return c.distributed.shard; }, kShardModes,
        "ZeRO: each of N processes keeps the optimizer state (optimizer), also the "
        "gradients (gradients), or also the parameters themselves (parameters, gathered for "
        "each part's forward and backward and freed after) of only 1/N of the parameters."));
    keys.push_back(integer_key(
        "distributed.bucket_mb", [](C & c) -> auto& { return c.distributed.bucket_mb; }, 0, 4096,
        "MiB of gradients summed across the processes in one collective (DDP's "
        "bucket_cap_mb): bigger buckets mean fewer, larger transfers, and with "
        "distributed.shard=gradients or parameters more full gradients waiting for their sum "
        "before each "
        "process keeps its 1/N; 0 sums each gradient on its own."));
    keys.push_back(integer_key(
        "distributed.timeout_s", [](C & c) -> auto& { return c.distributed.timeout_s; }, 1, 3600,
        "Seconds a process waits in a collective for the others; one that stopped or died ends "
        "the run on every process after at most this long."));
    keys.push_back(text_key(
        "device", [](C & c) -> auto& { return c.device; },
        "auto (CUDA when available), cpu, cuda or cuda:N."));
    return keys;
}

const std::vector<KeyEntry>& registry() {
    static const std::vector<KeyEntry> keys = build_registry();
    return keys;
}

const KeyEntry& entry_or_throw(std::string_view key) {
    for (const auto& entry : registry()) {
        if (entry.info.name == key) {
            return entry;
        }
    }
    throw BadInput("unknown config key \"" + std::string(key) + "\"; did you mean \"" +
                   closest_config_key(key) + "\"?");
}

}  // namespace

const std::vector<ConfigKeyInfo>& config_keys() {
    static const std::vector<ConfigKeyInfo> infos = [] {
        std::vector<ConfigKeyInfo> result;
        for (const auto& entry : registry()) {
            result.push_back(entry.info);
        }
        return result;
    }();
    return infos;
}

const ConfigKeyInfo* find_config_key(std::string_view name) {
    for (const auto& info : config_keys()) {
        if (info.name == name) {
            return &info;
        }
    }
    return nullptr;
}

std::string closest_config_key(std::string_view name) {
    std::string best;
    std::size_t best_distance = std::numeric_limits<std::size_t>::max();
    for (const auto& info : config_keys()) {
        // A bare field name ("batch_size") should find its section ("train.batch_size").
        const std::string_view field = std::string_view(info.name).substr(info.name.find('.') + 1);
        const std::size_t distance =
            std::min(edit_distance(name, info.name), edit_distance(name, field) + 1);
        if (distance < best_distance) {
            best_distance = distance;
            best = info.name;
        }
    }
    return best;
}

std::string get_config_value(const ExperimentConfig& config, std::string_view key) {
    return entry_or_throw(key).get(config);
}

void set_config_value(ExperimentConfig& config, std::string_view key, std::string_view value) {
    entry_or_throw(key).set(config, value);
}

void apply_settings(ExperimentConfig& config, const Settings& settings) {
    for (const auto& [key, value] : settings) {
        set_config_value(config, key, value);
    }
}

void apply_config_override(ExperimentConfig& config, std::string_view assignment) {
    const std::size_t equals = assignment.find('=');
    if (equals == std::string_view::npos || equals == 0) {
        throw BadInput("--set \"" + std::string(assignment) +
                       "\": expected KEY=VALUE, e.g. train.batch_size=64");
    }
    set_config_value(config, assignment.substr(0, equals), assignment.substr(equals + 1));
}

}  // namespace oomlab
