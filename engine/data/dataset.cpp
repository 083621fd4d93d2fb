// Reading a dataset in any format, mapping its labels and splitting off validation data.
#include "oomlab/data/dataset.h"

#include <filesystem>

#include "label_mapping.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "readers.h"
#include "seeded_split.h"

namespace fs = std::filesystem;

namespace oomlab {
namespace {

std::vector<RawExample> read_file_examples(const std::string& path, std::string_view content,
                                           DatasetFormat format) {
    switch (format) {
        case DatasetFormat::LabelTabText:
            return data_detail::read_tab_separated(path, content, true);
        case DatasetFormat::TextTabLabel:
            return data_detail::read_tab_separated(path, content, false);
        case DatasetFormat::LabelSpaceText:
            return data_detail::read_label_space_text(path, content);
        case DatasetFormat::Csv:
            return data_detail::read_csv(path, content);
        case DatasetFormat::FastText:
            return data_detail::read_fasttext(path, content);
        case DatasetFormat::JsonLines:
            return data_detail::read_json_lines(path, content);
        case DatasetFormat::Auto:
        case DatasetFormat::Folder:
        case DatasetFormat::Fortunes:
            break;
    }
    throw bad_input_at(path, 0,
                       "is a file, but dataset.format " + std::string(dataset_format_name(format)) +
                           " needs a folder; set dataset.format to auto or to a file format");
}

std::string label_list(const std::vector<std::string>& names) {
    std::string list;
    for (const std::string& name : names) {
        list += (list.empty() ? "" : ", ") + name;
    }
    return list;
}

}  // namespace

namespace {

std::vector<RawExample> read_examples(const std::string& path, DatasetFormat format,
                                      DatasetFormat* detected, const std::string& key) {
    const auto report = [&](DatasetFormat used) {
        if (detected) {
            *detected = used;
        }
    };
    if (path.empty()) {
        report(DatasetFormat::Fortunes);
        return read_default_examples();
    }
    check_input_path(path, key, PathKind::FileOrFolder);
    if (fs::is_directory(path)) {
        if (format == DatasetFormat::Auto) {
            format = DatasetFormat::Folder;
        }
        report(format);
        if (format == DatasetFormat::Folder) {
            return data_detail::read_class_folders(path, key);
        }
        if (format == DatasetFormat::Fortunes) {
            return data_detail::read_fortune_topics(path);
        }
        throw bad_input_at(path, 0,
                           "is a folder, but dataset.format " +
                               std::string(dataset_format_name(format)) +
                               " reads a file; set dataset.format to folder or auto");
    }
    const std::string content = read_text_input(path, key, kMaxDatasetFileBytes);
    if (format == DatasetFormat::Auto) {
        format = data_detail::detect_content_format(path, content);
    }
    report(format);
    return read_file_examples(path, content, format);
}

}  // namespace

std::vector<RawExample> read_raw_examples(const std::string& path, DatasetFormat format,
                                          DatasetFormat* detected, const std::string& key) {
    try {
        return read_examples(path, format, detected, key);
    } catch (const BadInput& error) {
        // Whatever the reader found, it is about the file this key names.
        if (error.keys().empty()) {
            throw BadInput(error.what(), {key});
        }
        throw;
    }
}

DatasetSplit load_dataset(const DatasetSpec& spec) {
    if (!(spec.valid_ratio >= 0.0 && spec.valid_ratio < 1.0)) {
        throw BadInput("dataset.valid_ratio is " + std::to_string(spec.valid_ratio) +
                       "; it must be at least 0 and below 1 (0 = no validation data)");
    }
    DatasetFormat train_format = DatasetFormat::Auto;
    std::vector<RawExample> raw_train =
        read_raw_examples(spec.path, spec.format, &train_format, "dataset.path");
    const std::string train_source =
        spec.path.empty() ? data_detail::fortunes_description(raw_train.size()) : spec.path;
    const data_detail::LabelIds ids(raw_train);
    if (ids.names().size() < 2) {
        throw bad_input_at(train_source, 0,
                           "holds a single label (" + label_list(ids.names()) +
                               "); a classifier needs at least two classes");
    }

    DatasetSplit split;
    split.train.label_names = ids.names();
    split.train.source = train_source;
    split.train.format = train_format;
    split.valid.label_names = ids.names();

    if (!spec.valid_path.empty()) {
        DatasetFormat valid_format = DatasetFormat::Auto;
        std::vector<RawExample> raw_valid =
            read_raw_examples(spec.valid_path, spec.format, &valid_format, "dataset.valid_path");
        split.train.examples =
            data_detail::map_labels(std::move(raw_train), ids, train_source, train_source);
        split.valid.examples =
            data_detail::map_labels(std::move(raw_valid), ids, spec.valid_path, train_source);
        split.valid.source = spec.valid_path;
        split.valid.format = valid_format;
        return split;
    }

    std::vector<Example> examples =
        data_detail::map_labels(std::move(raw_train), ids, train_source, train_source);
    const data_detail::SplitIndices indices =
        data_detail::seeded_split(examples.size(), spec.valid_ratio, spec.seed);
    split.train.examples.reserve(indices.train.size());
    for (const std::size_t i : indices.train) {
        split.train.examples.push_back(std::move(examples[i]));
    }
    split.valid.examples.reserve(indices.valid.size());
    for (const std::size_t i : indices.valid) {
        split.valid.examples.push_back(std::move(examples[i]));
    }
    split.valid.source = train_source;
    split.valid.format = train_format;
    return split;
}

}  // namespace oomlab
