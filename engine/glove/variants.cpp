#include "oomlab/glove/variants.h"

namespace oomlab {
namespace {

constexpr std::int64_t k6BWords = 400'000;
constexpr std::int64_t k42BWords = 1'917'494;
constexpr std::int64_t k840BWords = 2'196'017;
constexpr std::int64_t kTwitterWords = 1'193'514;

const char* const kWikipediaGigaword = "Wikipedia 2014 + Gigaword 5 (6B tokens)";
const char* const kCommonCrawl42B = "Common Crawl (42B tokens)";
const char* const kCommonCrawl840B = "Common Crawl (840B tokens)";
const char* const kTwitter = "Twitter (2B tweets, 27B tokens)";

std::vector<GloveVariant> make_variants() {
    return {
        {"6B.50d", k6BWords, 50, false, kWikipediaGigaword},
        {"6B.100d", k6BWords, 100, false, kWikipediaGigaword},
        {"6B.200d", k6BWords, 200, false, kWikipediaGigaword},
        {"6B.300d", k6BWords, 300, false, kWikipediaGigaword},
        {"42B.300d", k42BWords, 300, false, kCommonCrawl42B},
        {"840B.300d", k840BWords, 300, true, kCommonCrawl840B},
        {"twitter.27B.25d", kTwitterWords, 25, false, kTwitter},
        {"twitter.27B.50d", kTwitterWords, 50, false, kTwitter},
        {"twitter.27B.100d", kTwitterWords, 100, false, kTwitter},
        {"twitter.27B.200d", kTwitterWords, 200, false, kTwitter},
    };
}

}  // namespace

const std::vector<GloveVariant>& glove_variants() {
    static const std::vector<GloveVariant> variants = make_variants();
    return variants;
}

const GloveVariant* find_glove_variant(std::string_view name) {
    // Accept the official file stem too: "glove.6B.100d".
    constexpr std::string_view kPrefix = "glove.";
    if (name.substr(0, kPrefix.size()) == kPrefix) {
        name.remove_prefix(kPrefix.size());
    }
    for (const GloveVariant& variant : glove_variants()) {
        if (variant.name == name) {
            return &variant;
        }
    }
    return nullptr;
}

std::string glove_variant_names() {
    std::string names;
    for (const GloveVariant& variant : glove_variants()) {
        if (!names.empty()) {
            names += ", ";
        }
        names += variant.name;
    }
    return names;
}

}  // namespace oomlab
