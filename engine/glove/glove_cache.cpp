#include "glove_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "oomlab/common/atomic_file.h"
#include "oomlab/common/errors.h"
#include "parallel.h"
#include "word_index.h"

namespace oomlab::glove_detail {
namespace {

constexpr char kMagic[8] = {'O', 'O', 'M', 'G', 'L', 'O', 'V', 'E'};
constexpr std::uint32_t kCacheVersion = 3;  // 2: source ctime and inode, section checksums;
                                            // 3: a checksum per block of vectors
constexpr std::uint32_t kByteOrderMark = 0x01020304;
constexpr std::uint64_t kMatrixOffset = 4096;  // page aligned, so the mapped matrix is too
constexpr std::uint64_t kSectionAlignment = 64;
constexpr std::uint64_t kMaxRows = 0xFFFFFFFEull;  // the index stores row + 1 in 32 bits
constexpr std::uint64_t kMaxDim = 1u << 20;

struct CacheHeader {
    char magic[8];
    std::uint32_t version;
    std::uint32_t byte_order;
    std::uint64_t file_bytes;
    std::uint64_t rows;
    std::uint32_t dim;
    std::uint32_t source_format;
    std::uint64_t source_size;
    std::int64_t source_mtime_ns;
    std::int64_t source_ctime_ns;  // the kernel sets it on every change: a text edited back to
    std::uint64_t source_inode;    // the same size and mtime still differs here
    std::uint64_t matrix_offset;
    std::uint64_t offsets_offset;
    std::uint64_t words_offset;
    std::uint64_t words_bytes;
    std::uint64_t index_offset;
    std::uint64_t index_slots;
    std::uint64_t duplicates_offset;
    std::uint64_t duplicates;
    std::uint64_t matrix_hash;  // content_hash of the vector blocks' checksums
    std::uint64_t words_hash;   // of the word offsets, word bytes, index and duplicates
    std::uint64_t header_hash;  // of every byte above
};
static_assert(sizeof(CacheHeader) == 160, "the header layout is part of the file format");

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

std::uint64_t hash_header(const CacheHeader& header) {
    return word_hash(std::string_view(reinterpret_cast<const char*>(&header),
                                      offsetof(CacheHeader, header_hash)));
}

std::uint64_t vector_blocks(std::uint64_t rows) {
    return (rows + kVectorBlockRows - 1) / kVectorBlockRows;
}

// The vector blocks' checksums come last.
std::uint64_t blocks_offset(const CacheHeader& header) {
    return header.duplicates_offset + header.duplicates * sizeof(std::uint64_t);
}

// The checksum of the vectors of rows [block * kVectorBlockRows, ...) of a table of `rows`.
std::uint64_t hash_vector_block(const float* matrix, std::uint64_t rows, std::uint64_t dim,
                                std::uint64_t block) {
    const std::uint64_t first = block * kVectorBlockRows;
    const std::uint64_t count = std::min<std::uint64_t>(kVectorBlockRows, rows - first);
    return content_hash(matrix + first * dim, count * dim * sizeof(float));
}

// Section offsets follow from the sizes alone, so a reader recomputes and compares them.
void lay_out(CacheHeader& header) {
    header.matrix_offset = kMatrixOffset;
    header.offsets_offset =
        align_up(kMatrixOffset + header.rows * header.dim * sizeof(float), kSectionAlignment);
    header.words_offset = header.offsets_offset + (header.rows + 1) * sizeof(std::uint64_t);
    header.index_offset = align_up(header.words_offset + header.words_bytes, kSectionAlignment);
    header.duplicates_offset = header.index_offset + header.index_slots * sizeof(std::uint64_t);
    header.file_bytes = blocks_offset(header) + vector_blocks(header.rows) * sizeof(std::uint64_t);
}

// Checks what the reader will index with: offsets start at 0, never decrease, and end at the
// word bytes' size; duplicate rows ascend and stay in range.
bool sections_are_consistent(const CacheHeader& header, const char* base) {
    const auto* offsets = reinterpret_cast<const std::uint64_t*>(base + header.offsets_offset);
    if (offsets[0] != 0 || offsets[header.rows] != header.words_bytes) {
        return false;
    }
    for (std::uint64_t row = 0; row < header.rows; ++row) {
        if (offsets[row + 1] < offsets[row]) {
            return false;
        }
    }
    const auto* duplicates =
        reinterpret_cast<const std::uint64_t*>(base + header.duplicates_offset);
    for (std::uint64_t i = 0; i < header.duplicates; ++i) {
        if (duplicates[i] >= header.rows || (i > 0 && duplicates[i] <= duplicates[i - 1])) {
            return false;
        }
    }
    return true;
}

// Everything but the matrix, hashed section by section (the padding between them is not).
std::uint64_t hash_words(const CacheHeader& header, const char* base) {
    std::uint64_t hash =
        content_hash(base + header.offsets_offset, (header.rows + 1) * sizeof(std::uint64_t));
    hash = content_hash(base + header.words_offset, header.words_bytes, hash);
    hash =
        content_hash(base + header.index_offset, header.index_slots * sizeof(std::uint64_t), hash);
    return content_hash(base + header.duplicates_offset, header.duplicates * sizeof(std::uint64_t),
                        hash);
}

std::string check_header(const CacheHeader& header, std::uint64_t file_bytes) {
    if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) {
        return "not a cache file";
    }
    if (header.byte_order != kByteOrderMark) {
        return "written on a machine with another byte order";
    }
    if (header.version != kCacheVersion) {
        return "cache format version " + std::to_string(header.version) + ", expected " +
               std::to_string(kCacheVersion);
    }
    if (header.header_hash != hash_header(header)) {
        return "damaged header";
    }
    if (header.rows == 0 || header.rows > kMaxRows || header.dim == 0 || header.dim > kMaxDim ||
        header.index_slots != index_slot_count(static_cast<std::int64_t>(header.rows)) ||
        header.duplicates > header.rows || header.words_bytes > file_bytes ||
        header.source_format > static_cast<std::uint32_t>(GloveFormat::Synthetic)) {
        return "damaged header";
    }
    CacheHeader expected = header;
    lay_out(expected);
    if (std::memcmp(&expected, &header, sizeof header) != 0) {
        return "damaged header";
    }
    if (header.file_bytes != file_bytes) {
        return "truncated or damaged (" + std::to_string(file_bytes) + " bytes, expected " +
               std::to_string(header.file_bytes) + ")";
    }
    return {};
}

}  // namespace

CacheSource stat_source(const std::string& path) {
    const std::optional<FileStamp> stamp = stamp_of(path);
    if (!stamp) {
        throw bad_input_at(path, 0, std::string("cannot open: ") + std::strerror(errno));
    }
    return *stamp;
}

bool looks_like_cache(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    char magic[sizeof kMagic] = {};
    const bool matches = pread(fd, magic, sizeof magic, 0) == static_cast<ssize_t>(sizeof magic) &&
                         std::memcmp(magic, kMagic, sizeof kMagic) == 0;
    close(fd);
    return matches;
}

void write_cache_file(const GloveTable::Impl& table, const std::string& path) {
    if (table.rows == 0) {
        throw Error("cannot write a cache of an empty table to " + path);
    }
    const auto rows = static_cast<std::uint64_t>(table.rows);
    // A table cut short by max_rows shares a longer table's index: index its rows afresh.
    WordIndex fresh;
    const std::uint64_t* slots = table.index_slots;
    std::uint64_t slot_count = table.index_slot_count;
    const std::uint64_t* duplicate_rows = table.duplicate_rows;
    if (table.index_rows != table.rows) {
        fresh = build_word_index(table.word_offsets, table.word_bytes, table.rows);
        slots = fresh.slots.data();
        slot_count = fresh.slots.size();
        duplicate_rows = fresh.duplicate_rows.data();
    }

    CacheHeader header{};
    std::memcpy(header.magic, kMagic, sizeof kMagic);
    header.version = kCacheVersion;
    header.byte_order = kByteOrderMark;
    header.rows = rows;
    header.dim = static_cast<std::uint32_t>(table.dim);
    header.source_format = static_cast<std::uint32_t>(table.format);
    header.source_size = table.source.size;
    header.source_mtime_ns = table.source.mtime_ns;
    header.source_ctime_ns = table.source.ctime_ns;
    header.source_inode = table.source.inode;
    header.words_bytes = table.word_offsets[rows];
    header.index_slots = slot_count;
    header.duplicates = static_cast<std::uint64_t>(table.duplicates);
    lay_out(header);
    std::vector<std::uint64_t> block_hashes(vector_blocks(rows));
    run_parallel(std::size_t(hardware_threads()), [&](std::size_t part) {
        for (std::size_t block = part; block < block_hashes.size();
             block += std::size_t(hardware_threads())) {
            block_hashes[block] = hash_vector_block(table.matrix, rows, header.dim, block);
        }
    });
    header.matrix_hash =
        content_hash(block_hashes.data(), block_hashes.size() * sizeof(std::uint64_t));
    std::uint64_t words_hash = content_hash(table.word_offsets, (rows + 1) * sizeof(std::uint64_t));
    words_hash = content_hash(table.word_bytes, header.words_bytes, words_hash);
    words_hash = content_hash(slots, slot_count * sizeof(std::uint64_t), words_hash);
    header.words_hash =
        content_hash(duplicate_rows, header.duplicates * sizeof(std::uint64_t), words_hash);
    header.header_hash = hash_header(header);

    AtomicFile file(path);
    file.write_at(0, &header, sizeof header);
    file.write_at(header.matrix_offset, table.matrix, rows * header.dim * sizeof(float));
    file.write_at(header.offsets_offset, table.word_offsets, (rows + 1) * sizeof(std::uint64_t));
    file.write_at(header.words_offset, table.word_bytes, header.words_bytes);
    file.write_at(header.index_offset, slots, slot_count * sizeof(std::uint64_t));
    file.write_at(header.duplicates_offset, duplicate_rows,
                  header.duplicates * sizeof(std::uint64_t));
    file.write_at(blocks_offset(header), block_hashes.data(),
                  block_hashes.size() * sizeof(std::uint64_t));
    file.commit(header.file_bytes);
}

std::shared_ptr<GloveTable::Impl> open_cache_file(const std::string& path,
                                                  const CacheSource* source, std::string& why_not) {
    MappedFile file;
    try {
        file = MappedFile(path);
    } catch (const BadInput& error) {
        why_not = error.what();
        return nullptr;
    }
    CacheHeader header{};
    if (file.size() < sizeof header) {
        why_not = "too short to be a cache file";
        return nullptr;
    }
    std::memcpy(&header, file.data(), sizeof header);
    why_not = check_header(header, file.size());
    if (why_not.empty() && source != nullptr &&
        (header.source_size != source->size || header.source_mtime_ns != source->mtime_ns ||
         header.source_ctime_ns != source->ctime_ns || header.source_inode != source->inode)) {
        why_not = "made from another version of the text file";
    }
    if (why_not.empty() && (!sections_are_consistent(header, file.data()) ||
                            hash_words(header, file.data()) != header.words_hash)) {
        why_not = kDamaged + std::string(" (the words do not match their checksum)");
    }
    const auto* block_hashes =
        reinterpret_cast<const std::uint64_t*>(file.data() + blocks_offset(header));
    if (why_not.empty() &&
        content_hash(block_hashes, vector_blocks(header.rows) * sizeof(std::uint64_t)) !=
            header.matrix_hash) {
        why_not = kDamaged + std::string(" (the vectors' checksums do not match theirs)");
    }
    if (!why_not.empty()) {
        return nullptr;
    }

    auto table = std::make_shared<GloveTable::Impl>();
    const char* base = file.data();
    table->rows = static_cast<std::int64_t>(header.rows);
    table->dim = static_cast<int>(header.dim);
    table->matrix = reinterpret_cast<const float*>(base + header.matrix_offset);
    table->word_offsets = reinterpret_cast<const std::uint64_t*>(base + header.offsets_offset);
    table->word_bytes = base + header.words_offset;
    table->index_slots = reinterpret_cast<const std::uint64_t*>(base + header.index_offset);
    table->index_slot_count = header.index_slots;
    table->index_rows = table->rows;
    table->duplicate_rows = reinterpret_cast<const std::uint64_t*>(base + header.duplicates_offset);
    table->duplicate_row_count = static_cast<std::int64_t>(header.duplicates);
    table->duplicates = table->duplicate_row_count;
    table->format = static_cast<GloveFormat>(header.source_format);
    table->from_cache = true;
    table->path = path;
    table->source = {header.source_size, header.source_mtime_ns, header.source_ctime_ns,
                     header.source_inode};
    table->vector_block_hashes = block_hashes;
    table->cache_file = std::move(file);
    return table;
}

std::string damaged_vectors(const GloveTable::Impl& table, std::vector<std::uint64_t> blocks) {
    if (!table.vector_block_hashes) {
        return {};  // parsed from text: nothing to check
    }
    const auto rows = static_cast<std::uint64_t>(table.index_rows);  // the whole file's
    const auto dim = static_cast<std::uint64_t>(table.dim);
    std::vector<char> damaged(blocks.size(), 0);
    const std::size_t threads =
        std::min<std::size_t>(std::size_t(hardware_threads()), blocks.size());
    run_parallel(threads, [&](std::size_t part) {
        for (std::size_t i = part; i < blocks.size(); i += threads) {
            damaged[i] = hash_vector_block(table.matrix, rows, dim, blocks[i]) !=
                         table.vector_block_hashes[blocks[i]];
        }
    });
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (damaged[i]) {
            const std::uint64_t first = blocks[i] * kVectorBlockRows;
            const std::uint64_t last = std::min(first + kVectorBlockRows, rows);
            return kDamaged + std::string(" (the vectors of rows ") + std::to_string(first + 1) +
                   " to " + std::to_string(last) + " do not match their checksum)";
        }
    }
    return {};
}

}  // namespace oomlab::glove_detail
