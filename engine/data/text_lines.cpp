#include "text_lines.h"

#include <algorithm>
#include <array>

namespace oomlab::data_detail {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";
constexpr std::size_t kMaxLabelLength = 40;

// Words that head a label column in the wild (GLUE, Kaggle AG News, IMDB CSV dumps).
constexpr std::array<std::string_view, 10> kLabelHeaderWords = {
    "label",     "labels",   "class", "category", "target",
    "sentiment", "polarity", "topic", "y",        "class index"};

}  // namespace

std::string_view strip_bom(std::string_view content) {
    if (content.substr(0, kBom.size()) == kBom) {
        content.remove_prefix(kBom.size());
    }
    return content;
}

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && is_space(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && is_space(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

std::vector<NumberedLine> first_non_blank_lines(std::string_view content, std::size_t limit) {
    content = strip_bom(content);
    std::vector<NumberedLine> lines;
    std::size_t number = 0;
    std::size_t start = 0;
    while (start < content.size() && lines.size() < limit) {
        std::size_t end = content.find('\n', start);
        if (end == std::string_view::npos) {
            end = content.size();
        }
        ++number;
        std::string_view line = content.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (!trim(line).empty()) {
            lines.push_back({line, number});
        }
        start = end + 1;
    }
    return lines;
}

std::vector<NumberedLine> non_blank_lines(std::string_view content) {
    return first_non_blank_lines(content, static_cast<std::size_t>(-1));
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        if (end == std::string_view::npos) {
            parts.push_back(text.substr(start));
            return parts;
        }
        parts.push_back(text.substr(start, end - start));
        start = end + 1;
    }
}

std::string to_lower_ascii(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return lower;
}

bool is_integer(std::string_view text) {
    if (!text.empty() && text.front() == '-') {
        text.remove_prefix(1);
    }
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_label_header(std::string_view cell) {
    const std::string lower = to_lower_ascii(trim(cell));
    return std::find(kLabelHeaderWords.begin(), kLabelHeaderWords.end(), lower) !=
           kLabelHeaderWords.end();
}

bool is_header_label_cell(std::string_view first_label,
                          const std::vector<std::string_view>& later_labels) {
    if (is_label_header(first_label)) {
        return true;
    }
    return !is_integer(trim(first_label)) && !later_labels.empty() &&
           std::all_of(later_labels.begin(), later_labels.end(),
                       [](std::string_view label) { return is_integer(trim(label)); });
}

bool is_label_shaped(std::string_view cell) {
    cell = trim(cell);
    return !cell.empty() && cell.size() <= kMaxLabelLength &&
           std::none_of(cell.begin(), cell.end(), is_space);
}

std::string join_trimmed(const std::vector<std::string_view>& parts) {
    std::string joined;
    for (std::string_view part : parts) {
        part = trim(part);
        if (part.empty()) {
            continue;
        }
        if (!joined.empty()) {
            joined += ' ';
        }
        joined += part;
    }
    return joined;
}

}  // namespace oomlab::data_detail
