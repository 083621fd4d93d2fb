// Small text helpers shared by the dataset readers (internal to oomlab_data).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab::data_detail {

struct NumberedLine {
    std::string_view text;   // without its LF or CRLF ending
    std::size_t number = 0;  // 1-based, as an editor shows it
};

// Drops a leading UTF-8 byte-order mark.
std::string_view strip_bom(std::string_view content);

// The lines of a text file that hold more than whitespace (BOM stripped, CRLF tolerated,
// a missing final newline tolerated).
std::vector<NumberedLine> non_blank_lines(std::string_view content);

// Same, stopping after `limit` lines (for format sniffing).
std::vector<NumberedLine> first_non_blank_lines(std::string_view content, std::size_t limit);

bool is_space(char c);
std::string_view trim(std::string_view text);
std::vector<std::string_view> split(std::string_view text, char separator);
std::string to_lower_ascii(std::string_view text);

// "-12", "3": an optional minus sign and digits only.
bool is_integer(std::string_view text);

// A cell that names a label column in a header row ("label", "Class Index", "sentiment").
bool is_label_header(std::string_view cell);

// Whether a first row is a header, from its label cell and the label cells of later rows: a
// header word, or a non-integer above integer labels ("score" over "1", "0").
bool is_header_label_cell(std::string_view first_label,
                          const std::vector<std::string_view>& later_labels);

// A cell that is a label-shaped value: short, non-empty, no inner whitespace.
bool is_label_shaped(std::string_view cell);

// Joins the non-empty trimmed parts with one space.
std::string join_trimmed(const std::vector<std::string_view>& parts);

}  // namespace oomlab::data_detail
