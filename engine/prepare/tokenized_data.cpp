#include "oomlab/prepare/tokenized_data.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/data/tokenizer.h"
#include "oomlab/glove/variants.h"

namespace oomlab::prepare {
namespace {

// At most this much memory is kept between reads (the default dataset takes 6.6 MiB): a
// larger dataset is read again rather than held.
constexpr std::size_t kMaxKeptBytes = std::size_t{16} << 20;

TokenLists tokenize_all(const std::vector<Example>& examples, const TokenizerOptions& options) {
    TokenLists tokens(examples.size());
    for (std::size_t i = 0; i < examples.size(); ++i) {
        tokenize(examples[i].text, options, tokens[i]);
    }
    return tokens;
}

std::vector<std::string> distinct_words(const TokenLists& tokens) {
    std::vector<std::string> words;
    std::unordered_set<std::string> seen;
    for (const auto& list : tokens) {
        for (const auto& token : list) {
            if (seen.insert(token).second) {
                words.push_back(token);
            }
        }
    }
    return words;
}

// What the data read depends on: the settings, and the version of each file (the embedded
// default has none). A folder's files can change under an unchanged folder: never kept.
struct DataKey {
    DatasetSpec spec;
    bool cased = false;
    std::optional<FileStamp> train_file;
    std::optional<FileStamp> valid_file;

    bool operator==(const DataKey& other) const {
        return spec.path == other.spec.path && spec.valid_path == other.spec.valid_path &&
               spec.format == other.spec.format && spec.valid_ratio == other.spec.valid_ratio &&
               spec.seed == other.spec.seed && cased == other.cased &&
               train_file == other.train_file && valid_file == other.valid_file;
    }
};

// Whether `path` ("" for none or the default) can be kept, with its stamp in `stamp`.
bool keepable(const std::string& path, std::optional<FileStamp>& stamp) {
    if (path.empty()) {
        return true;
    }
    std::error_code error;
    return std::filesystem::is_regular_file(path, error) && (stamp = stamp_of(path));
}

std::size_t bytes_held(const TokenizedData& data) {
    std::size_t bytes = 0;
    for (const Dataset* part : {&data.split.train, &data.split.valid}) {
        for (const Example& example : part->examples) {
            bytes += sizeof example + example.text.capacity();
        }
    }
    for (const TokenLists* lists : {&data.train_tokens, &data.valid_tokens}) {
        for (const auto& list : *lists) {
            bytes += sizeof list + list.capacity() * sizeof(std::string);
            for (const std::string& token : list) {
                bytes += token.capacity() > 15 ? token.capacity() : 0;  // past the short string
            }
        }
    }
    return bytes + data.train_words.capacity() * sizeof(std::string);
}

std::shared_ptr<const TokenizedData> read_tokenized_data(const DatasetSpec& spec,
                                                         const TokenizerOptions& tokenizer) {
    auto data = std::make_shared<TokenizedData>();
    data->split = load_dataset(spec);
    if (data->split.train.examples.empty()) {
        throw BadInput("dataset.path: " + data->split.train.source + " holds no training examples");
    }
    if (data->split.train.label_names.size() < 2) {
        throw BadInput("dataset.path: " + data->split.train.source +
                       " has a single label; a classifier needs at least two");
    }
    data->train_tokens = tokenize_all(data->split.train.examples, tokenizer);
    data->valid_tokens = tokenize_all(data->split.valid.examples, tokenizer);
    data->train_words = distinct_words(data->train_tokens);
    return data;
}

std::mutex g_kept_mutex;
std::optional<DataKey> g_kept_key;
std::shared_ptr<const TokenizedData> g_kept;

}  // namespace

std::shared_ptr<const TokenizedData> load_tokenized_data(const ExperimentConfig& config) {
    DataKey key;
    key.spec = {config.dataset.path, config.dataset.valid_path, config.dataset.format,
                config.dataset.valid_ratio, config.train.seed};
    const GloveVariant* variant = find_glove_variant(config.embeddings.variant);
    key.cased = variant && variant->cased;
    const bool can_keep =
        keepable(key.spec.path, key.train_file) && keepable(key.spec.valid_path, key.valid_file);
    if (can_keep) {
        const std::lock_guard<std::mutex> lock(g_kept_mutex);
        if (g_kept_key == key) {
            return g_kept;
        }
    }
    std::shared_ptr<const TokenizedData> data =
        read_tokenized_data(key.spec, TokenizerOptions{key.cased});
    const std::lock_guard<std::mutex> lock(g_kept_mutex);
    if (can_keep && bytes_held(*data) <= kMaxKeptBytes) {
        g_kept_key = std::move(key);
        g_kept = data;
    } else {
        g_kept_key.reset();
        g_kept.reset();  // a larger dataset's read frees the one kept before
    }
    return data;
}

void release_kept_data() {
    const std::lock_guard<std::mutex> lock(g_kept_mutex);
    g_kept_key.reset();
    g_kept.reset();
}

}  // namespace oomlab::prepare
