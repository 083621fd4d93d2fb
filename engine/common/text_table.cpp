#include "oomlab/common/text_table.h"

#include <algorithm>
#include <utility>

namespace oomlab {

std::size_t display_width(const std::string& text) {
    // Every byte but a continuation byte (10xxxxxx) starts a character.
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char byte) {
        return (static_cast<unsigned char>(byte) & 0xC0U) != 0x80U;
    }));
}

TextTable::TextTable(std::vector<std::string> header, std::vector<std::size_t> right,
                     std::string indent)
    : m_header(std::move(header)),
      m_align(m_header.size(), Align::Left),
      m_indent(std::move(indent)) {
    for (const std::size_t column : right) {
        m_align.at(column) = Align::Right;
    }
}

void TextTable::add_row(std::vector<std::string> cells) {
    cells.resize(std::max(cells.size(), m_header.size()));
    m_rows.push_back(std::move(cells));
    m_lines.push_back(false);
}

void TextTable::add_line(std::string text) {
    m_rows.push_back({std::move(text)});
    m_lines.push_back(true);
}

void TextTable::print(std::ostream& out) const {
    const std::size_t columns = m_header.size();
    std::vector<std::size_t> widths(columns, 0);
    const bool has_header = std::any_of(m_header.begin(), m_header.end(),
                                        [](const std::string& cell) { return !cell.empty(); });
    const auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < columns; ++i) {
            widths[i] = std::max(widths[i], display_width(row[i]));
        }
    };
    if (has_header) {
        measure(m_header);
    }
    for (std::size_t row = 0; row < m_rows.size(); ++row) {
        if (!m_lines[row]) {
            measure(m_rows[row]);
        }
    }

    const auto print_row = [&](const std::vector<std::string>& row) {
        std::string line = m_indent;
        for (std::size_t i = 0; i < row.size(); ++i) {
            const std::size_t width = i < columns ? widths[i] : 0;
            const std::string padding(width - std::min(width, display_width(row[i])), ' ');
            const bool last = i + 1 == row.size();
            if (i > 0) {
                line += "  ";
            }
            if (i < columns && m_align[i] == Align::Right) {
                line += padding + row[i];
            } else {
                line += row[i] + (last ? "" : padding);
            }
        }
        // A last cell that is empty leaves the padding of the one before it.
        line.erase(line.find_last_not_of(' ') + 1);
        out << line << '\n';
    };
    if (has_header) {
        print_row(m_header);
    }
    for (std::size_t row = 0; row < m_rows.size(); ++row) {
        if (m_lines[row]) {
            out << m_rows[row].front() << '\n';
        } else {
            print_row(m_rows[row]);
        }
    }
}

}  // namespace oomlab
