// The published GloVe variants, with their true shapes. Memory experiments depend on the
// shape only, so a synthetic table of a variant's shape behaves like the real one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

struct GloveVariant {
    std::string name;  // "6B.100d"
    std::int64_t words = 0;
    int dim = 0;
    bool cased = false;  // 840B keeps case; the others are lower-cased
    std::string corpus;  // "Wikipedia 2014 + Gigaword 5"
};

const std::vector<GloveVariant>& glove_variants();

// nullptr when the name is unknown.
const GloveVariant* find_glove_variant(std::string_view name);

// Every variant name, comma separated, for error messages.
std::string glove_variant_names();

}  // namespace oomlab
