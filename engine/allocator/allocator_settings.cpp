#include "oomlab/allocator/allocator_settings.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <vector>

#include "oomlab/common/errors.h"

namespace oomlab::allocator {
namespace {

constexpr std::int64_t kMiB = 1 << 20;
// Keys PyTorch accepts that change nothing the model decides.
constexpr std::string_view kIgnoredKeys[] = {"backend",
                                             "pinned_use_cuda_host_register",
                                             "pinned_num_register_threads",
                                             "pinned_use_background_threads",
                                             "release_lock_on_cudamalloc",
                                             "graph_capture_record_stream_reuse",
                                             "per_process_memory_fraction",
                                             "pinned_reserve_segment_size_mb"};

[[noreturn]] void refuse(std::string_view key, std::string_view value, std::string_view wants) {
    throw BadInput("PYTORCH_CUDA_ALLOC_CONF: " + std::string(key) + ":" + std::string(value) +
                   ": " + std::string(wants));
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    return text;
}

std::optional<std::int64_t> whole_number(std::string_view text) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

bool power_of_two(std::int64_t value) {
    return value > 0 && (value & (value - 1)) == 0;
}

int log2_floor(std::int64_t value) {
    int log = -1;
    for (; value > 0; value >>= 1) {
        ++log;
    }
    return log;
}

// CONF's "key:value" items; commas inside [...] belong to a list value.
std::vector<std::string_view> items_of(std::string_view conf) {
    std::vector<std::string_view> items;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= conf.size(); ++i) {
        if (i == conf.size() || (conf[i] == ',' && depth == 0)) {
            if (const std::string_view item = trim(conf.substr(start, i - start)); !item.empty()) {
                items.push_back(item);
            }
            start = i + 1;
        } else if (conf[i] == '[') {
            ++depth;
        } else if (conf[i] == ']') {
            --depth;
        }
    }
    return items;
}

// An item's key and value ("key:value", each trimmed); `has_colon` false for a bare "key".
struct Item {
    std::string_view key;
    std::string_view value;
    bool has_colon = false;
};
Item split_item(std::string_view item) {
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
        return {trim(item), {}, false};
    }
    return {trim(item.substr(0, colon)), trim(item.substr(colon + 1)), true};
}

int division_count(std::string_view key, std::string_view value, std::string_view text) {
    const auto count = whole_number(trim(text));
    if (!count || (*count != 0 && !power_of_two(*count)) || *count > (1 << 20)) {
        refuse(key, value, "the divisions must be 0 or a power of 2, e.g. 4");
    }
    return static_cast<int>(*count);
}

// "4", or "[256:1,512:2,>:4]": per interval, from its lower bound in MiB (a power of 2) on.
void read_divisions(std::string_view value, AllocatorSettings& settings) {
    constexpr std::string_view key = "roundup_power2_divisions";
    auto& divisions = settings.roundup_power2_divisions;
    if (value.empty() || value.front() != '[') {
        divisions.fill(division_count(key, value, value));
        return;
    }
    if (value.back() != ']') {
        refuse(key, value, "a list is written [SIZE_MB:DIVISIONS,...,>:DIVISIONS]");
    }
    bool first = true;
    std::size_t last = 0;
    for (const std::string_view pair : items_of(value.substr(1, value.size() - 2))) {
        const std::size_t colon = pair.find(':');
        if (colon == std::string_view::npos) {
            refuse(key, value, "each entry is SIZE_MB:DIVISIONS");
        }
        const int count = division_count(key, value, pair.substr(colon + 1));
        const std::string_view size = trim(pair.substr(0, colon));
        if (size == ">") {
            std::fill(divisions.begin() + std::min(last + 1, divisions.size()), divisions.end(),
                      count);
            continue;
        }
        const auto mib = whole_number(size);
        if (!mib || !power_of_two(*mib)) {
            refuse(key, value, "each interval starts at a power of 2 MiB (or is >)");
        }
        const std::size_t index = std::min<std::size_t>(log2_floor(*mib), divisions.size() - 1);
        if (first) {
            std::fill(divisions.begin(), divisions.begin() + index, count);
            first = false;
        }
        divisions[index] = count;
        last = index;
    }
}

bool truth(std::string_view key, std::string_view value) {
    if (value == "True" || value == "true" || value == "1") {
        return true;
    }
    if (value == "False" || value == "false" || value == "0") {
        return false;
    }
    refuse(key, value, "True or False");
}

}  // namespace

bool AllocatorSettings::operator==(const AllocatorSettings& other) const {
    return max_split_size == other.max_split_size &&
           roundup_power2_divisions == other.roundup_power2_divisions &&
           garbage_collection_threshold == other.garbage_collection_threshold &&
           expandable_segments == other.expandable_segments;
}

AllocatorSettings parse_alloc_conf(std::string_view conf) {
    AllocatorSettings settings;
    for (const std::string_view item : items_of(conf)) {
        const auto [key, value, has_colon] = split_item(item);
        if (!has_colon || value.empty()) {
            throw BadInput("PYTORCH_CUDA_ALLOC_CONF: \"" + std::string(item) +
                           "\" has no value: write KEY:VALUE, e.g. expandable_segments:True");
        }
        if (key == "max_split_size_mb") {
            const auto mib = whole_number(value);
            if (!mib || *mib <= 20 || *mib > (std::int64_t(1) << 40)) {
                refuse(key, value, "a whole number of MiB above 20 (PyTorch's smallest)");
            }
            settings.max_split_size = *mib * kMiB;
        } else if (key == "roundup_power2_divisions") {
            read_divisions(value, settings);
        } else if (key == "garbage_collection_threshold") {
            double threshold = 0;
            const auto [end, error] =
                std::from_chars(value.data(), value.data() + value.size(), threshold);
            // Written so that NaN fails too (every comparison with it is false).
            if (error != std::errc() || end != value.data() + value.size() ||
                !(threshold > 0 && threshold < 1)) {
                refuse(key, value, "a fraction between 0 and 1, e.g. 0.6");
            }
            settings.garbage_collection_threshold = threshold;
        } else if (key == "expandable_segments") {
            settings.expandable_segments = truth(key, value);
        } else if (std::find(std::begin(kIgnoredKeys), std::end(kIgnoredKeys), key) ==
                   std::end(kIgnoredKeys)) {
            throw BadInput("PYTORCH_CUDA_ALLOC_CONF: unknown key \"" + std::string(key) +
                           "\": the allocator's keys are max_split_size_mb, "
                           "roundup_power2_divisions, garbage_collection_threshold and "
                           "expandable_segments");
        }
    }
    return settings;
}

std::vector<std::string> settings_not_replayed(std::string_view conf) {
    std::vector<std::string> notes;
    try {
        parse_alloc_conf(conf);
    } catch (const BadInput&) {
        return notes;
    }
    for (const std::string_view item : items_of(conf)) {
        const auto [key, value, has_colon] = split_item(item);
        if (key == "backend" && value == "cudaMallocAsync") {
            notes.push_back(
                "backend:cudaMallocAsync: the program used CUDA's own asynchronous allocator, "
                "not the caching allocator this replays; the figures are what PyTorch's native "
                "allocator would do with the same requests");
        } else if (key == "per_process_memory_fraction") {
            notes.push_back("per_process_memory_fraction:" + std::string(value) +
                            ": a cap the replay does not read from here; give the memory the "
                            "allocator may reserve with --device-memory (or memory.cap_mb)");
        }
    }
    return notes;
}

bool expandable_segments_on(std::string_view conf) {
    try {
        return parse_alloc_conf(conf).expandable_segments;
    } catch (const BadInput&) {
        return false;
    }
}

std::string to_alloc_conf(const AllocatorSettings& settings) {
    std::vector<std::string> items;
    if (settings.expandable_segments) {
        items.push_back("expandable_segments:True");
    }
    if (settings.max_split_size != AllocatorSettings::kNoMaxSplit) {
        items.push_back("max_split_size_mb:" + std::to_string(settings.max_split_size / kMiB));
    }
    const auto& divisions = settings.roundup_power2_divisions;
    if (std::any_of(divisions.begin(), divisions.end(), [](int d) { return d != 0; })) {
        const bool uniform = std::all_of(divisions.begin(), divisions.end(),
                                         [&](int d) { return d == divisions.front(); });
        std::string text = "roundup_power2_divisions:";
        if (uniform) {
            text += std::to_string(divisions.front());
        } else {
            text += "[";
            for (std::size_t i = 0; i < divisions.size(); ++i) {
                text += (i ? "," : "") + std::to_string(std::int64_t(1) << i) + ":" +
                        std::to_string(divisions[i]);
            }
            text += "]";
        }
        items.push_back(text);
    }
    if (settings.garbage_collection_threshold > 0) {
        // The shortest text that reads back as the same number (1e-07, 0.9999999): six fixed
        // decimals wrote both as thresholds of 0 and 1, which a snapshot's reader then refused.
        char threshold[32];
        const auto written = std::to_chars(threshold, threshold + sizeof threshold,
                                           settings.garbage_collection_threshold);
        items.push_back("garbage_collection_threshold:" + std::string(threshold, written.ptr));
    }
    std::string conf;
    for (const std::string& item : items) {
        conf += (conf.empty() ? "" : ",") + item;
    }
    return conf;
}

}  // namespace oomlab::allocator
