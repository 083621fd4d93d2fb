#include "oomlab/glove/glove_table.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "glove_cache.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "oomlab/common/paths.h"
#include "table_impl.h"
#include "text_parser.h"
#include "word_index.h"

namespace oomlab {

using namespace glove_detail;
namespace fs = std::filesystem;

namespace {

bool folder_is_writable(const std::string& file_path) {
    const fs::path folder = fs::path(file_path).parent_path();
    return access(folder.empty() ? "." : folder.c_str(), W_OK) == 0;
}

// In the per-user cache folder the name carries a hash of the text's absolute path, so two
// files named alike in different folders get different caches.
std::string shared_cache_path(const std::string& text_path, const GloveLoadOptions& options) {
    const std::string folder = options.cache_dir.empty() ? user_cache_dir() : options.cache_dir;
    const std::string absolute = fs::absolute(text_path).lexically_normal().string();
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(word_hash(absolute)));
    return folder + "/" + fs::path(text_path).filename().string() + "." + hash + kCacheSuffix;
}

std::string beside_path(const std::string& text_path) {
    return text_path + kCacheSuffix;
}

// The blocks of a cache's vectors a load checks: none without verify_vectors; those holding
// the words of vectors_used (the rows a run reads); else every row the table shows.
std::vector<std::uint64_t> blocks_to_check(const GloveTable::Impl& table,
                                           const GloveLoadOptions& options) {
    std::vector<std::uint64_t> blocks;
    if (!options.verify_vectors) {
        return blocks;
    }
    const std::int64_t shown =
        options.max_rows > 0 ? std::min(options.max_rows, table.rows) : table.rows;
    if (!options.vectors_used) {
        for (std::int64_t row = 0; row < shown; row += std::int64_t(kVectorBlockRows)) {
            blocks.push_back(std::uint64_t(row) / kVectorBlockRows);
        }
        return blocks;
    }
    for (const std::string& word : *options.vectors_used) {
        const std::int64_t row = find_word(table.index_slots, table.index_slot_count,
                                           table.word_offsets, table.word_bytes, shown, word);
        if (row >= 0) {
            blocks.push_back(std::uint64_t(row) / kVectorBlockRows);
        }
    }
    std::sort(blocks.begin(), blocks.end());
    blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
    return blocks;
}

// Where a cache of `text_path` may be; a stale or damaged one is skipped, and a damaged one
// is mentioned in `note`.
std::shared_ptr<GloveTable::Impl> find_valid_cache(const std::string& text_path,
                                                   const GloveLoadOptions& options,
                                                   const CacheSource& source, std::string& note) {
    for (const std::string& candidate :
         {beside_path(text_path), shared_cache_path(text_path, options)}) {
        // A cache that cannot be reached (a symlink loop, a folder without access) is no cache:
        // the text is read instead of the run failing on a filesystem error.
        std::error_code unreachable;
        if (!fs::is_regular_file(candidate, unreachable) || !looks_like_cache(candidate)) {
            continue;
        }
        std::string why_not;
        auto table = open_cache_file(candidate, &source, why_not);
        if (table) {
            why_not = damaged_vectors(*table, blocks_to_check(*table, options));
        }
        if (table && why_not.empty()) {
            table->path = text_path;
            return table;
        }
        if (why_not.rfind(kDamaged, 0) == 0) {
            note = "the cache " + candidate + " is " + why_not + "; read " + text_path + " instead";
        }
    }
    return nullptr;
}

// Whether `text_path` is still the file `source` describes.
bool same_source(const CacheSource& source, const std::string& text_path) {
    try {
        const CacheSource now = stat_source(text_path);
        return now.size == source.size && now.mtime_ns == source.mtime_ns &&
               now.inode == source.inode;
    } catch (const BadInput&) {
        return false;
    }
}

// The cache only saves time, so failing to write it is not an error of the load.
void try_write_cache(const GloveTable::Impl& table, const std::string& text_path,
                     const GloveLoadOptions& options) {
    std::vector<std::string> targets = {glove_cache_path(text_path, options)};
    if (targets.front() == beside_path(text_path)) {
        targets.push_back(shared_cache_path(text_path, options));
    }
    for (const std::string& target : targets) {
        try {
            const fs::path folder = fs::path(target).parent_path();
            if (!folder.empty()) {
                fs::create_directories(folder);
            }
            // The cache's name is reserved (a damaged cache is replaced), but never a folder,
            // a device or the text itself.
            check_output_path(target, {"the GloVe cache", {text_path}, /*force=*/true, {}});
            write_cache_file(table, target);
            // The text deleted or changed while its cache was written: a cache of a file that
            // is no longer there would only take its room (248 MB for 6B.300d).
            if (!same_source(table.source, text_path)) {
                fs::remove(target);
            }
            return;
        } catch (const std::exception&) {
            // try the next place
        }
    }
}

// Caches written after load() returned (write_cache_in_background): a first run on a large
// file trains while its cache is written (840B's is 2.7 GB, 7 s to write here). Each write
// holds its table; all are waited for at exit, and a cache is renamed into place only whole.
class BackgroundCacheWrites {
public:
    ~BackgroundCacheWrites() { wait(); }

    void start(std::shared_ptr<const GloveTable::Impl> table, std::string text_path,
               GloveLoadOptions options) {
        options.progress = nullptr;  // the caller's may be gone by then
        options.vectors_used = nullptr;
        const std::lock_guard lock(m_mutex);
        m_writes.emplace_back([table = std::move(table), text_path = std::move(text_path),
                               options = std::move(options)] {
            if (fs::exists(text_path)) {  // not for a file (and folder) deleted meanwhile
                try_write_cache(*table, text_path, options);
            }
        });
    }

    void wait() {
        std::vector<std::thread> writes;
        {
            const std::lock_guard lock(m_mutex);
            writes.swap(m_writes);
        }
        for (std::thread& write : writes) {
            write.join();
        }
    }

private:
    std::mutex m_mutex;
    std::vector<std::thread> m_writes;
};

BackgroundCacheWrites& background_cache_writes() {
    static BackgroundCacheWrites writes;
    return writes;
}

void check_expected_dim(const GloveTable::Impl& table, const GloveLoadOptions& options) {
    if (options.expected_dim != 0 && options.expected_dim != table.dim) {
        throw bad_input_at(table.path, 0,
                           "has " + std::to_string(table.dim) + " values per word, but " +
                               std::to_string(options.expected_dim) + " were expected");
    }
}

// Hides rows past max_rows; the index and duplicate list stay shared with the full table.
void limit_rows(GloveTable::Impl& table, std::int64_t max_rows) {
    if (max_rows <= 0 || max_rows >= table.rows) {
        return;
    }
    table.rows = max_rows;
    const std::uint64_t* end = table.duplicate_rows + table.duplicate_row_count;
    table.duplicates =
        std::lower_bound(table.duplicate_rows, end, static_cast<std::uint64_t>(max_rows)) -
        table.duplicate_rows;
}

std::shared_ptr<GloveTable::Impl> from_parsed(ParsedText parsed) {
    auto table = std::make_shared<GloveTable::Impl>();
    table->rows = parsed.rows;
    table->dim = parsed.dim;
    table->format = parsed.format;
    table->matrix_storage = std::move(parsed.matrix);
    table->matrix = static_cast<const float*>(table->matrix_storage.data());
    table->offsets_storage = std::move(parsed.word_offsets);
    table->bytes_storage = std::move(parsed.word_bytes);
    WordIndex index =
        build_word_index(table->offsets_storage.data(), table->bytes_storage.data(), table->rows);
    table->index_storage = std::move(index.slots);
    table->duplicates_storage = std::move(index.duplicate_rows);
    table->use_owned_words_and_index();
    return table;
}

}  // namespace

void GloveTable::Impl::use_owned_words_and_index() {
    word_offsets = offsets_storage.data();
    word_bytes = bytes_storage.data();
    index_slots = index_storage.data();
    index_slot_count = index_storage.size();
    index_rows = rows;
    duplicate_rows = duplicates_storage.data();
    duplicate_row_count = static_cast<std::int64_t>(duplicates_storage.size());
    duplicates = duplicate_row_count;
}

std::string_view glove_format_name(GloveFormat format) {
    switch (format) {
        case GloveFormat::Glove:
            return "glove";
        case GloveFormat::Word2VecText:
            return "word2vec";
        case GloveFormat::Cache:
            return "cache";
        case GloveFormat::Synthetic:
            return "synthetic";
    }
    return "unknown";
}

bool is_glove_cache(const std::string& path) {
    return looks_like_cache(path);
}

std::string glove_cache_path(const std::string& text_path, const GloveLoadOptions& options) {
    return folder_is_writable(text_path) ? beside_path(text_path)
                                         : shared_cache_path(text_path, options);
}

GloveTable::GloveTable() : m_impl(std::make_shared<const Impl>()) {}

GloveTable::GloveTable(std::shared_ptr<const Impl> impl) : m_impl(std::move(impl)) {}

GloveTable GloveTable::load(const std::string& path, const GloveLoadOptions& options) {
    try {
        return load_unchecked(path, options);
    } catch (const BadInput& error) {
        if (error.keys().empty()) {
            throw BadInput(error.what(), {options.what});  // about the file that key names
        }
        throw;
    }
}

GloveTable GloveTable::load_unchecked(const std::string& path, const GloveLoadOptions& options) {
    if (options.max_rows < 0) {
        throw bad_input_at(path, 0, "max_rows must be 0 (all rows) or positive");
    }
    check_input_path(path, options.what);
    const CacheSource source = stat_source(path);
    if (looks_like_cache(path)) {
        std::string why_not;
        auto table = open_cache_file(path, nullptr, why_not);
        if (table) {
            why_not = damaged_vectors(*table, blocks_to_check(*table, options));
        }
        if (!why_not.empty()) {
            table = nullptr;
        }
        if (!table) {
            throw bad_input_at(path, 0,
                               "cannot use this cache file (" + why_not +
                                   "); delete it and load the text file instead");
        }
        table->format = GloveFormat::Cache;
        check_expected_dim(*table, options);
        limit_rows(*table, options.max_rows);
        if (options.progress) {
            options.progress(1.0);
        }
        return GloveTable(std::move(table));
    }
    std::string note;
    if (options.cache != GloveCacheMode::Off) {
        if (auto table = find_valid_cache(path, options, source, note)) {
            check_expected_dim(*table, options);
            limit_rows(*table, options.max_rows);
            if (options.progress) {
                options.progress(1.0);
            }
            return GloveTable(std::move(table));
        }
    }

    TextParseOptions parse_options;
    parse_options.threads = options.threads;
    parse_options.max_rows = options.max_rows;
    parse_options.expected_dim = options.expected_dim;
    parse_options.progress = options.progress;
    ParsedText parsed = parse_vector_text(path, parse_options);
    const bool complete = parsed.complete;
    auto table = from_parsed(std::move(parsed));
    table->path = path;
    table->source = source;
    table->note = std::move(note);
    if (options.cache == GloveCacheMode::ReadWrite && complete) {
        if (options.write_cache_in_background) {
            background_cache_writes().start(table, path, options);
        } else {
            try_write_cache(*table, path, options);
        }
    }
    return GloveTable(std::move(table));
}

void GloveTable::wait_for_cache_writes() {
    background_cache_writes().wait();
}

std::int64_t GloveTable::size() const {
    return m_impl->rows;
}

int GloveTable::dim() const {
    return m_impl->dim;
}

std::string_view GloveTable::word(std::int64_t row) const {
    if (row < 0 || row >= m_impl->rows) {
        throw std::out_of_range("GloveTable::word: row " + std::to_string(row) + " of " +
                                std::to_string(m_impl->rows));
    }
    const std::uint64_t begin = m_impl->word_offsets[row];
    return {m_impl->word_bytes + begin,
            static_cast<std::size_t>(m_impl->word_offsets[row + 1] - begin)};
}

const float* GloveTable::vector(std::int64_t row) const {
    if (row < 0 || row >= m_impl->rows) {
        throw std::out_of_range("GloveTable::vector: row " + std::to_string(row) + " of " +
                                std::to_string(m_impl->rows));
    }
    return m_impl->matrix + row * m_impl->dim;
}

std::int64_t GloveTable::find(std::string_view word) const {
    return find_word(m_impl->index_slots, m_impl->index_slot_count, m_impl->word_offsets,
                     m_impl->word_bytes, m_impl->rows, word);
}

std::int64_t GloveTable::duplicates() const {
    return m_impl->duplicates;
}

GloveFormat GloveTable::format() const {
    return m_impl->format;
}

bool GloveTable::from_cache() const {
    return m_impl->from_cache;
}

const std::string& GloveTable::path() const {
    return m_impl->path;
}

const std::string& GloveTable::note() const {
    return m_impl->note;
}

void GloveTable::write_cache(const std::string& path) const {
    write_cache_file(*m_impl, path);
}

}  // namespace oomlab
