#include "label_mapping.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "oomlab/common/errors.h"

namespace oomlab::data_detail {
namespace {

std::optional<long long> integer_value(const std::string& label) {
    long long value = 0;
    const char* end = label.data() + label.size();
    const auto [stop, error] = std::from_chars(label.data(), end, value);
    if (error != std::errc() || stop != end || label.empty()) {
        return std::nullopt;
    }
    return value;
}

}  // namespace

LabelIds::LabelIds(const std::vector<RawExample>& examples) {
    const std::set<std::string> distinct = [&] {
        std::set<std::string> labels;
        for (const RawExample& example : examples) {
            labels.insert(example.label);
        }
        return labels;
    }();
    m_names.assign(distinct.begin(), distinct.end());  // sorted by name
    const bool all_integers = std::all_of(m_names.begin(), m_names.end(), [](const auto& name) {
        return integer_value(name).has_value();
    });
    if (all_integers) {
        // "10" after "9"; "01" and "1" are distinct names, kept apart by spelling.
        std::stable_sort(m_names.begin(), m_names.end(), [](const auto& a, const auto& b) {
            return *integer_value(a) < *integer_value(b);
        });
    }
    for (std::size_t id = 0; id < m_names.size(); ++id) {
        m_ids.emplace(m_names[id], static_cast<std::int32_t>(id));
    }
}

std::optional<std::int32_t> LabelIds::id(const std::string& name) const {
    const auto found = m_ids.find(name);
    if (found == m_ids.end()) {
        return std::nullopt;
    }
    return found->second;
}

std::vector<Example> map_labels(std::vector<RawExample> raw, const LabelIds& ids,
                                const std::string& path, const std::string& known_from) {
    std::vector<Example> examples;
    examples.reserve(raw.size());
    for (RawExample& example : raw) {
        const std::optional<std::int32_t> id = ids.id(example.label);
        if (!id) {
            throw bad_input_at(path, 0,
                               "label \"" + example.label +
                                   "\" does not occur in the training data (" + known_from +
                                   "); the validation data may only use the training labels");
        }
        examples.push_back(Example{std::move(example.text), *id});
    }
    return examples;
}

}  // namespace oomlab::data_detail
