// The embedded default dataset: quotations from the Debian `fortunes` package, one topic
// file per class. Real English text that the setup installs, so a fresh machine needs no
// download.
#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "oomlab/common/files.h"
#include "readers.h"
#include "text_lines.h"

namespace oomlab {
namespace {

constexpr std::array<std::string_view, 4> kTopics = {"computers", "politics", "science", "work"};
constexpr const char* kDefaultFortunesDir = "/usr/share/games/fortunes";
constexpr const char* kFortunesDirVariable = "OOMLAB_FORTUNES_DIR";

std::string topic_list() {
    std::string list;
    for (std::string_view topic : kTopics) {
        list += (list.empty() ? "" : ", ") + std::string(topic);
    }
    return list;
}

std::string topics_name() {
    return "Debian fortunes: " + std::to_string(kTopics.size()) + " topics (" + topic_list() + ")";
}

// Fortune files are plain text with a few typewriter habits: backspace overstrikes for bold
// and underline, tabs for indentation. Undo those and fold all whitespace to single spaces.
std::string normalized_entry(std::string_view entry) {
    std::string text;
    text.reserve(entry.size());
    for (const char c : entry) {
        if (c == '\b') {
            if (!text.empty()) {
                text.pop_back();
            }
        } else if (data_detail::is_space(c)) {
            if (!text.empty() && text.back() != ' ') {
                text += ' ';
            }
        } else if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) {
            text += c;
        }
    }
    return std::string(data_detail::trim(text));
}

void append_entries(const std::string& path, std::string_view topic,
                    std::vector<RawExample>& examples) {
    const std::string content = read_text_input(path, "dataset.path", kMaxDatasetFileBytes);
    std::string entry;
    const auto flush = [&] {
        std::string text = normalized_entry(entry);
        if (!text.empty()) {
            examples.push_back(RawExample{std::move(text), std::string(topic)});
        }
        entry.clear();
    };
    std::size_t start = 0;
    while (start < content.size()) {
        std::size_t end = content.find('\n', start);
        if (end == std::string::npos) {
            end = content.size();
        }
        std::string_view line(content.data() + start, end - start);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        if (line == "%") {
            flush();
        } else {
            entry.append(line).append("\n");
        }
        start = end + 1;
    }
    flush();
}

}  // namespace

std::string default_fortunes_dir() {
    if (const char* dir = std::getenv(kFortunesDirVariable); dir && *dir) {
        return dir;
    }
    return kDefaultFortunesDir;
}

namespace data_detail {

std::string fortunes_description(std::size_t quotations) {
    return topics_name() + ", " + std::to_string(quotations) + " quotations";
}

std::vector<RawExample> read_fortune_topics(const std::string& dir) {
    std::vector<RawExample> examples;
    for (std::string_view topic : kTopics) {
        const std::string path = dir + "/" + std::string(topic);
        if (!std::filesystem::is_regular_file(path)) {
            throw bad_input_at(path, 0,
                               "the default dataset needs the Debian fortune files (topics " +
                                   topic_list() +
                                   "); install them with `apt-get install fortunes`, point " +
                                   kFortunesDirVariable +
                                   " at a folder holding them, or set dataset.path to your own "
                                   "data");
        }
        append_entries(path, topic, examples);
    }
    return examples;
}

}  // namespace data_detail

std::vector<RawExample> read_default_examples() {
    return data_detail::read_fortune_topics(default_fortunes_dir());
}

std::string default_dataset_description() {
    try {
        return data_detail::fortunes_description(read_default_examples().size());
    } catch (const BadInput&) {
        return topics_name() + ", not installed (apt-get install fortunes)";
    }
}

}  // namespace oomlab
