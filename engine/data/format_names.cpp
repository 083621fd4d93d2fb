// The names of the dataset formats as written in configs and on the command line.
#include <array>
#include <string>

#include "oomlab/common/name_table.h"
#include "oomlab/data/dataset.h"
#include "text_lines.h"

namespace oomlab {
namespace {

// Canonical names first; the rest are accepted spellings.
constexpr std::array<NamedValue<DatasetFormat>, 9> kCanonicalNames = {{
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

constexpr std::array<NamedValue<DatasetFormat>, 6> kAliases = {{
    {DatasetFormat::LabelTabText, "tsv"},
    {DatasetFormat::TextTabLabel, "tsv-text-label"},
    {DatasetFormat::LabelSpaceText, "label-text"},
    {DatasetFormat::JsonLines, "json-lines"},
    {DatasetFormat::JsonLines, "ndjson"},
    {DatasetFormat::Folder, "folders"},
}};

}  // namespace

std::string_view dataset_format_name(DatasetFormat format) {
    return name_of(format, kCanonicalNames, "unknown");
}

std::optional<DatasetFormat> parse_dataset_format(std::string_view name) {
    const std::string lower = data_detail::to_lower_ascii(data_detail::trim(name));
    if (auto format = value_named<DatasetFormat>(lower, kCanonicalNames)) {
        return format;
    }
    return value_named<DatasetFormat>(lower, kAliases);
}

std::string dataset_format_names() {
    std::string names;
    for (const auto& entry : kCanonicalNames) {
        names += (names.empty() ? "" : ", ") + std::string(entry.name);
    }
    return names;
}

}  // namespace oomlab
