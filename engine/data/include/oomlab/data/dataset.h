// Text-classification datasets: readers for the common on-disk formats, label mapping and
// a seeded train/validation split. Readers throw BadInput naming the file and line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

enum class DatasetFormat {
    Auto,
    LabelTabText,    // "label<TAB>text" (SMS Spam)
    TextTabLabel,    // "text<TAB>label" (SST-2 GLUE: header "sentence<TAB>label")
    LabelSpaceText,  // "label text" (TREC, SST stsa.*)
    Csv,             // quoted fields, label column first, the other columns joined (AG News)
    FastText,        // "__label__X text"
    Folder,          // one sub-folder per class of .txt files (IMDB, 20 Newsgroups)
    JsonLines,       // {"text": ..., "label": ...} per line
    Fortunes,        // the embedded default: Debian fortune files, one topic file per class
};

// "auto", "label-tab-text", "text-tab-label", "label-space-text", "csv", "fasttext", "folder",
// "jsonl", "fortunes". Parsing ignores case and also takes "tsv" (label first), "ndjson", ...
std::string_view dataset_format_name(DatasetFormat format);
std::optional<DatasetFormat> parse_dataset_format(std::string_view name);
std::string dataset_format_names();  // every name, comma separated

struct Example {
    std::string text;
    std::int32_t label = 0;
};

struct Dataset {
    std::vector<Example> examples;
    std::vector<std::string> label_names;  // label id -> name as written in the file
    std::string source;                    // the file or folder, or the default's description
    DatasetFormat format = DatasetFormat::Auto;
};

// Raw labels as read, before mapping to ids.
struct RawExample {
    std::string text;
    std::string label;
};

// Detects the format of a file or folder from its content (first lines, extension, layout).
// Throws BadInput when nothing fits, naming the file and the formats tried.
DatasetFormat detect_dataset_format(const std::string& path);

// Reads a file or folder in the given format (Auto: detected). Labels stay raw strings.
// Texts are trimmed; an empty path reads the embedded default. Only regular files and
// folders are read (never a FIFO or a device); UTF-16 text is decoded. `key` names the
// setting the path came from in messages.
std::vector<RawExample> read_raw_examples(const std::string& path, DatasetFormat format,
                                          DatasetFormat* detected = nullptr,
                                          const std::string& key = "dataset.path");

// The largest dataset file read (it is read whole into memory).
inline constexpr std::uint64_t kMaxDatasetFileBytes = std::uint64_t{8} << 30;

struct DatasetSpec {
    std::string path;        // empty: the embedded default
    std::string valid_path;  // empty: split `valid_ratio` off the training data
    DatasetFormat format = DatasetFormat::Auto;
    double valid_ratio = 0.1;
    std::uint64_t seed = 0;
};

struct DatasetSplit {
    Dataset train;
    Dataset valid;  // shares train's label ids and names
};

// Reads, maps labels to contiguous ids (integers in numeric order, otherwise sorted names;
// the same ids for train and valid), and splits (seeded, stratified-free shuffle; each part
// keeps the file's order). BadInput for a ratio outside [0, 1), fewer than two labels, or a
// validation label that training lacks.
DatasetSplit load_dataset(const DatasetSpec& spec);

// The embedded default dataset: real English text from the Debian `fortunes` package,
// classified by topic file. Throws BadInput saying which package to install when missing.
std::vector<RawExample> read_default_examples();
std::string default_dataset_description();  // honest name shown in the UI and summaries
std::string default_fortunes_dir();         // $OOMLAB_FORTUNES_DIR or /usr/share/games/fortunes

}  // namespace oomlab
