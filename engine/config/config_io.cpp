#include "oomlab/config/config_io.h"

#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "oomlab/common/atomic_file.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/json_locate.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/glove/variants.h"

namespace oomlab {
namespace {

using Json = nlohmann::json;

std::string type_name_for(ValueKind kind) {
    switch (kind) {
        case ValueKind::Integer:
            return "an integer";
        case ValueKind::Real:
            return "a number";
        case ValueKind::Boolean:
            return "true or false";
        default:
            return "a string";
    }
}

// A JSON scalar as the text set_config_value() takes, checking its JSON type.
std::string scalar_text(const std::string& source, const std::string& key, const Json& value) {
    const ConfigKeyInfo* info = find_config_key(key);
    if (!info) {
        throw BadInput(source + ": unknown config key \"" + key + "\"; did you mean \"" +
                       closest_config_key(key) + "\"?");
    }
    const bool type_ok = [&] {
        switch (info->kind) {
            case ValueKind::Integer:
                return value.is_number_integer();
            case ValueKind::Real:
                return value.is_number();
            case ValueKind::Boolean:
                return value.is_boolean();
            default:
                return value.is_string();
        }
    }();
    if (!type_ok) {
        throw BadInput(source + ": " + key + ": expected " + type_name_for(info->kind) + ", got " +
                       value.dump());
    }
    return value.is_string() ? value.get<std::string>() : value.dump();
}

// `seen`: the dotted keys set so far, so that a key given nested and flat
// ({"train": {"max_steps": 3}, "train.max_steps": 4}) is refused as one given twice.
void apply_json(ExperimentConfig& config, const Json& object, const std::string& prefix,
                const std::string& source, const std::string& text, std::set<std::string>& seen) {
    for (const auto& [name, value] : object.items()) {
        const std::string key = prefix.empty() ? name : prefix + "." + name;
        if (value.is_object()) {
            apply_json(config, value, key, source, text, seen);
            continue;
        }
        if (!seen.insert(key).second) {
            throw bad_input_at(source, json_line_of(text, key),
                               "the key \"" + key +
                                   "\" is given twice, nested and as a dotted name; keep one "
                                   "(which one is meant cannot be told)");
        }
        try {
            set_config_value(config, key, scalar_text(source, key, value));
        } catch (const BadInput& error) {
            std::string message = error.what();
            if (message.rfind(source + ": ", 0) == 0) {
                message.erase(0, source.size() + 2);
            }
            throw bad_input_at(source, json_line_of(text, key), message);
        }
    }
}

}  // namespace

void merge_config_json(ExperimentConfig& config, const std::string& json_text,
                       const std::string& source) {
    const Json document = parse_json_document<Json>(json_text, source);
    if (!document.is_object()) {
        throw bad_input_at(source, 1, "a config must be a JSON object of keys");
    }
    std::set<std::string> seen;
    apply_json(config, document, "", source, json_text, seen);
}

ExperimentConfig parse_config_json(const std::string& json_text, const std::string& source) {
    ExperimentConfig config;
    merge_config_json(config, json_text, source);
    return config;
}

ExperimentConfig load_config_file(const std::string& path) {
    constexpr std::uint64_t kMaxConfigBytes = 16 << 20;
    return parse_config_json(read_text_input(path, "config file", kMaxConfigBytes), path);
}

std::string config_to_json(const ExperimentConfig& config, int indent) {
    Json document = Json::object();
    for (const auto& info : config_keys()) {
        const std::string text = get_config_value(config, info.name);
        Json value;
        switch (info.kind) {
            case ValueKind::Integer:
                value = std::stoll(text);
                break;
            case ValueKind::Real:
                // strtod, not stod: a value as small as 1e-320 is valid and must not throw.
                value = std::strtod(text.c_str(), nullptr);
                break;
            case ValueKind::Boolean:
                value = text == "true";
                break;
            default:
                value = text;
                break;
        }
        const std::size_t dot = info.name.find('.');
        if (dot == std::string::npos) {
            document[info.name] = value;
        } else {
            document[info.name.substr(0, dot)][info.name.substr(dot + 1)] = value;
        }
    }
    return document.dump(indent, ' ', false, Json::error_handler_t::replace);
}

void save_config_file(const ExperimentConfig& config, const std::string& path) {
    const std::string text = config_to_json(config) + "\n";
    AtomicFile file(path);
    file.write_at(0, text.data(), text.size());
    file.commit(text.size());
}

std::vector<std::pair<std::string, std::string>> config_input_problems(
    const ExperimentConfig& config) {
    std::vector<std::pair<std::string, std::string>> problems;
    const auto check = [&](const char* key, const std::string& path, PathKind kind) {
        if (path.empty()) {
            return;
        }
        try {
            check_input_path(path, key, kind);
        } catch (const BadInput& error) {
            problems.emplace_back(key, error.what());
        }
    };
    check("dataset.path", config.dataset.path, PathKind::FileOrFolder);
    check("dataset.valid_path", config.dataset.valid_path, PathKind::FileOrFolder);
    if (config.embeddings.source == EmbeddingSource::File) {
        check("embeddings.path", config.embeddings.path, PathKind::File);
    }
    return problems;
}

void validate_config(const ExperimentConfig& config) {
    const auto fail = [](const std::string& message, std::vector<std::string> keys) {
        throw BadInput(message, std::move(keys));
    };
    if (config.embeddings.source == EmbeddingSource::File && config.embeddings.path.empty()) {
        fail("embeddings.source=file needs embeddings.path (a GloVe .txt file)",
             {"embeddings.source", "embeddings.path"});
    }
    if (config.model.kind == ModelKind::Transformer && config.model.d_model % config.model.heads) {
        fail("model.d_model (" + std::to_string(config.model.d_model) +
                 ") must be divisible by model.heads (" + std::to_string(config.model.heads) + ")",
             {"model.d_model", "model.heads"});
    }
    if (config.embeddings.sparse_grad && !config.embeddings.trainable) {
        fail(
            "embeddings.sparse_grad=true needs embeddings.trainable=true (a frozen table has "
            "no gradient)",
            {"embeddings.sparse_grad", "embeddings.trainable"});
    }
    if (config.embeddings.dtype == DType::Int8 && config.embeddings.trainable) {
        // A trained int8 table would need a higher-precision copy to take the updates, which
        // holds more than the fp32 table it was meant to shrink.
        fail(
            "embeddings.dtype=int8 stores a frozen table: set embeddings.trainable=false, or "
            "fine-tune a 16-bit table with embeddings.dtype=bf16",
            {"embeddings.dtype", "embeddings.trainable"});
    }
    if (config.embeddings.sparse_grad && config.train.optimizer != OptimizerKind::Sgd &&
        config.train.optimizer != OptimizerKind::Adagrad) {
        fail(
            "embeddings.sparse_grad=true works with train.optimizer=sgd or adagrad; "
            "adam, adamw and momentum keep dense state for every row",
            {"embeddings.sparse_grad", "train.optimizer"});
    }
    const std::string& device = config.device;
    const bool cuda_index = device.size() > 5 && device.compare(0, 5, "cuda:") == 0 &&
                            device.size() <= 8 &&
                            device.find_first_not_of("0123456789", 5) == std::string::npos;
    if (device != "auto" && device != "cpu" && device != "cuda" && !cuda_index) {
        fail("device: \"" + config.device + "\" is not valid; expected auto, cpu, cuda or cuda:N",
             {"device"});
    }
}

void validate_data_parallel(const ExperimentConfig& config, int world_size, bool on_cuda) {
    if (world_size <= 1) {
        return;
    }
    if (config.embeddings.sparse_grad && config.embeddings.trainable) {
        throw BadInput(
            "embeddings.sparse_grad=true with several processes: the gradient "
            "all-reduce needs dense gradients; set it to false",
            {"embeddings.sparse_grad"});
    }
    if (config.distributed.shard != ShardMode::None && config.memory.precision == DType::Fp16) {
        throw BadInput(
            "distributed.shard with memory.precision=fp16: the loss scaler would "
            "check only this process's share for overflow; use bf16, or shard=none",
            {"distributed.shard", "memory.precision"});
    }
    if (on_cuda && config.embeddings.placement == EmbeddingPlacement::Cpu) {
        throw BadInput(
            "embeddings.placement=cpu with several processes on CUDA: the gradient "
            "buckets must be on one device; use placement=device",
            {"embeddings.placement"});
    }
}

}  // namespace oomlab
