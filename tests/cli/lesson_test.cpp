// Every lesson runs from the CLI and shows the effect it claims.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "grid_sample.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;

// Under AddressSanitizer the heap is the sanitizer's: returning cached heap memory to the
// system (memory.empty_cache on the CPU) has nothing to act on, so that lesson cannot show it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitizerHeap = true;
#else
constexpr bool kSanitizerHeap = false;
#endif

// The lessons shipped, by file name (a lesson's name).
std::vector<std::string> shipped_lessons() {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(test::source_root()) +
                                                                 "/resources/lessons")) {
        if (entry.path().extension() == ".json") {
            names.push_back(entry.path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

TEST(Lessons, TheListNamesEveryShippedLesson) {
    const auto list = run_cli({"lesson", "list", "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    std::vector<std::string> names;
    for (const auto& line : list.lines()) {
        names.push_back(json::parse(line)["name"]);
    }
    ASSERT_GE(names.size(), 10u);
    for (const std::string& name : shipped_lessons()) {
        EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
    }
}

// Names and titles in two columns, the titles all starting where the longest name ends.
TEST(Lessons, TheListsTitlesStartPastTheLongestName) {
    const auto list = run_cli({"lesson", "list"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    std::size_t longest = 0;
    for (const std::string& name : shipped_lessons()) {
        longest = std::max(longest, name.size());
    }
    ASSERT_FALSE(list.lines().empty());
    for (const std::string& line : list.lines()) {
        const std::size_t name_end = line.find(' ');
        ASSERT_NE(name_end, std::string::npos) << line;
        EXPECT_EQ(line.find_first_not_of(' ', name_end), longest + 2) << line;
    }
}

class EveryLesson : public ::testing::TestWithParam<std::string> {};

// Each lesson whole, as a class sees it (30 steps or more): one test each, so that the suite
// can run them side by side; a quarter of them in the build that samples expensive grids.
TEST_P(EveryLesson, ShowsItsEffect) {
    const std::string& name = GetParam();
    if (kSanitizerHeap && name == "reserved-vs-allocated") {
        GTEST_SKIP() << name << ": not checked under AddressSanitizer";
    }
    test::TempDir dir;
    const auto result = run_cli({"lesson", "run", name, "--db", dir.file("runs.sqlite"), "--json"});
    EXPECT_EQ(result.exit_code, 0) << name << ": " << result.err << result.out;
    ASSERT_FALSE(result.lines().empty()) << result.err;
    const json summary = json::parse(result.lines().back());
    EXPECT_TRUE(summary["shown"].get<bool>()) << name << ": " << summary.dump();
    EXPECT_FALSE(summary["checks"].empty()) << name;
}

INSTANTIATE_TEST_SUITE_P(Lessons, EveryLesson,
                         ::testing::ValuesIn(test::grid_sample(shipped_lessons())),
                         [](const ::testing::TestParamInfo<std::string>& lesson) {
                             std::string name = lesson.param;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

TEST(Lessons, UnknownLessonListsTheKnownOnes) {
    const auto result = run_cli({"lesson", "run", "no-such-lesson"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("batch-size"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace oomlab
