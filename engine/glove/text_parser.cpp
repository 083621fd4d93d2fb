#include "text_parser.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "block_reader.h"
#include "line_parser.h"
#include "oomlab/common/errors.h"
#include "parallel.h"
#include "text_format.h"

namespace oomlab::glove_detail {
namespace {

// Blocks are cut into many slices that threads take as they become free, so a thread the
// system pauses does not hold the others back. Small enough for balance, large enough that the
// bookkeeping per slice does not show.
constexpr std::size_t kSliceBytes = std::size_t{256} << 10;

struct Slice {
    const char* begin = nullptr;
    const char* end = nullptr;
    // Counted in the first pass.
    std::size_t lines = 0;
    std::int64_t rows = 0;
    // Assigned between the passes.
    std::size_t first_line = 0;  // 1-based line number of `begin`
    std::int64_t first_row = 0;
    std::int64_t rows_to_parse = 0;
    // Filled by the second pass; reused from block to block so nothing is allocated per word.
    std::string words;
    std::vector<std::uint32_t> word_lengths;
    std::size_t error_line = 0;
    std::string error;
};

template <typename LineFn>
void for_each_line(const char* p, const char* end, LineFn&& on_line) {
    while (p < end) {
        const auto* newline = static_cast<const char*>(std::memchr(p, '\n', end - p));
        const char* line_end = newline != nullptr ? newline : end;
        if (!on_line(p, line_end)) {
            return;
        }
        p = line_end + (newline != nullptr ? 1 : 0);
    }
}

void count_lines(Slice& slice) {
    slice.lines = 0;
    slice.rows = 0;
    for_each_line(slice.begin, slice.end, [&](const char* begin, const char* end) {
        ++slice.lines;
        slice.rows += is_blank_line(begin, end) ? 0 : 1;
        return true;
    });
}

void parse_slice(Slice& slice, float* matrix, int dim) {
    slice.words.clear();
    slice.word_lengths.clear();
    slice.error.clear();
    float* row = matrix + slice.first_row * dim;
    std::int64_t parsed = 0;
    std::size_t line = slice.first_line;
    for_each_line(slice.begin, slice.end, [&](const char* begin, const char* end) {
        const char* content_end = trim_line_end(begin, end);
        if (content_end != begin) {
            if (parsed == slice.rows_to_parse) {
                return false;
            }
            const char* word_end = parse_vector_line(begin, content_end, dim, row, slice.error);
            if (word_end == nullptr) {
                slice.error_line = line;
                return false;
            }
            slice.words.append(begin, word_end);
            slice.word_lengths.push_back(static_cast<std::uint32_t>(word_end - begin));
            row += dim;
            ++parsed;
        }
        ++line;
        return true;
    });
}

// Cuts `block` at line ends into slices of about kSliceBytes; returns how many.
std::size_t cut_slices(std::string_view block, std::vector<Slice>& slices) {
    const std::size_t wanted = std::max<std::size_t>(1, block.size() / kSliceBytes);
    if (slices.size() < wanted) {
        slices.resize(wanted);
    }
    const char* begin = block.data();
    const char* end = block.data() + block.size();
    const char* cut = begin;
    for (std::size_t i = 0; i < wanted; ++i) {
        slices[i].begin = cut;
        if (i + 1 == wanted) {
            cut = end;
        } else {
            const char* target = std::max(cut, begin + block.size() * (i + 1) / wanted);
            const auto* newline = static_cast<const char*>(std::memchr(target, '\n', end - target));
            cut = newline != nullptr ? newline + 1 : end;
        }
        slices[i].end = cut;
    }
    return wanted;
}

// Gives each slice its first line number and first row, continuing from `row` and `line`
// (advanced past the slices). Returns false when `capacity` (max_rows) cut rows off.
bool assign_rows(std::vector<Slice>& slices, std::size_t used, std::int64_t capacity,
                 std::int64_t& row, std::size_t& line) {
    bool all_rows = true;
    for (std::size_t i = 0; i < used; ++i) {
        Slice& slice = slices[i];
        slice.first_line = line + 1;
        slice.first_row = row;
        slice.rows_to_parse = std::min(slice.rows, capacity - row);
        all_rows = all_rows && slice.rows_to_parse == slice.rows;
        row += slice.rows_to_parse;
        line += slice.lines;
    }
    return all_rows;
}

// Moves the slices' words, in file order, into the table's one blob of word bytes.
void append_words(const std::vector<Slice>& slices, std::size_t used, ParsedText& result) {
    for (std::size_t i = 0; i < used; ++i) {
        const Slice& slice = slices[i];
        result.word_bytes.insert(result.word_bytes.end(), slice.words.begin(), slice.words.end());
        std::uint64_t offset = result.word_offsets.back();
        for (const std::uint32_t length : slice.word_lengths) {
            offset += length;
            result.word_offsets.push_back(offset);
        }
    }
}

// Sizes the word storage from the first block so it is not copied over and over as it grows.
void reserve_words(ParsedText& result, std::int64_t rows_so_far, std::uint64_t bytes_so_far,
                   std::uint64_t file_size, std::int64_t capacity) {
    if (rows_so_far == 0 || bytes_so_far == 0) {
        return;
    }
    const double scale = 1.1 * static_cast<double>(file_size) / static_cast<double>(bytes_so_far);
    const auto rows = std::min(capacity, static_cast<std::int64_t>(rows_so_far * scale) + 1);
    const auto bytes = static_cast<std::size_t>(static_cast<double>(result.word_bytes.size()) *
                                                static_cast<double>(rows) / rows_so_far * 1.1);
    result.word_offsets.reserve(static_cast<std::size_t>(rows) + 1);
    result.word_bytes.reserve(bytes);
}

int resolve_threads(int requested) {
    constexpr int kMaxThreads = 64;
    return std::clamp(requested > 0 ? requested : hardware_threads(), 1, kMaxThreads);
}

}  // namespace

ParsedText parse_vector_text(const std::string& path, const TextParseOptions& options) {
    const int threads = resolve_threads(options.threads);
    BlockReader reader(path, options.block_bytes, threads);
    const std::uint64_t file_size = reader.file_size();
    if (file_size == 0) {
        throw bad_input_at(path, 0, std::string("file is empty; ") + kExpectedShape);
    }
    std::string_view block = reader.next();
    constexpr std::string_view kUtf8ByteOrderMark = "\xEF\xBB\xBF";  // some editors add one
    if (block.substr(0, kUtf8ByteOrderMark.size()) == kUtf8ByteOrderMark) {
        block.remove_prefix(kUtf8ByteOrderMark.size());
    }
    const TextLayout layout = detect_text_layout(path, block, options.expected_dim);
    const int dim = layout.dim;

    ParsedText result;
    result.dim = dim;
    result.format = layout.format;
    // The shortest possible row is " 0 0 ... 0\n" (an empty word): 2 * dim + 1 bytes.
    auto capacity =
        static_cast<std::int64_t>(file_size / (2 * static_cast<std::uint64_t>(dim) + 1) + 1);
    if (options.max_rows > 0) {
        capacity = std::min(capacity, options.max_rows);
    }
    result.matrix = AnonymousRegion(static_cast<std::size_t>(capacity) * dim * sizeof(float));
    auto* matrix = static_cast<float*>(result.matrix.data());
    result.word_offsets.push_back(0);

    const auto workers = static_cast<std::size_t>(threads);
    std::vector<Slice> slices;
    block.remove_prefix(layout.header_bytes);
    std::size_t lines_before = layout.header_bytes > 0 ? 1 : 0;
    bool stopped_early = false;
    while (!block.empty() && !stopped_early) {
        const std::size_t used = cut_slices(block, slices);
        run_tasks(workers, used, [&](std::size_t i) { count_lines(slices[i]); });

        std::int64_t row = result.rows;
        std::size_t line = lines_before;
        stopped_early = !assign_rows(slices, used, capacity, row, line);
        run_tasks(workers, used, [&](std::size_t i) { parse_slice(slices[i], matrix, dim); });

        for (std::size_t i = 0; i < used; ++i) {  // slices are in file order: first error wins
            if (!slices[i].error.empty()) {
                throw bad_input_at(path, slices[i].error_line, slices[i].error);
            }
        }
        append_words(slices, used, result);
        if (result.rows == 0) {
            reserve_words(result, row, reader.consumed(), file_size, capacity);
        }
        result.rows = row;
        lines_before = line;
        if (options.progress) {
            options.progress(static_cast<double>(reader.consumed()) /
                             static_cast<double>(file_size));
        }
        stopped_early = stopped_early || (row == capacity && !reader.at_end());
        if (!stopped_early) {
            block = reader.next();
        }
    }
    result.complete = !stopped_early;

    if (result.rows == 0) {
        throw bad_input_at(path, 0, std::string("has no vectors; ") + kExpectedShape);
    }
    if (result.complete && layout.declared_rows >= 0 && layout.declared_rows != result.rows) {
        throw bad_input_at(path, 1,
                           "word2vec header declares " + std::to_string(layout.declared_rows) +
                               " words but the file has " + std::to_string(result.rows) +
                               "; the file may be truncated (download it again) or the "
                               "header is wrong");
    }
    result.matrix.shrink(static_cast<std::size_t>(result.rows) * dim * sizeof(float));
    return result;
}

}  // namespace oomlab::glove_detail
