// Word <-> id mapping. Id 0 is padding and id 1 the unknown word; real words start at 2.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace oomlab {

class Vocabulary {
public:
    static constexpr std::int32_t kPad = 0;
    static constexpr std::int32_t kUnknown = 1;

    Vocabulary();  // holds only <pad> and <unk>

    std::int32_t add(std::string_view word);       // id of the word, adding it if new
    std::int32_t id(std::string_view word) const;  // kUnknown when absent
    bool contains(std::string_view word) const;
    const std::string& word(std::int32_t id) const;
    std::int32_t size() const { return static_cast<std::int32_t>(m_words.size()); }

private:
    std::vector<std::string> m_words;
    std::unordered_map<std::string, std::int32_t> m_ids;
};

}  // namespace oomlab
