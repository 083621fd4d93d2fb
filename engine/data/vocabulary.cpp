#include "oomlab/data/vocabulary.h"

namespace oomlab {

Vocabulary::Vocabulary() : m_words{"<pad>", "<unk>"} {
    m_ids.emplace(m_words[kPad], kPad);
    m_ids.emplace(m_words[kUnknown], kUnknown);
}

std::int32_t Vocabulary::add(std::string_view word) {
    const auto [found, inserted] = m_ids.emplace(std::string(word), size());
    if (inserted) {
        m_words.push_back(found->first);
    }
    return found->second;
}

std::int32_t Vocabulary::id(std::string_view word) const {
    const auto found = m_ids.find(std::string(word));
    return found == m_ids.end() ? kUnknown : found->second;
}

bool Vocabulary::contains(std::string_view word) const {
    return m_ids.find(std::string(word)) != m_ids.end();
}

const std::string& Vocabulary::word(std::int32_t id) const {
    return m_words.at(static_cast<std::size_t>(id));
}

}  // namespace oomlab
