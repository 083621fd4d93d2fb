// Multi-threaded parsing of GloVe / word2vec text in bounded memory.
//
// The file is read in blocks into one reusable buffer (never whole, never mapped). Each block
// is cut at line ends into one slice per thread; threads first count their lines, then parse
// their slice straight into its final rows of the matrix. The matrix lives in an anonymous
// reservation sized from the file size, so it never moves or doubles while it grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memory_map.h"
#include "oomlab/glove/glove_table.h"

namespace oomlab::glove_detail {

struct TextParseOptions {
    int threads = 0;  // 0: one per hardware thread
    std::int64_t max_rows = 0;
    int expected_dim = 0;
    std::size_t block_bytes = std::size_t{4} << 20;  // per read; small enough to stay cached
    std::function<void(double)> progress;
};

struct ParsedText {
    AnonymousRegion matrix;  // rows x dim floats at its start
    std::int64_t rows = 0;
    int dim = 0;
    GloveFormat format = GloveFormat::Glove;
    std::vector<std::uint64_t> word_offsets;  // rows + 1
    std::vector<char> word_bytes;
    bool complete = false;  // every line was read (max_rows did not stop it early)
};

// Throws BadInput naming the file and line for unreadable or malformed text.
ParsedText parse_vector_text(const std::string& path, const TextParseOptions& options);

}  // namespace oomlab::glove_detail
