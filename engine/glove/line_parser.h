// One line of vector text: "word v1 ... vD".
#pragma once

#include <string>

namespace oomlab::glove_detail {

// Parses a trimmed, non-blank line into `dim` floats. The last `dim` space-separated fields are
// the vector and everything before them is the word, spaces included (840B has such words).
// Returns the end of the word (the word is [begin, result)), or nullptr with `error` saying
// what is wrong (the caller adds file and line). NaN and infinite values are errors: they
// would poison every sum they reach.
const char* parse_vector_line(const char* begin, const char* end, int dim, float* values,
                              std::string& error);

}  // namespace oomlab::glove_detail
