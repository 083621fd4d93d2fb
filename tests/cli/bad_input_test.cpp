// The bad-input corpus (tests/data/bad/cases.json): each case's exit code and message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;

std::string substitute(std::string text, const std::string& file) {
    for (std::size_t at = text.find("{file}"); at != std::string::npos; at = text.find("{file}")) {
        text.replace(at, 6, file);
    }
    return text;
}

// Files too large to keep in the repository are written by the test.
void generate(const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    out << "the 0.1 0.2 0.3\nof 0.4 0.5 0.6\nand 0.7 0.8 0.9\nto";
    for (int value = 0; value < 1'300'000; ++value) {
        out << " 0.123456";
    }
    out << '\n';
}

TEST(BadInputCorpus, EveryCaseGivesItsExitCodeAndMessage) {
    const json manifest = json::parse(test::read_text(test::fixture("bad/cases.json")));
    test::TempDir dir;
    for (const auto& entry : manifest["cases"]) {
        std::string file;
        if (!entry["file"].get<std::string>().empty()) {
            file = test::fixture("bad/" + entry["file"].get<std::string>());
            if (entry.contains("generated")) {
                file = dir.file(std::filesystem::path(file).filename().string());
                generate(file);
            }
        }
        const std::string db = dir.file("runs.sqlite");
        std::vector<std::string> args;
        for (const auto& arg : entry["args"]) {
            args.push_back(substitute(arg, file));
        }
        if (args[0] == "run") {
            args.insert(args.end(), {"--db", db});
        }
        const auto result = test::run_cli(args);
        const std::string label = entry["file"].get<std::string>() + " " + entry["args"].dump();
        EXPECT_EQ(result.exit_code, entry["exit"].get<int>()) << label << "\n" << result.err;
        for (const auto& part : entry["message"]) {
            const std::string expected = substitute(part, file);
            EXPECT_NE(result.err.find(expected), std::string::npos)
                << label << ": message lacks \"" << expected << "\": " << result.err;
        }
        if (entry.value("creates_no_run", false) && std::filesystem::exists(db)) {
            EXPECT_TRUE(RunStore::open(db).list_runs().empty()) << label;
        }
        std::filesystem::remove(db);
    }
}

}  // namespace
}  // namespace oomlab
