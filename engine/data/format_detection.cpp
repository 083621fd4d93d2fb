// Guesses a dataset's format from its first lines, its extension and its layout.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "oomlab/common/files.h"
#include "readers.h"
#include "text_lines.h"

namespace fs = std::filesystem;

namespace oomlab::data_detail {
namespace {

constexpr std::size_t kSniffLines = 2000;
constexpr std::size_t kSniffBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxIntegerLabels = 100;
constexpr std::size_t kMaxNamedLabels = 1000;

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.substr(0, prefix.size()) == prefix;
}

std::string lower_extension(const std::string& path) {
    return to_lower_ascii(fs::path(path).extension().string());
}

// `"...",` at the start of `text` (the quoted field may hold doubled quotes and line breaks).
bool starts_with_quoted_csv_field(std::string_view text) {
    if (!starts_with(text, "\"")) {
        return false;
    }
    for (std::size_t i = 1; i < text.size(); ++i) {
        if (text[i] != '"') {
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '"') {
            ++i;
            continue;
        }
        return i + 1 < text.size() && text[i + 1] == ',';
    }
    return false;
}

bool mostly_tab_separated(const std::vector<NumberedLine>& lines) {
    const auto with_tab = std::count_if(lines.begin(), lines.end(), [](const NumberedLine& line) {
        return line.text.find('\t') != std::string_view::npos;
    });
    return lines.front().text.find('\t') != std::string_view::npos &&
           static_cast<std::size_t>(with_tab) * 2 >= lines.size();
}

// "label text" when every line's first word is label-shaped, has text after it, and the
// first words repeat: a few integers (TREC, SST) or names far fewer than the lines.
bool first_words_are_labels(const std::vector<NumberedLine>& lines) {
    std::set<std::string_view> distinct;
    bool all_integers = true;
    for (const NumberedLine& line : lines) {
        const std::string_view text = trim(line.text);
        std::size_t end = 0;
        while (end < text.size() && !is_space(text[end])) {
            ++end;
        }
        const std::string_view word = text.substr(0, end);
        if (!is_label_shaped(word) || trim(text.substr(end)).empty()) {
            return false;
        }
        all_integers = all_integers && is_integer(word);
        distinct.insert(word);
    }
    if (all_integers) {
        return distinct.size() <= kMaxIntegerLabels;
    }
    return distinct.size() * 2 <= lines.size() && distinct.size() <= kMaxNamedLabels;
}

struct ColumnStats {
    std::set<std::string_view> distinct;
    bool label_shaped = true;
    std::size_t total_length = 0;

    void add(std::string_view cell) {
        cell = trim(cell);
        distinct.insert(cell);
        label_shaped = label_shaped && is_label_shaped(cell);
        total_length += cell.size();
    }
};

// The first complete lines of a file, enough to sniff its format without reading it all.
std::string read_head(const std::string& path) {
    check_input_path(path, "dataset.path");
    std::ifstream in(path, std::ios::binary);
    std::string head(kSniffBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    const std::size_t last_newline = head.rfind('\n');
    if (head.size() == kSniffBytes && last_newline != std::string::npos) {
        head.resize(last_newline + 1);  // a cut last line would look malformed
    }
    return text_as_utf8(path, "dataset.path", std::move(head));
}

}  // namespace

bool tab_label_comes_first(std::string_view content) {
    const std::vector<NumberedLine> lines = first_non_blank_lines(content, kSniffLines);
    if (lines.empty()) {
        return true;
    }
    if (const int side = tab_header_label_side(lines.front().text); side >= 0) {
        return side == 0;
    }
    ColumnStats first;
    ColumnStats last;
    for (const NumberedLine& line : lines) {
        const std::vector<std::string_view> fields = split(line.text, '\t');
        if (fields.size() >= 2) {
            first.add(fields.front());
            last.add(fields.back());
        }
    }
    // The label column holds few distinct short values.
    if (first.label_shaped != last.label_shaped) {
        return first.label_shaped;
    }
    if (first.distinct.size() != last.distinct.size()) {
        return first.distinct.size() < last.distinct.size();
    }
    return first.total_length <= last.total_length;
}

DatasetFormat detect_content_format(const std::string& path, std::string_view content) {
    const std::vector<NumberedLine> lines = first_non_blank_lines(content, kSniffLines);
    if (lines.empty()) {
        throw no_examples_error(path);
    }
    const std::string extension = lower_extension(path);
    const std::string_view first = trim(lines.front().text);
    if (extension == ".jsonl" || extension == ".ndjson" || starts_with(first, "{")) {
        return DatasetFormat::JsonLines;
    }
    if (starts_with(first, "__label__")) {
        return DatasetFormat::FastText;
    }
    // From the first line to the end, so a quoted field may span lines.
    const std::string_view from_first(
        first.data(), static_cast<std::size_t>(content.data() + content.size() - first.data()));
    if (extension == ".csv" || starts_with_quoted_csv_field(from_first)) {
        return DatasetFormat::Csv;
    }
    if (extension == ".tsv" || mostly_tab_separated(lines)) {
        return tab_label_comes_first(content) ? DatasetFormat::LabelTabText
                                              : DatasetFormat::TextTabLabel;
    }
    if (first_words_are_labels(lines)) {
        return DatasetFormat::LabelSpaceText;
    }
    throw bad_input_at(
        path, 0,
        "cannot tell the dataset format from its first lines; tried JSON Lines ({\"text\", "
        "\"label\"}), fastText (__label__X text), CSV (\"label\",\"text\"), TSV (label<TAB>text "
        "or text<TAB>label) and \"label text\" (a repeated first word); set dataset.format to "
        "one of: " +
            dataset_format_names());
}

}  // namespace oomlab::data_detail

namespace oomlab {

DatasetFormat detect_dataset_format(const std::string& path) {
    if (path.empty()) {
        return DatasetFormat::Fortunes;
    }
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::is_directory(status)) {
        return DatasetFormat::Folder;
    }
    if (!fs::exists(status)) {
        throw bad_input_at(path, 0, "no such file or folder; check dataset.path");
    }
    return data_detail::detect_content_format(path, data_detail::read_head(path));
}

}  // namespace oomlab
