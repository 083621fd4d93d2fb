// Splits text into words the way GloVe's vocabularies were built: runs of letters and
// digits (clitics split off as GloVe does: "don't" -> "do", "n't"; "it's" -> "it", "'s";
// other inner apostrophes kept: "o'clock"; digit groups kept: "1,000", "3.14"), and every
// other visible character as a token of its own ("...", "--", "``" and "''" stay whole).
// Non-ASCII bytes count as letters, so multibyte characters are never split; curly quotes
// become ASCII ones and Unicode spaces separate words. Lower-cases ASCII unless `cased`.
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
