// The binary cache: written after a parse, reused while valid, never trusted when stale or
// damaged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>

#include "glove_test_helpers.h"
#include "test_support.h"

namespace oomlab {
namespace {

namespace fs = std::filesystem;

class GloveCache : public ::testing::Test {
protected:
    void SetUp() override {
        m_text = m_dir.file("quirks.txt");
        fs::copy_file(test::fixture("glove/quirks_840b_style.txt"), m_text);
    }
    std::string cache_path() const { return glove_cache_path(m_text); }

    test::TempDir m_dir;
    std::string m_text;
};

void overwrite_bytes(const std::string& path, std::streamoff offset, const std::string& bytes) {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(offset);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST_F(GloveCache, IsWrittenBesideTheTextAndReloadsIdentically) {
    EXPECT_EQ(cache_path(), m_text + ".oomlab-cache");
    const GloveTable parsed = GloveTable::load(m_text);
    EXPECT_FALSE(parsed.from_cache());
    ASSERT_TRUE(fs::exists(cache_path()));

    const GloveTable cached = GloveTable::load(m_text);
    EXPECT_TRUE(cached.from_cache());
    EXPECT_EQ(cached.format(), GloveFormat::Glove);  // the source's format
    EXPECT_EQ(cached.path(), m_text);
    EXPECT_TRUE(test::same_table(parsed, cached));
    for (std::int64_t row = 0; row < parsed.size(); ++row) {
        EXPECT_EQ(cached.find(parsed.word(row)), parsed.find(parsed.word(row)));
    }
    EXPECT_EQ(cached.find(". . ."), 1);
    EXPECT_EQ(cached.find("\xff\xfe"), 5);
    EXPECT_EQ(cached.find("missing"), -1);
    EXPECT_EQ(cached.duplicates(), 2);
}

TEST_F(GloveCache, KeepsTheWord2VecFormat) {
    const std::string text = m_dir.file("w2v.txt");
    fs::copy_file(test::fixture("glove/word2vec_small.txt"), text);
    GloveTable::load(text);
    const GloveTable cached = GloveTable::load(text);
    EXPECT_TRUE(cached.from_cache());
    EXPECT_EQ(cached.format(), GloveFormat::Word2VecText);
    EXPECT_EQ(cached.find("and"), 2);
}

TEST_F(GloveCache, ModesOffAndReadNeverWrite) {
    GloveLoadOptions options;
    options.cache = GloveCacheMode::Off;
    GloveTable::load(m_text, options);
    options.cache = GloveCacheMode::Read;
    EXPECT_FALSE(GloveTable::load(m_text, options).from_cache());
    EXPECT_FALSE(fs::exists(cache_path()));
    GloveTable::load(m_text);  // ReadWrite
    EXPECT_TRUE(GloveTable::load(m_text, options).from_cache());
    options.cache = GloveCacheMode::Off;
    EXPECT_FALSE(GloveTable::load(m_text, options).from_cache());
}

TEST_F(GloveCache, StaleCacheIsIgnoredAndRewrittenWhenTheTextGrows) {
    GloveTable::load(m_text);
    std::ofstream(m_text, std::ios::app) << "\nnew 1 2 3 4\n";
    const GloveTable reparsed = GloveTable::load(m_text);
    EXPECT_FALSE(reparsed.from_cache());
    EXPECT_EQ(reparsed.size(), 13);
    EXPECT_EQ(reparsed.find("new"), 12);
    const GloveTable cached = GloveTable::load(m_text);
    EXPECT_TRUE(cached.from_cache());
    EXPECT_EQ(cached.size(), 13);
}

TEST_F(GloveCache, StaleCacheIsIgnoredWhenOnlyTheModificationTimeChanges) {
    test::write_file(m_text, "a 1 2\nb 3 4\n");
    GloveTable::load(m_text);
    test::write_file(m_text, "a 5 6\nb 7 8\n");  // same size
    fs::last_write_time(m_text, fs::last_write_time(m_text) + std::chrono::seconds(10));
    const GloveTable table = GloveTable::load(m_text);
    EXPECT_FALSE(table.from_cache());
    EXPECT_EQ(table.vector(0)[0], 5.0f);
}

TEST_F(GloveCache, DamagedCachesAreIgnoredAndReplaced) {
    const GloveTable reference = GloveTable::load(m_text, test::no_cache());
    struct Damage {
        const char* what;
        std::function<void(const std::string&)> apply;
    };
    const Damage damages[] = {
        {"truncated",
         [](const std::string& path) { fs::resize_file(path, fs::file_size(path) - 8); }},
        {"bad magic", [](const std::string& path) { overwrite_bytes(path, 0, "XXXX"); }},
        {"header bytes", [](const std::string& path) { overwrite_bytes(path, 24, "\x7f"); }},
        {"word offsets",
         [](const std::string& path) {  // offsets[1], after 12 x 4 floats
             overwrite_bytes(path, 4096 + 12 * 4 * 4 + 8, std::string(8, '\xff'));
         }},
        {"empty file", [](const std::string& path) { test::write_file(path, ""); }},
    };
    for (const Damage& damage : damages) {
        GloveTable::load(m_text);
        damage.apply(cache_path());
        const GloveTable table = GloveTable::load(m_text);
        EXPECT_FALSE(table.from_cache()) << damage.what;
        EXPECT_TRUE(test::same_table(reference, table)) << damage.what;
        EXPECT_TRUE(GloveTable::load(m_text).from_cache()) << damage.what << ": not rewritten";
    }
}

// The header and offsets can be right while the words or the vectors are not (a bad disk, a
// copy cut short and padded): both are checksummed, and the text is read instead, with a
// note saying so.
TEST_F(GloveCache, DamagedWordsOrVectorsFallBackToTheTextWithANote) {
    const GloveTable reference = GloveTable::load(m_text, test::no_cache());
    const std::int64_t matrix_bytes = reference.size() * reference.dim() * 4;
    const std::int64_t offsets_bytes = (reference.size() + 1) * 8;
    struct Damage {
        const char* what;
        std::streamoff offset;
    };
    for (const Damage& damage : {Damage{"a vector", 4096 + 7 * 4},
                                 Damage{"a word", 4096 + matrix_bytes + offsets_bytes + 2}}) {
        GloveTable::load(m_text);
        overwrite_bytes(cache_path(), damage.offset, "\x5a\x5a");
        const GloveTable table = GloveTable::load(m_text);
        EXPECT_FALSE(table.from_cache()) << damage.what;
        EXPECT_TRUE(test::same_table(reference, table)) << damage.what;
        EXPECT_NE(table.note().find("damaged"), std::string::npos) << damage.what;
        EXPECT_NE(table.note().find("checksum"), std::string::npos) << table.note();
        EXPECT_TRUE(GloveTable::load(m_text).from_cache()) << damage.what << ": not rewritten";
        EXPECT_TRUE(GloveTable::load(m_text).note().empty());
    }
}

// A run reads the vectors of its dataset's words alone, and checks those alone: each block of
// 4,096 rows has its checksum, so damage elsewhere costs nothing and damage there is found,
// naming the rows.
TEST_F(GloveCache, ARunChecksTheVectorsItReadsAndOnlyThose) {
    std::string text;
    for (int row = 0; row < 9000; ++row) {  // three blocks
        text += "w" + std::to_string(row) + " " + std::to_string(row) + " 0.5\n";
    }
    test::write_file(m_text, text);
    GloveTable::load(m_text);
    overwrite_bytes(cache_path(), 4096 + 5000 * 2 * 4, "\x5a\x5a");  // row 5000, block 1
    const std::vector<std::string> elsewhere = {"w0", "w8500", "not-a-word"};
    GloveLoadOptions run;
    run.vectors_used = &elsewhere;
    const GloveTable table = GloveTable::load(m_text, run);
    EXPECT_TRUE(table.from_cache());
    EXPECT_EQ(table.vector(table.find("w8500"))[0], 8500.0f);
    const std::vector<std::string> there = {"w0", "w5000"};
    run.vectors_used = &there;
    const GloveTable reread = GloveTable::load(m_text, run);
    EXPECT_FALSE(reread.from_cache());
    EXPECT_EQ(reread.vector(reread.find("w5000"))[0], 5000.0f);
    EXPECT_NE(reread.note().find("the vectors of rows 4097 to 8192 do not match their checksum"),
              std::string::npos)
        << reread.note();
    EXPECT_TRUE(GloveTable::load(m_text).from_cache()) << "rewritten whole";
}

// A run's first load writes the cache in the background and trains meanwhile: the table it
// returns stays whole while the cache is written, and the cache is there once waited for.
TEST_F(GloveCache, ACacheWrittenInTheBackgroundIsWholeOnceWaitedFor) {
    const GloveTable reference = GloveTable::load(m_text, test::no_cache());
    GloveLoadOptions run;
    run.write_cache_in_background = true;
    const GloveTable first = GloveTable::load(m_text, run);
    EXPECT_FALSE(first.from_cache());
    EXPECT_TRUE(test::same_table(reference, first));
    GloveTable::wait_for_cache_writes();
    const GloveTable second = GloveTable::load(m_text, run);
    EXPECT_TRUE(second.from_cache());
    EXPECT_TRUE(test::same_table(reference, second));
}

// Describing a table (glove info) reads no vector, so it does not pay for their checksum.
TEST_F(GloveCache, DescribingWithoutVerifyingTheVectorsSkipsTheirChecksum) {
    GloveTable::load(m_text);
    overwrite_bytes(cache_path(), 4096, "\x5a");
    GloveLoadOptions describe;
    describe.verify_vectors = false;
    EXPECT_TRUE(GloveTable::load(m_text, describe).from_cache());
    EXPECT_FALSE(GloveTable::load(m_text).from_cache());
}

TEST_F(GloveCache, TextChangedAtTheSameSizeAndModificationTimeIsDetected) {
    test::write_file(m_text, "a 1 2\nb 3 4\n");
    const auto when = fs::last_write_time(m_text);
    GloveTable::load(m_text);
    test::write_file(m_text, "a 5 6\nb 7 8\n");  // same size
    fs::last_write_time(m_text, when);           // and the old time put back
    const GloveTable table = GloveTable::load(m_text);
    EXPECT_FALSE(table.from_cache());
    EXPECT_EQ(table.vector(0)[0], 5.0f);
}

TEST_F(GloveCache, ABareRelativeNameGetsItsCacheBesideTheFile) {
    const fs::path before = fs::current_path();
    fs::current_path(m_dir.path());
    fs::copy_file(m_text, "g100.txt");
    GloveTable::load("g100.txt");
    const bool beside = fs::exists("g100.txt.oomlab-cache");
    fs::current_path(before);
    EXPECT_TRUE(beside);
}

TEST_F(GloveCache, MaxRowsFromTheCache) {
    GloveTable::load(m_text);
    GloveLoadOptions options;
    options.max_rows = 7;
    const GloveTable table = GloveTable::load(m_text, options);
    EXPECT_TRUE(table.from_cache());
    ASSERT_EQ(table.size(), 7);
    EXPECT_EQ(table.duplicates(), 1);  // row 6 repeats ","; row 11 is hidden
    EXPECT_EQ(table.find(","), 0);
    EXPECT_EQ(table.find("Apple"), -1);  // row 7: hidden
    EXPECT_EQ(table.find("\xff\xfe"), 5);
    EXPECT_THROW(table.word(7), std::out_of_range);
}

TEST_F(GloveCache, MaxRowsFromTextWritesNoPartialCache) {
    GloveLoadOptions options;
    options.max_rows = 3;
    EXPECT_EQ(GloveTable::load(m_text, options).size(), 3);
    EXPECT_FALSE(fs::exists(cache_path()));
}

TEST_F(GloveCache, ExpectedDimIsCheckedAgainstTheCache) {
    GloveTable::load(m_text);
    GloveLoadOptions options;
    options.expected_dim = 50;
    const std::string message = test::load_error(m_text, options);
    EXPECT_NE(message.find("has 4 values per word, but 50 were expected"), std::string::npos)
        << message;
}

TEST_F(GloveCache, CacheFileGivenDirectlyLoads) {
    const GloveTable parsed = GloveTable::load(m_text);
    const GloveTable direct = GloveTable::load(cache_path());
    EXPECT_TRUE(direct.from_cache());
    EXPECT_EQ(direct.format(), GloveFormat::Cache);
    EXPECT_EQ(direct.path(), cache_path());
    EXPECT_TRUE(test::same_table(parsed, direct));
    // It does not depend on the text any more.
    fs::remove(m_text);
    EXPECT_EQ(GloveTable::load(cache_path()).find("Apple"), 7);
}

TEST_F(GloveCache, DamagedCacheGivenDirectlyIsAClearError) {
    GloveTable::load(m_text);
    fs::resize_file(cache_path(), fs::file_size(cache_path()) - 1);
    const std::string message = test::load_error(cache_path());
    EXPECT_EQ(message.rfind(cache_path() + ": cannot use this cache file (truncated", 0), 0u)
        << message;
}

TEST_F(GloveCache, WriteCacheOfAShortenedTableIndexesOnlyItsRows) {
    GloveLoadOptions options = test::no_cache();
    options.max_rows = 8;
    const GloveTable table = GloveTable::load(m_text, options);
    const std::string path = m_dir.file("top8.oomlab-cache");
    table.write_cache(path);
    const GloveTable reloaded = GloveTable::load(path);
    EXPECT_TRUE(test::same_table(table, reloaded));
    EXPECT_EQ(reloaded.find("Apple"), 7);
    EXPECT_EQ(reloaded.find("apple"), -1);

    GloveTable::load(m_text);  // full cache, then a shortened view of it written again
    options.cache = GloveCacheMode::Read;
    options.max_rows = 2;
    const GloveTable view = GloveTable::load(m_text, options);
    ASSERT_TRUE(view.from_cache());
    view.write_cache(path);
    const GloveTable small = GloveTable::load(path);
    EXPECT_EQ(small.size(), 2);
    EXPECT_EQ(small.find(". . ."), 1);
    EXPECT_EQ(small.find("Apple"), -1);
}

// A cache path that cannot be reached (a symlink loop) is no cache: the text is read, and its
// cache written in the cache folder (the run failed on a raw filesystem error).
TEST_F(GloveCache, ACachePathThatIsASymlinkLoopReadsTheText) {
    fs::create_symlink(cache_path(), cache_path());
    GloveLoadOptions options;
    options.cache_dir = m_dir.file("cache");
    const GloveTable table = GloveTable::load(m_text, options);
    EXPECT_FALSE(table.from_cache());
    EXPECT_EQ(table.find(". . ."), 1);
    EXPECT_TRUE(fs::is_symlink(cache_path())) << "the loop is the user's: left as it is";
}

TEST_F(GloveCache, UnwritableFolderUsesTheCacheDir) {
    if (geteuid() == 0) {
        GTEST_SKIP() << "running as root: every folder is writable";
    }
    const std::string folder = m_dir.file("readonly");
    fs::create_directory(folder);
    const std::string text = folder + "/vectors.txt";
    fs::copy_file(m_text, text);
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
    GloveLoadOptions options;
    options.cache_dir = m_dir.file("cache");
    const std::string path = glove_cache_path(text, options);
    EXPECT_EQ(path.rfind(options.cache_dir + "/vectors.txt.", 0), 0u) << path;
    EXPECT_FALSE(GloveTable::load(text, options).from_cache());
    EXPECT_TRUE(fs::exists(path));
    EXPECT_TRUE(GloveTable::load(text, options).from_cache());
    fs::permissions(folder, fs::perms::owner_all);
}

}  // namespace
}  // namespace oomlab
