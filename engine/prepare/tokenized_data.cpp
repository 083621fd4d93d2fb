#include "oomlab/prepare/tokenized_data.h"

#include <unordered_set>

#include "oomlab/common/errors.h"
#include "oomlab/data/tokenizer.h"
#include "oomlab/glove/variants.h"

namespace oomlab::prepare {
namespace {

TokenLists tokenize_all(const std::vector<Example>& examples, const TokenizerOptions& options) {
    TokenLists tokens(examples.size());
    for (std::size_t i = 0; i < examples.size(); ++i) {
        tokenize(examples[i].text, options, tokens[i]);
    }
    return tokens;
}

}  // namespace

TokenizedData load_tokenized_data(const ExperimentConfig& config) {
    const DatasetSpec spec{config.dataset.path, config.dataset.valid_path, config.dataset.format,
                           config.dataset.valid_ratio, config.train.seed};
    TokenizedData data{load_dataset(spec), {}, {}};
    if (data.split.train.examples.empty()) {
        throw BadInput("dataset.path: " + data.split.train.source + " holds no training examples");
    }
    if (data.split.train.label_names.size() < 2) {
        throw BadInput("dataset.path: " + data.split.train.source +
                       " has a single label; a classifier needs at least two");
    }
    const GloveVariant* variant = find_glove_variant(config.embeddings.variant);
    const TokenizerOptions tokenizer{variant && variant->cased};
    data.train_tokens = tokenize_all(data.split.train.examples, tokenizer);
    data.valid_tokens = tokenize_all(data.split.valid.examples, tokenizer);
    return data;
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

}  // namespace oomlab::prepare
