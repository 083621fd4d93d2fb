// RFC 4180 CSV: quoted fields with doubled quotes and line breaks inside quotes. The label
// column is the first unless a header row names another; the other columns are joined.
#include <string>

#include "readers.h"
#include "text_lines.h"

namespace oomlab::data_detail {
namespace {

struct CsvRecord {
    std::vector<std::string> fields;
    std::size_t line = 0;  // where the record starts
};

class CsvParser {
public:
    CsvParser(const std::string& path, std::string_view content)
        : m_path(path), m_content(strip_bom(content)) {}

    // Every record that holds more than one empty field.
    std::vector<CsvRecord> records() {
        std::vector<CsvRecord> records;
        while (m_pos < m_content.size()) {
            CsvRecord record = next_record();
            const bool blank = record.fields.size() == 1 && trim(record.fields.front()).empty();
            if (!blank) {
                records.push_back(std::move(record));
            }
        }
        return records;
    }

private:
    bool at_line_end() const {
        return m_pos >= m_content.size() || m_content[m_pos] == '\n' ||
               (m_content[m_pos] == '\r' &&
                (m_pos + 1 == m_content.size() || m_content[m_pos + 1] == '\n'));
    }

    void skip_line_end() {
        if (m_pos < m_content.size() && m_content[m_pos] == '\r') {
            ++m_pos;
        }
        if (m_pos < m_content.size() && m_content[m_pos] == '\n') {
            ++m_pos;
            ++m_line;
        }
    }

    CsvRecord next_record() {
        CsvRecord record;
        record.line = m_line;
        while (true) {
            record.fields.push_back(m_pos < m_content.size() && m_content[m_pos] == '"'
                                        ? quoted_field(record.line)
                                        : plain_field());
            if (at_line_end()) {
                skip_line_end();
                return record;
            }
            ++m_pos;  // the comma
        }
    }

    std::string plain_field() {
        const std::size_t start = m_pos;
        while (!at_line_end() && m_content[m_pos] != ',') {
            ++m_pos;
        }
        return std::string(m_content.substr(start, m_pos - start));
    }

    std::string quoted_field(std::size_t record_line) {
        const std::size_t opening_line = m_line;
        std::string field;
        ++m_pos;  // the opening quote
        while (true) {
            if (m_pos >= m_content.size()) {
                throw bad_input_at(m_path, opening_line,
                                   "a quoted field is never closed; close it with \" and write "
                                   "quotes inside a field as \"\"");
            }
            const char c = m_content[m_pos];
            if (c == '"') {
                if (m_pos + 1 < m_content.size() && m_content[m_pos + 1] == '"') {
                    field += '"';
                    m_pos += 2;
                    continue;
                }
                ++m_pos;
                break;
            }
            if (c == '\n') {
                ++m_line;
                if (!field.empty() && field.back() == '\r') {
                    field.pop_back();
                }
            }
            field += c;
            ++m_pos;
        }
        if (!at_line_end() && m_content[m_pos] != ',') {
            throw bad_input_at(m_path, m_line,
                               "unexpected text after a closing quote (record starting at line " +
                                   std::to_string(record_line) +
                                   "); write quotes inside a quoted field as \"\"");
        }
        return field;
    }

    const std::string& m_path;
    std::string_view m_content;
    std::size_t m_pos = 0;
    std::size_t m_line = 1;
};

// The label column named by a header row, or -1 when the first record is data.
int header_label_column(const std::vector<CsvRecord>& records) {
    const std::vector<std::string>& first = records.front().fields;
    for (std::size_t column = 0; column < first.size(); ++column) {
        if (is_label_header(first[column])) {
            return static_cast<int>(column);
        }
    }
    std::vector<std::string_view> later_labels;
    for (std::size_t i = 1; i < records.size() && i <= kHeaderSniffRows; ++i) {
        later_labels.push_back(records[i].fields.front());
    }
    return is_header_label_cell(first.front(), later_labels) ? 0 : -1;
}

}  // namespace

std::vector<RawExample> read_csv(const std::string& path, std::string_view content) {
    const std::vector<CsvRecord> records = CsvParser(path, content).records();
    if (records.empty()) {
        throw no_examples_error(path);
    }
    const int header_column = header_label_column(records);
    const std::size_t label_column =
        header_column < 0 ? 0 : static_cast<std::size_t>(header_column);
    std::vector<RawExample> examples;
    examples.reserve(records.size());
    for (std::size_t i = header_column < 0 ? 0 : 1; i < records.size(); ++i) {
        const CsvRecord& record = records[i];
        if (record.fields.size() < 2 || label_column >= record.fields.size()) {
            throw bad_input_at(path, record.line,
                               "expected a label column and at least one text column separated "
                               "by commas; fix the row or set dataset.format");
        }
        std::vector<std::string_view> text_parts;
        for (std::size_t column = 0; column < record.fields.size(); ++column) {
            if (column != label_column) {
                text_parts.push_back(record.fields[column]);
            }
        }
        const std::string_view label = trim(record.fields[label_column]);
        std::string text = join_trimmed(text_parts);
        if (label.empty()) {
            throw bad_input_at(path, record.line, "the label column is empty; fix the row");
        }
        if (text.empty()) {
            throw bad_input_at(path, record.line,
                               "the text columns are empty; fix or remove the row");
        }
        examples.push_back(RawExample{std::move(text), std::string(label)});
    }
    if (examples.empty()) {
        throw no_examples_error(path, "the header row");
    }
    return examples;
}

}  // namespace oomlab::data_detail
