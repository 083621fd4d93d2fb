// Shared checks for the GloVe tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/glove/glove_table.h"

namespace oomlab::test {

// A float's bits, to compare values exactly (-0 and 0 apart).
inline std::uint32_t bits_of(float value) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

inline GloveLoadOptions no_cache() {
    GloveLoadOptions options;
    options.cache = GloveCacheMode::Off;
    return options;
}

// The BadInput message load() throws; fails the test when it does not throw.
inline std::string load_error(const std::string& path,
                              const GloveLoadOptions& options = no_cache()) {
    try {
        GloveTable::load(path, options);
    } catch (const BadInput& error) {
        return error.what();
    }
    ADD_FAILURE() << "expected BadInput loading " << path;
    return {};
}

// Same rows, words, bit-identical values and duplicate count.
inline ::testing::AssertionResult same_table(const GloveTable& a, const GloveTable& b) {
    if (a.size() != b.size() || a.dim() != b.dim()) {
        return ::testing::AssertionFailure()
               << "shape " << a.size() << "x" << a.dim() << " vs " << b.size() << "x" << b.dim();
    }
    if (a.duplicates() != b.duplicates()) {
        return ::testing::AssertionFailure()
               << "duplicates " << a.duplicates() << " vs " << b.duplicates();
    }
    for (std::int64_t row = 0; row < a.size(); ++row) {
        if (a.word(row) != b.word(row)) {
            return ::testing::AssertionFailure() << "word of row " << row << ": '" << a.word(row)
                                                 << "' vs '" << b.word(row) << "'";
        }
        if (std::memcmp(a.vector(row), b.vector(row), sizeof(float) * a.dim()) != 0) {
            return ::testing::AssertionFailure() << "values of row " << row << " differ";
        }
    }
    return ::testing::AssertionSuccess();
}

}  // namespace oomlab::test
