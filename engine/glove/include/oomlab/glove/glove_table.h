// Word vectors read from a GloVe text file, a word2vec text file or the binary cache.
//
// A cached table is a read-only memory map: loading it costs one mmap, no parsing, and the
// word index is stored in the cache too. Rows keep file order (GloVe files are sorted by
// frequency), duplicated words keep their row, and find() returns the first occurrence.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

enum class GloveFormat { Glove, Word2VecText, Cache, Synthetic };

std::string_view glove_format_name(
    GloveFormat format);  // "glove", "word2vec", "cache", "synthetic"

enum class GloveCacheMode {
    Off,        // always parse the text
    Read,       // use a valid cache if there is one, never write
    ReadWrite,  // use a valid cache, or write one after parsing (the default)
};

struct GloveLoadOptions {
    int threads = 0;            // 0: one per hardware thread
    std::int64_t max_rows = 0;  // 0: every row; N: only the first N (the N most frequent)
    int expected_dim = 0;       // 0: detect from the file; else a mismatch is an error
    GloveCacheMode cache = GloveCacheMode::ReadWrite;
    std::string cache_dir;  // used when the text file's folder is not writable;
                            // empty: $XDG_CACHE_HOME/oomlab (or ~/.cache/oomlab)
    // Check a cache's vectors against their checksums (a read of every vector shown). Without
    // it only the header and the words are checked: enough to describe the table.
    bool verify_vectors = true;
    // With verify_vectors: check only the vectors of these words, those a run reads (a
    // checksum covers 4,096 rows, so a run that uses 14,000 of 840B's 2.2 million rows reads a
    // fraction of the file). The caller keeps the words while load() runs.
    const std::vector<std::string>* vectors_used = nullptr;
    // Write the cache after load() returns, while the caller goes on (a run trains meanwhile);
    // wait_for_cache_writes() and the process's exit wait for it.
    bool write_cache_in_background = false;
    std::string what = "embeddings.path";           // the setting the path came from, in messages
    std::function<void(double fraction)> progress;  // called from the loading thread
};

class GloveTable {
public:
    GloveTable();  // empty: 0 rows, dim 0

    // Throws BadInput naming the file (and line) for unreadable or malformed files.
    static GloveTable load(const std::string& path, const GloveLoadOptions& options = {});

    // Vectors of the given shape with a GloVe-like value distribution (seeded). The first
    // rows are `leading_words` (so a dataset's words are found), then filler tokens
    // "<synthetic_N>" up to `rows`.
    static GloveTable synthesize(std::int64_t rows, int dim, std::uint64_t seed,
                                 const std::vector<std::string>& leading_words = {});

    std::int64_t size() const;  // rows, duplicates included
    int dim() const;
    std::string_view word(std::int64_t row) const;
    const float* vector(std::int64_t row) const;     // dim() floats
    std::int64_t find(std::string_view word) const;  // row, or -1
    std::int64_t duplicates() const;                 // rows whose word appeared earlier
    GloveFormat format() const;  // of the source text; Cache only for a .cache file given directly
    bool from_cache() const;     // true when this load was served by the binary cache
    const std::string& path() const;  // the file it came from; empty when synthetic
    // What the load had to work around, for the user: empty, or e.g. "the cache ... was
    // damaged (...); the text was read instead".
    const std::string& note() const;

    // Returns once every cache being written in the background is written (or failed).
    static void wait_for_cache_writes();

    // Writes the binary cache (what load() writes next to the text file) to `path`.
    void write_cache(const std::string& path) const;
    // Writes GloVe text: "word v1 ... vD\n" per row.
    void write_text(const std::string& path) const;

    struct Impl;

private:
    explicit GloveTable(std::shared_ptr<const Impl> impl);
    static GloveTable load_unchecked(const std::string& path, const GloveLoadOptions& options);
    std::shared_ptr<const Impl> m_impl;
};

// Whether the file at `path` is a binary cache (by its magic bytes).
bool is_glove_cache(const std::string& path);

// Where load() looks for (and writes) the cache of a text file.
std::string glove_cache_path(const std::string& text_path, const GloveLoadOptions& options = {});

}  // namespace oomlab
