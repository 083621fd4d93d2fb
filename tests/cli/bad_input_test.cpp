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

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size())) {
        text.replace(at, from.size(), to);
    }
    return text;
}

std::string substitute(const std::string& text, const std::string& file) {
    return replace_all(replace_all(text, "{file}", file), "{latin1}", "\xE9");
}

std::string repeated(const std::string& text, int times) {
    std::string out;
    for (int i = 0; i < times; ++i) {
        out += text;
    }
    return out;
}

// Files too large or too odd to keep in the repository are written by the test.
void generate(const std::string& path, const std::string& kind) {
    constexpr int kDeep = 20000;
    std::ofstream out(path, std::ios::binary);
    if (kind == "ten_megabyte_line") {
        out << "the 0.1 0.2 0.3\nof 0.4 0.5 0.6\nand 0.7 0.8 0.9\nto"
            << repeated(" 0.123456", 1'300'000) << '\n';
    } else if (kind == "deep_object") {
        out << repeated("{\"train\": ", kDeep) << "1" << repeated("}", kDeep);
    } else if (kind == "deep_array") {
        out << "{\"train\": " << repeated("[", kDeep) << repeated("]", kDeep) << "}";
    } else if (kind == "deep_jsonl") {
        out << "{\"text\": \"a\", \"label\": 1}\n{\"text\": \"b\", \"label\": 2}\n"
            << "{\"text\": " << repeated("[", kDeep) << repeated("]", kDeep) << "}\n";
    } else if (kind == "utf16_glove") {
        out << "\xFF\xFE";
        for (char c : std::string("the 0.1 0.2\nof 0.3 0.4\n")) {
            out << c << '\0';
        }
    } else {
        FAIL() << "unknown generator " << kind;
    }
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
                generate(file, entry["generated"].get<std::string>());
            }
        }
        const std::string db = dir.file("runs.sqlite");
        std::vector<std::string> args;
        for (const auto& arg : entry["args"]) {
            args.push_back(substitute(arg, file));
        }
        if ((args[0] == "run" || args[0] == "sweep") && !entry.value("no_db", false)) {
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
