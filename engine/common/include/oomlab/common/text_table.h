// Tables printed on a terminal: each column as wide as its widest cell (header included), so a
// long name never runs into the next column.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace oomlab {

class TextTable {
public:
    enum class Align { Left, Right };

    // A column per header; `right` lists the columns aligned right (figures). `indent` starts
    // every line, and two spaces part the columns.
    explicit TextTable(std::vector<std::string> header, std::vector<std::size_t> right = {},
                       std::string indent = "");

    // A row of at most as many cells as there are columns (missing ones are empty).
    void add_row(std::vector<std::string> cells);

    // A line of its own below the last row (a note on it), printed as given: no column.
    void add_line(std::string text);

    bool empty() const { return m_rows.empty(); }

    // The header (where it has any text) and the rows; the last column is not padded, so no
    // line ends in spaces.
    void print(std::ostream& out) const;

private:
    std::vector<std::string> m_header;
    std::vector<Align> m_align;
    std::string m_indent;
    std::vector<std::vector<std::string>> m_rows;  // a line of its own: one cell, in m_lines
    std::vector<bool> m_lines;
};

// The width of `text` on a terminal: its characters (UTF-8 code points), not its bytes.
std::size_t display_width(const std::string& text);

}  // namespace oomlab
