// The names of the dataset formats as written in configs and on the command line.
#include <array>
#include <string>

#include "oomlab/data/dataset.h"
#include "text_lines.h"

namespace oomlab {
namespace {

struct FormatName {
    DatasetFormat format;
    std::string_view name;
};

// Canonical names first; the rest are accepted spellings.
constexpr std::array<FormatName, 9> kCanonicalNames = {{
    {DatasetFormat::Auto, "auto"},
    {DatasetFormat::LabelTabText, "label-tab-text"},
    {DatasetFormat::TextTabLabel, "text-tab-label"},
    {DatasetFormat::LabelSpaceText, "label-space-text"},
    {DatasetFormat::Csv, "csv"},
    {DatasetFormat::FastText, "fasttext"},
    {DatasetFormat::Folder, "folder"},
    {DatasetFormat::JsonLines, "jsonl"},
    {DatasetFormat::Fortunes, "fortunes"},
}};

constexpr std::array<FormatName, 6> kAliases = {{
    {DatasetFormat::LabelTabText, "tsv"},
    {DatasetFormat::TextTabLabel, "tsv-text-label"},
    {DatasetFormat::LabelSpaceText, "label-text"},
    {DatasetFormat::JsonLines, "json-lines"},
    {DatasetFormat::JsonLines, "ndjson"},
    {DatasetFormat::Folder, "folders"},
}};

template <std::size_t N>
std::optional<DatasetFormat> find_format(const std::array<FormatName, N>& table,
                                         std::string_view name) {
    for (const FormatName& entry : table) {
        if (entry.name == name) {
            return entry.format;
        }
    }
    return std::nullopt;
}

}  // namespace

std::string_view dataset_format_name(DatasetFormat format) {
    for (const FormatName& entry : kCanonicalNames) {
        if (entry.format == format) {
            return entry.name;
        }
    }
    return "unknown";
}

std::optional<DatasetFormat> parse_dataset_format(std::string_view name) {
    const std::string lower = data_detail::to_lower_ascii(data_detail::trim(name));
    if (auto format = find_format(kCanonicalNames, lower)) {
        return format;
    }
    return find_format(kAliases, lower);
}

std::string dataset_format_names() {
    std::string names;
    for (const FormatName& entry : kCanonicalNames) {
        names += (names.empty() ? "" : ", ") + std::string(entry.name);
    }
    return names;
}

}  // namespace oomlab
