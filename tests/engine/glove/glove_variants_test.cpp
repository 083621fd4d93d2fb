#include <gtest/gtest.h>

#include "oomlab/glove/variants.h"

namespace oomlab {
namespace {

TEST(GloveVariants, KnowsThePublishedShapes) {
    struct Expected {
        const char* name;
        std::int64_t words;
        int dim;
        bool cased;
    };
    const Expected expected[] = {
        {"6B.50d", 400'000, 50, false},
        {"6B.100d", 400'000, 100, false},
        {"6B.200d", 400'000, 200, false},
        {"6B.300d", 400'000, 300, false},
        {"42B.300d", 1'917'494, 300, false},
        {"840B.300d", 2'196'017, 300, true},
        {"twitter.27B.25d", 1'193'514, 25, false},
        {"twitter.27B.50d", 1'193'514, 50, false},
        {"twitter.27B.100d", 1'193'514, 100, false},
        {"twitter.27B.200d", 1'193'514, 200, false},
    };
    ASSERT_EQ(glove_variants().size(), std::size(expected));
    for (const Expected& e : expected) {
        const GloveVariant* variant = find_glove_variant(e.name);
        ASSERT_NE(variant, nullptr) << e.name;
        EXPECT_EQ(variant->name, e.name);
        EXPECT_EQ(variant->words, e.words) << e.name;
        EXPECT_EQ(variant->dim, e.dim) << e.name;
        EXPECT_EQ(variant->cased, e.cased) << e.name;
        EXPECT_FALSE(variant->corpus.empty()) << e.name;
    }
}

TEST(GloveVariants, AcceptsTheFileStemAndRejectsUnknownNames) {
    const GloveVariant* variant = find_glove_variant("glove.6B.100d");
    ASSERT_NE(variant, nullptr);
    EXPECT_EQ(variant->name, "6B.100d");
    EXPECT_EQ(find_glove_variant("6B.64d"), nullptr);
    EXPECT_EQ(find_glove_variant(""), nullptr);
    EXPECT_EQ(find_glove_variant("6b.100d"), nullptr);
}

TEST(GloveVariants, NamesListEveryVariantForErrorMessages) {
    const std::string names = glove_variant_names();
    EXPECT_EQ(names.rfind("6B.50d, 6B.100d", 0), 0u);
    for (const GloveVariant& variant : glove_variants()) {
        EXPECT_NE(names.find(variant.name), std::string::npos) << variant.name;
    }
}

}  // namespace
}  // namespace oomlab
