// Every lesson runs from the CLI and shows the effect it claims.
#include <gtest/gtest.h>

#include <iostream>
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

TEST(Lessons, EveryLessonShowsItsEffect) {
    const auto list = run_cli({"lesson", "list", "--json"});
    ASSERT_EQ(list.exit_code, 0) << list.err;
    ASSERT_GE(list.lines().size(), 10u);
    std::vector<std::string> names;
    for (const auto& line : list.lines()) {
        names.push_back(json::parse(line)["name"]);
    }
    test::TempDir dir;
    // Each lesson whole, as a class sees it (30 steps or more); a quarter of them in the
    // build that samples expensive grids.
    for (const std::string& name : test::grid_sample(names)) {
        const auto result =
            run_cli({"lesson", "run", name, "--db", dir.file("runs.sqlite"), "--json"});
        if (kSanitizerHeap && name == "reserved-vs-allocated") {
            std::cout << "[ note ] " << name << ": not checked under AddressSanitizer\n";
            continue;
        }
        EXPECT_EQ(result.exit_code, 0) << name << ": " << result.err << result.out;
        const json summary = json::parse(result.lines().back());
        EXPECT_TRUE(summary["shown"].get<bool>()) << name << ": " << summary.dump();
        EXPECT_FALSE(summary["checks"].empty()) << name;
    }
}

TEST(Lessons, UnknownLessonListsTheKnownOnes) {
    const auto result = run_cli({"lesson", "run", "no-such-lesson"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_NE(result.err.find("batch-size"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace oomlab
