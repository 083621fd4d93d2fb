// Raw label strings -> contiguous ids (internal to oomlab_data).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "oomlab/data/dataset.h"

namespace oomlab::data_detail {

class LabelIds {
public:
    // Ids in numeric order when every label is an integer, otherwise in sorted name order.
    explicit LabelIds(const std::vector<RawExample>& examples);

    const std::vector<std::string>& names() const { return m_names; }
    std::optional<std::int32_t> id(const std::string& name) const;

private:
    std::vector<std::string> m_names;
    std::unordered_map<std::string, std::int32_t> m_ids;
};

// Maps every example's label; a label the ids do not know is BadInput naming `path` and
// `known_from` (the training data the ids come from).
std::vector<Example> map_labels(std::vector<RawExample> raw, const LabelIds& ids,
                                const std::string& path, const std::string& known_from);

}  // namespace oomlab::data_detail
