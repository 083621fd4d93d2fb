// Recognising a word-vector text file: GloVe ("word v1 ... vD", no header) or word2vec text
// (a "V D" header line first), and the vector width D.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "oomlab/glove/glove_table.h"

namespace oomlab::glove_detail {

// What a file that is not a vector table is told it should be.
inline constexpr const char* kExpectedShape =
    "expected GloVe text ('word v1 ... vD' per line) or word2vec text (a 'V D' header line "
    "first)";

// Lines split on '\n' only. What else ends a line is not part of it: a '\r' (CRLF files) and
// trailing spaces (word2vec writers often leave one). Other bytes, control characters and
// invalid UTF-8 included, belong to the line.
inline const char* trim_line_end(const char* begin, const char* end) {
    while (end > begin && (end[-1] == '\r' || end[-1] == ' ')) {
        --end;
    }
    return end;
}

inline bool is_blank_line(const char* begin, const char* end) {
    return trim_line_end(begin, end) == begin;
}

struct TextLayout {
    GloveFormat format = GloveFormat::Glove;
    int dim = 0;
    std::int64_t declared_rows = -1;  // V from a word2vec header
    std::size_t header_bytes = 0;     // the header line, newline included (0 for GloVe)
};

// `head` is the start of the file cut at a line end (or the whole file). D is the most common
// field count among the first lines, minus one, so odd lines (840B tokens with spaces) do not
// mislead it. Throws BadInput naming the file when the text is not word vectors, or when
// `expected_dim` (if not 0) disagrees with the file.
TextLayout detect_text_layout(const std::string& path, std::string_view head, int expected_dim);

}  // namespace oomlab::glove_detail
