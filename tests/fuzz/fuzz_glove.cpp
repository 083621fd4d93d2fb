// GloVe / word2vec text reader: any bytes give a table or BadInput, never a crash.
#include "fuzz_input.h"
#include "oomlab/common/errors.h"
#include "oomlab/glove/glove_table.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const oomlab::fuzz::MemoryFile file(data, size);
    oomlab::GloveLoadOptions options;
    options.cache = oomlab::GloveCacheMode::Off;
    options.threads = 2;
    try {
        const oomlab::GloveTable table = oomlab::GloveTable::load(file.path(), options);
        for (std::int64_t row = 0; row < table.size(); ++row) {
            if (table.find(table.word(row)) > row || table.vector(row) == nullptr) {
                __builtin_trap();  // every word must be found at or before its own row
            }
        }
    } catch (const oomlab::BadInput&) {
    }
    return 0;
}
