// The first 2,446 lines of the published GloVe 6B 50d file (shared data, optional).
#include <gtest/gtest.h>

#include <filesystem>

#include "glove_test_helpers.h"
#include "test_support.h"

namespace oomlab {
namespace {

constexpr const char* kFile = "glove.6B.50d.head2446.txt";

std::string real_file() {
    return test::shared_data_dir() + "/" + kFile;
}

TEST(GloveRealData, LoadsTheHeadOfGlove6B50d) {
    OOMLAB_REQUIRE_SHARED_DATA(kFile);
    const GloveTable table = GloveTable::load(real_file(), test::no_cache());
    ASSERT_EQ(table.size(), 2'446);
    ASSERT_EQ(table.dim(), 50);
    EXPECT_EQ(table.format(), GloveFormat::Glove);
    EXPECT_EQ(table.duplicates(), 0);
    EXPECT_EQ(table.word(0), "the");
    EXPECT_FLOAT_EQ(table.vector(0)[0], 0.418f);
    EXPECT_EQ(table.find("government"), 78);
    EXPECT_FLOAT_EQ(table.vector(78)[0], 0.38797f);
    EXPECT_EQ(table.find("themselves"), 1'000);
    EXPECT_FLOAT_EQ(table.vector(1'000)[0], 0.64757f);
    EXPECT_EQ(table.find("\x96"), 217);  // a lone non-UTF-8 byte as a token
    // The last line has no final newline.
    EXPECT_EQ(table.word(2'445), "handed");
    EXPECT_FLOAT_EQ(table.vector(2'445)[0], -0.4732f);
    EXPECT_FLOAT_EQ(table.vector(2'445)[49], -0.76127f);
}

TEST(GloveRealData, ThreadsCacheAndTopRowsAgree) {
    OOMLAB_REQUIRE_SHARED_DATA(kFile);
    test::TempDir dir;  // never write a cache into the shared folder
    const std::string copy = dir.file(kFile);
    std::filesystem::copy_file(real_file(), copy);
    GloveLoadOptions one = test::no_cache();
    one.threads = 1;
    const GloveTable reference = GloveTable::load(copy, one);
    GloveLoadOptions options;
    options.threads = 2;
    EXPECT_TRUE(test::same_table(reference, GloveTable::load(copy, options)));
    const GloveTable cached = GloveTable::load(copy, options);
    EXPECT_TRUE(cached.from_cache());
    EXPECT_TRUE(test::same_table(reference, cached));
    options.max_rows = 100;
    const GloveTable top = GloveTable::load(copy, options);
    EXPECT_EQ(top.size(), 100);
    EXPECT_EQ(top.find("themselves"), -1);
    EXPECT_EQ(top.find("the"), 0);
}

}  // namespace
}  // namespace oomlab
