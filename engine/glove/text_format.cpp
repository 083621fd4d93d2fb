#include "text_format.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "oomlab/common/errors.h"

namespace oomlab::glove_detail {
namespace {

constexpr int kSampleLines = 1000;

std::size_t count_fields(std::string_view line) {
    return static_cast<std::size_t>(std::count(line.begin(), line.end(), ' ')) + 1;
}

bool parse_count(std::string_view text, std::int64_t& value) {
    if (text.empty()) {
        return false;
    }
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

// "V D": exactly two non-negative integers.
bool parse_header(std::string_view line, std::int64_t& rows, std::int64_t& dim) {
    const std::size_t space = line.find(' ');
    return space != std::string_view::npos && parse_count(line.substr(0, space), rows) &&
           parse_count(line.substr(space + 1), dim);
}

struct Sample {
    std::string_view first_line;
    std::size_t first_line_bytes = 0;               // newline included
    std::map<std::size_t, int> later_field_counts;  // field count -> lines (line 2 onwards)
};

Sample sample_lines(std::string_view head) {
    Sample sample;
    std::size_t pos = 0;
    int sampled = 0;
    bool first = true;
    while (pos < head.size() && sampled < kSampleLines) {
        std::size_t newline = head.find('\n', pos);
        const std::size_t line_end = newline == std::string_view::npos ? head.size() : newline;
        const char* begin = head.data() + pos;
        const std::string_view line(begin, trim_line_end(begin, head.data() + line_end) - begin);
        if (first) {
            sample.first_line = line;
            sample.first_line_bytes = std::min(line_end + 1, head.size());
            first = false;
        } else if (!line.empty()) {
            ++sample.later_field_counts[count_fields(line)];
            ++sampled;
        }
        pos = line_end + 1;
    }
    return sample;
}

std::size_t most_common_count(const std::map<std::size_t, int>& counts) {
    std::size_t best = 0;
    int best_lines = 0;
    // Ascending, so ties keep the wider count: a short line can never be valid, while a
    // longer one can be a word with spaces (840B).
    for (const auto& [fields, lines] : counts) {
        if (lines >= best_lines) {
            best = fields;
            best_lines = lines;
        }
    }
    return best;
}

}  // namespace

// Files that are text, but not in the form GloVe files take: say how to convert them.
void check_text_form(const std::string& path, std::string_view head) {
    const std::string_view start = head.substr(0, 2);
    const std::size_t zero = head.find('\0');
    if (start == "\xFF\xFE" || start == "\xFE\xFF" || zero != std::string_view::npos) {
        throw bad_input_at(path, 1,
                           zero != std::string_view::npos && start != "\xFF\xFE" &&
                                   start != "\xFE\xFF" && zero > 64
                               ? "holds a zero byte: this is not a GloVe text file"
                               : "is UTF-16 text; GloVe files are UTF-8: convert it with "
                                 "iconv -f UTF-16 -t UTF-8");
    }
    const std::size_t first_newline = head.find('\n');
    const std::string_view first_line = head.substr(0, first_newline);
    if (first_newline == std::string_view::npos && head.size() >= 4096 &&
        first_line.find('\r') != std::string_view::npos) {
        throw bad_input_at(path, 1,
                           "lines end with a carriage return alone (classic Mac); GloVe lines "
                           "end with a newline: convert it with tr '\\r' '\\n'");
    }
    if (first_line.find('\t') != std::string_view::npos &&
        first_line.find(' ') == std::string_view::npos) {
        throw bad_input_at(path, 1,
                           "fields are separated by tabs; GloVe separates them with single "
                           "spaces: convert it with tr '\\t' ' '");
    }
}

TextLayout detect_text_layout(const std::string& path, std::string_view head, int expected_dim) {
    check_text_form(path, head);
    const Sample sample = sample_lines(head);
    const std::size_t later_fields = most_common_count(sample.later_field_counts);
    TextLayout layout;

    std::int64_t header_rows = 0;
    std::int64_t header_dim = 0;
    // "123 4" could also be the word "123" with one value: it is a header only when the
    // lines after it do not have two fields as well.
    if (parse_header(sample.first_line, header_rows, header_dim) && later_fields != 2) {
        if (header_dim < 1 || header_dim > (1 << 20)) {
            throw bad_input_at(path, 1,
                               "word2vec header declares " + std::to_string(header_dim) +
                                   " dimensions; expected a positive width");
        }
        if (later_fields != 0 && later_fields != static_cast<std::size_t>(header_dim) + 1) {
            throw bad_input_at(path, 2,
                               "word2vec header declares " + std::to_string(header_dim) +
                                   " dimensions but the lines have " +
                                   std::to_string(later_fields - 1) +
                                   " values; fix the header line");
        }
        layout.format = GloveFormat::Word2VecText;
        layout.dim = static_cast<int>(header_dim);
        layout.declared_rows = header_rows;
        layout.header_bytes = sample.first_line_bytes;
        if (expected_dim != 0 && expected_dim != layout.dim) {
            throw bad_input_at(path, 1,
                               "word2vec header declares " + std::to_string(layout.dim) +
                                   " dimensions, but " + std::to_string(expected_dim) +
                                   " were expected");
        }
        return layout;
    }

    std::map<std::size_t, int> counts = sample.later_field_counts;
    if (!sample.first_line.empty()) {
        ++counts[count_fields(sample.first_line)];
    }
    const std::size_t fields = most_common_count(counts);
    if (fields == 0) {
        throw bad_input_at(path, 0,
                           std::string("has no vectors (only blank lines); ") + kExpectedShape);
    }
    if (fields == 1) {
        throw bad_input_at(path, 1, std::string("lines have a single field; ") + kExpectedShape);
    }
    layout.format = GloveFormat::Glove;
    layout.dim = static_cast<int>(fields - 1);
    if (expected_dim != 0 && expected_dim != layout.dim) {
        throw bad_input_at(path, 0,
                           "lines have " + std::to_string(layout.dim) +
                               " values (the most common width among the first lines), but " +
                               std::to_string(expected_dim) + " were expected");
    }
    return layout;
}

}  // namespace oomlab::glove_detail
