// The per-format readers behind read_raw_examples (internal to oomlab_data). Each takes the
// file's path (for messages) and its whole content, and throws BadInput naming path:line.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/data/dataset.h"
#include "text_lines.h"

namespace oomlab::data_detail {

// How many rows after the first a reader looks at to decide whether the first is a header.
inline constexpr std::size_t kHeaderSniffRows = 200;

// Tab-separated rows; `label_first` picks "label<TAB>text" over "text<TAB>label". A header
// row ("sentence<TAB>label") is recognised and skipped.
std::vector<RawExample> read_tab_separated(const std::string& path, std::string_view content,
                                           bool label_first);

// "label text": the first space- or tab-separated token is the label.
std::vector<RawExample> read_label_space_text(const std::string& path, std::string_view content);

// "__label__X [__label__Y ...] text": the first label wins.
std::vector<RawExample> read_fasttext(const std::string& path, std::string_view content);

// RFC 4180 CSV; the label column is the first one unless a header row names another.
std::vector<RawExample> read_csv(const std::string& path, std::string_view content);

// One JSON object per line with "text" (string) and "label" (string or integer).
std::vector<RawExample> read_json_lines(const std::string& path, std::string_view content);

// One sub-folder per class; every regular, non-hidden file in it is one example.
std::vector<RawExample> read_class_folders(const std::string& path, const std::string& key);

// Fortune files (entries separated by "%" lines), one file per topic, topic = label.
std::vector<RawExample> read_fortune_topics(const std::string& dir);

// "Debian fortunes: 4 topics (...), N quotations".
std::string fortunes_description(std::size_t quotations);

// The format of a file's content (not a folder), or throws BadInput listing the formats.
DatasetFormat detect_content_format(const std::string& path, std::string_view content);

// For tab-separated content: true when the label is the first column.
bool tab_label_comes_first(std::string_view content);

// Which column of a tab-separated header row is the label: 0 = first, 1 = last,
// -1 = the row is not a header.
int tab_header_label_side(std::string_view first_line);

// The message for a file without any example.
BadInput no_examples_error(const std::string& path, std::string_view after_what = {});

// The loop of the one-example-per-line formats: `parse` turns lines[first..] into examples
// (throwing BadInput naming path:line); a file without any is an error.
using LineParser = std::function<RawExample(const NumberedLine& line)>;
std::vector<RawExample> examples_per_line(const std::string& path,
                                          const std::vector<NumberedLine>& lines, std::size_t first,
                                          const LineParser& parse);

}  // namespace oomlab::data_detail
