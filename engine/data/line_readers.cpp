// Readers for the one-example-per-line formats: TSV (either column order), "label text" and
// fastText.
#include <algorithm>
#include <string>

#include "readers.h"
#include "text_lines.h"

namespace oomlab::data_detail {
namespace {

constexpr std::string_view kFastTextPrefix = "__label__";

struct TabRow {
    std::string_view label;
    std::vector<std::string_view> text_parts;
};

TabRow split_tab_row(std::string_view line, bool label_first) {
    std::vector<std::string_view> fields = split(line, '\t');
    TabRow row;
    if (fields.size() < 2) {
        return row;
    }
    if (label_first) {
        row.label = fields.front();
        row.text_parts.assign(fields.begin() + 1, fields.end());
    } else {
        row.label = fields.back();
        row.text_parts.assign(fields.begin(), fields.end() - 1);
    }
    return row;
}

bool has_tab_header(const std::vector<NumberedLine>& lines, bool label_first) {
    if (tab_header_label_side(lines.front().text) >= 0) {
        return true;
    }
    std::vector<std::string_view> later_labels;
    for (std::size_t i = 1; i < lines.size() && i <= kHeaderSniffRows; ++i) {
        later_labels.push_back(split_tab_row(lines[i].text, label_first).label);
    }
    return is_header_label_cell(split_tab_row(lines.front().text, label_first).label, later_labels);
}

RawExample checked_example(const std::string& path, std::size_t line, std::string_view label,
                           std::string text, std::string_view expected) {
    label = trim(label);
    if (label.empty()) {
        throw bad_input_at(path, line,
                           "the label is empty (expected " + std::string(expected) +
                               "); fix the line or set dataset.format");
    }
    if (text.empty()) {
        throw bad_input_at(
            path, line,
            "the text is empty (expected " + std::string(expected) + "); fix or remove the line");
    }
    return RawExample{std::move(text), std::string(label)};
}

}  // namespace

int tab_header_label_side(std::string_view first_line) {
    const std::vector<std::string_view> fields = split(first_line, '\t');
    if (fields.size() < 2) {
        return -1;
    }
    if (is_label_header(fields.back())) {
        return 1;
    }
    if (is_label_header(fields.front())) {
        return 0;
    }
    return -1;
}

BadInput no_examples_error(const std::string& path, std::string_view after_what) {
    std::string what = "holds no examples";
    if (!after_what.empty()) {
        what += " after " + std::string(after_what);
    }
    return bad_input_at(
        path, 0,
        what + "; add examples, or set dataset.path (or dataset.valid_path) to another file");
}

std::vector<RawExample> examples_per_line(const std::string& path,
                                          const std::vector<NumberedLine>& lines, std::size_t first,
                                          const LineParser& parse) {
    std::vector<RawExample> examples;
    examples.reserve(lines.size() - std::min(first, lines.size()));
    for (std::size_t i = first; i < lines.size(); ++i) {
        examples.push_back(parse(lines[i]));
    }
    if (examples.empty()) {
        throw no_examples_error(path, first > 0 ? "the header row" : "");
    }
    return examples;
}

std::vector<RawExample> read_tab_separated(const std::string& path, std::string_view content,
                                           bool label_first) {
    const std::vector<NumberedLine> lines = non_blank_lines(content);
    const std::size_t first = !lines.empty() && has_tab_header(lines, label_first) ? 1 : 0;
    const std::string_view expected = label_first ? "label<TAB>text" : "text<TAB>label";
    return examples_per_line(path, lines, first, [&](const NumberedLine& line) {
        const TabRow row = split_tab_row(line.text, label_first);
        if (row.text_parts.empty()) {
            throw bad_input_at(path, line.number,
                               "expected " + std::string(expected) +
                                   " but the line has no tab; fix the line or set dataset.format");
        }
        return checked_example(path, line.number, row.label, join_trimmed(row.text_parts),
                               expected);
    });
}

std::vector<RawExample> read_label_space_text(const std::string& path, std::string_view content) {
    return examples_per_line(path, non_blank_lines(content), 0, [&](const NumberedLine& line) {
        const std::string_view text = trim(line.text);
        std::size_t end = 0;
        while (end < text.size() && !is_space(text[end])) {
            ++end;
        }
        return checked_example(path, line.number, text.substr(0, end),
                               std::string(trim(text.substr(end))), "label text");
    });
}

std::vector<RawExample> read_fasttext(const std::string& path, std::string_view content) {
    return examples_per_line(path, non_blank_lines(content), 0, [&](const NumberedLine& line) {
        std::string_view rest = trim(line.text);
        if (rest.substr(0, kFastTextPrefix.size()) != kFastTextPrefix) {
            throw bad_input_at(path, line.number,
                               "expected \"__label__X text\" but the line does not start with "
                               "__label__; fix the line or set dataset.format");
        }
        std::string_view label;
        // Several labels may precede the text; the first one is the example's class.
        while (rest.substr(0, kFastTextPrefix.size()) == kFastTextPrefix) {
            std::size_t end = 0;
            while (end < rest.size() && !is_space(rest[end])) {
                ++end;
            }
            if (label.empty()) {
                label = rest.substr(kFastTextPrefix.size(), end - kFastTextPrefix.size());
            }
            rest = trim(rest.substr(end));
        }
        return checked_example(path, line.number, label, std::string(rest), "__label__X text");
    });
}

}  // namespace oomlab::data_detail
