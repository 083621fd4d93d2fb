// GloVe text output: "word v1 ... vD\n" per row, each value the shortest text that reads back
// as the same float. Rows are formatted on several threads, a batch at a time, and written in
// order by the calling thread.
#include <charconv>
#include <cstring>

#include "oomlab/common/atomic_file.h"
#include "oomlab/common/errors.h"
#include "oomlab/glove/glove_table.h"
#include "parallel.h"
#include "table_impl.h"

namespace oomlab {
namespace {

constexpr std::int64_t kRowsPerChunk = 2048;
constexpr std::size_t kMaxFloatChars = 16;  // "-1.17549435e-38" and a separator

struct Chunk {
    std::string text;
    std::int64_t bad_row = -1;  // a word that cannot be written as one line
};

void format_rows(const GloveTable& table, std::int64_t first, std::int64_t last, Chunk& chunk) {
    const int dim = table.dim();
    std::size_t capacity = 0;
    for (std::int64_t row = first; row < last; ++row) {
        capacity += table.word(row).size() + static_cast<std::size_t>(dim) * kMaxFloatChars + 1;
    }
    chunk.text.resize(capacity);
    chunk.bad_row = -1;
    char* out = chunk.text.data();
    char* const limit = out + capacity;
    for (std::int64_t row = first; row < last; ++row) {
        const std::string_view word = table.word(row);
        if (word.find('\n') != std::string_view::npos) {
            chunk.bad_row = row;
            break;
        }
        out = std::copy(word.begin(), word.end(), out);
        const float* values = table.vector(row);
        for (int d = 0; d < dim; ++d) {
            *out++ = ' ';
            out = std::to_chars(out, limit, values[d]).ptr;
        }
        *out++ = '\n';
    }
    chunk.text.resize(static_cast<std::size_t>(out - chunk.text.data()));
}

}  // namespace

void GloveTable::write_text(const std::string& path) const {
    const std::int64_t rows = size();
    const auto workers = static_cast<std::size_t>(glove_detail::hardware_threads());
    std::vector<Chunk> chunks(workers);
    AtomicFile file(path);
    std::uint64_t written = 0;
    for (std::int64_t batch = 0; batch < rows;
         batch += kRowsPerChunk * static_cast<std::int64_t>(workers)) {
        glove_detail::run_parallel(workers, [&](std::size_t i) {
            const std::int64_t first =
                std::min(rows, batch + kRowsPerChunk * static_cast<std::int64_t>(i));
            format_rows(*this, first, std::min(rows, first + kRowsPerChunk), chunks[i]);
        });
        for (const Chunk& chunk : chunks) {
            if (chunk.bad_row >= 0) {
                throw BadInput(path + ": the word of row " + std::to_string(chunk.bad_row + 1) +
                               " contains a line break and cannot be written as GloVe text");
            }
            file.write_at(written, chunk.text.data(), chunk.text.size());
            written += chunk.text.size();
        }
    }
    file.commit(written);
}

}  // namespace oomlab
