// Splits text into words the way GloVe's vocabularies were built: runs of letters and
// digits (keeping inner apostrophes' clitics as GloVe does: "don't" -> "do", "n't"), and
// every other visible character as a token of its own. Lower-cases unless `cased`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

struct TokenizerOptions {
    bool cased = false;  // true for cased vectors (840B)
};

void tokenize(std::string_view text, const TokenizerOptions& options,
              std::vector<std::string>& out);

std::vector<std::string> tokenize(std::string_view text, const TokenizerOptions& options = {});

}  // namespace oomlab
