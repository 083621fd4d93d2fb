// Folder per class: <path>/<class>/<any file>. Classes and files are read in sorted order so
// that the examples come out the same on every file system.
#include <algorithm>
#include <filesystem>
#include <string>

#include "oomlab/common/files.h"
#include "readers.h"
#include "text_lines.h"

namespace fs = std::filesystem;

namespace oomlab::data_detail {
namespace {

bool is_hidden(const fs::path& path) {
    const std::string name = path.filename().string();
    return !name.empty() && name.front() == '.';
}

std::vector<fs::path> sorted_entries(const fs::path& dir, bool want_directories) {
    std::vector<fs::path> entries;
    try {
        for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
            const bool matches = want_directories ? entry.is_directory() : entry.is_regular_file();
            if (matches && !is_hidden(entry.path())) {
                entries.push_back(entry.path());
            }
        }
    } catch (const fs::filesystem_error& error) {
        throw bad_input_at(dir.string(), 0,
                           std::string("cannot list the folder: ") + error.code().message());
    }
    std::sort(entries.begin(), entries.end());
    return entries;
}

}  // namespace

std::vector<RawExample> read_class_folders(const std::string& path, const std::string& key) {
    const std::vector<fs::path> class_dirs = sorted_entries(path, true);
    if (class_dirs.empty()) {
        throw bad_input_at(path, 0,
                           "the folder has no sub-folders; a folder dataset needs one sub-folder "
                           "per class (e.g. pos/ and neg/) holding one text file per example");
    }
    std::vector<RawExample> examples;
    for (const fs::path& class_dir : class_dirs) {
        const std::vector<fs::path> files = sorted_entries(class_dir, false);
        if (files.empty()) {
            throw bad_input_at(class_dir.string(), 0,
                               "this class folder holds no files; add examples or remove it");
        }
        const std::string label = class_dir.filename().string();
        for (const fs::path& file : files) {
            const std::string content = read_text_input(file.string(), key, kMaxDatasetFileBytes);
            std::string text(trim(strip_bom(content)));
            if (text.empty()) {
                throw bad_input_at(file.string(), 0, "the file is empty; remove it or add text");
            }
            examples.push_back(RawExample{std::move(text), label});
        }
    }
    return examples;
}

}  // namespace oomlab::data_detail
