// `oomlab-cli record --try CONF`: a real PyTorch 2.x program run again with each allocator
// setting, what each run reached printed beside the what-if's prediction, and a try that does
// not end stopped, with what it started, at --timeout.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_runner.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::torch_python;

class RecordTries : public ::testing::Test {
protected:
    void SetUp() override {
        if (torch_python().empty()) {
            GTEST_SKIP() << "OOMLAB_TORCH_PYTHON is not set: these tests run PyTorch 2.x's own "
                            "programs (./oomlab.sh cuda-test sets it)";
        }
    }
    test::CommandResult record(const std::string& script, const std::string& options) {
        return test::run_command("cd " + test::shell_quote(m_dir.path()) + " && timeout 300 " +
                                 test::shell_quote(test::cli_program()) + " record --out " +
                                 test::shell_quote(m_dir.file("m.pickle")) + " " + options +
                                 " -- " + test::shell_quote(torch_python()) + " " + script +
                                 " 2>/dev/null </dev/null");
    }
    // The line of the side-by-side table that starts with `setting`.
    static std::string row(const std::string& out, const std::string& setting) {
        const std::size_t at = out.find("\n  " + setting + " ");
        return at == std::string::npos ? "" : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    }
    test::TempDir m_dir;
};

// Without CUDA a setting changes nothing the program does: each try's own requests, replayed
// through the allocator's model under its setting, come out as the first run's what-if said.
TEST_F(RecordTries, EachSettingIsRunAgainAndSetBesideItsPrediction) {
    test::write_file(m_dir.file("train.py"), R"PY(import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 10))
optimizer = torch.optim.Adam(model.parameters())
for step in range(3):
    torch.nn.functional.cross_entropy(model(torch.randn(256, 512)),
                                      torch.randint(0, 10, (256,))).backward()
    optimizer.step()
    optimizer.zero_grad()
)PY");
    const test::CommandResult result =
        record("train.py", "--try expandable_segments:True --try max_split_size_mb:64");
    ASSERT_EQ(result.exit_code, 0) << result.out;
    const std::string& out = result.out;
    EXPECT_NE(out.find("nothing else in it was changed"), std::string::npos) << out;
    EXPECT_NE(out.find("on a GPU, estimated"), std::string::npos) << out;
    for (const std::string setting : {"expandable_segments:True", "max_split_size_mb:64"}) {
        const std::string line = row(out, setting);
        ASSERT_FALSE(line.empty()) << setting << "\n" << out;
        EXPECT_NE(line.find(" finished"), std::string::npos) << line;
        // "... 122.0 MiB  122.0 MiB  finished": its own estimate, then the prediction.
        const std::size_t mib = line.find(" MiB");
        const std::size_t second = line.find(" MiB", mib + 1);
        const std::size_t third = line.find(" MiB", second + 1);
        ASSERT_NE(third, std::string::npos) << line;
        const auto figure = [&](std::size_t end) {
            return line.substr(line.rfind("  ", end) + 2, end - line.rfind("  ", end) - 2);
        };
        EXPECT_EQ(figure(second), figure(third)) << line;
    }
    EXPECT_NE(row(out, "as run").find(" finished"), std::string::npos) << out;
    EXPECT_TRUE(std::filesystem::exists(m_dir.file("m-try-1.json")));
    EXPECT_TRUE(std::filesystem::exists(m_dir.file("m-try-2.json")));

    // Later, from another folder: the program of that record run again where it ran.
    ASSERT_TRUE(std::filesystem::exists(m_dir.file("m.json.program.json")));
    const test::CommandResult after =
        test::run_command("cd / && timeout 300 " + test::shell_quote(test::cli_program()) +
                          " record --after " + test::shell_quote(m_dir.file("m.json")) +
                          " --try expandable_segments:True 2>/dev/null </dev/null");
    ASSERT_EQ(after.exit_code, 0) << after.out;
    EXPECT_NE(row(after.out, "expandable_segments:True").find(" finished"), std::string::npos)
        << after.out;
    EXPECT_NE(row(after.out, "as run").find(" finished"), std::string::npos) << after.out;

    // "advice": the settings the first run's advice names; a CPU run's names none.
    const test::CommandResult advised = record("train.py", "--try advice");
    ASSERT_EQ(advised.exit_code, 0) << advised.out;
    EXPECT_NE(advised.out.find("Nothing to try: the first run's advice names no allocator setting"),
              std::string::npos)
        << advised.out;
}

// A try that never ends (it waits, and starts a process that waits too) is stopped at
// --timeout with all it started; a setting PyTorch refuses is refused before anything runs.
TEST_F(RecordTries, ATryPastItsTimeIsStoppedWithWhatItStarted) {
    test::write_file(m_dir.file("hang.py"), R"PY(import os, subprocess, time, torch
x = torch.ones(1 << 20)
if os.environ.get("PYTORCH_CUDA_ALLOC_CONF"):
    subprocess.Popen(["sleep", "987"])
    time.sleep(987)
)PY");
    const test::CommandResult result =
        record("hang.py", "--try expandable_segments:True --timeout 2");
    EXPECT_EQ(result.exit_code, 0) << result.out;
    EXPECT_NE(row(result.out, "expandable_segments:True").find("(--timeout)"), std::string::npos)
        << result.out;
    EXPECT_NE(test::run_command("sleep 0.5; pgrep -f '^sleep 987$'").exit_code, 0)
        << "a process the try started is still there";

    std::filesystem::remove(m_dir.file("m.json"));
    const test::CommandResult refused = record("hang.py", "--try expandable_segment:True");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_FALSE(std::filesystem::exists(m_dir.file("m.json"))) << "nothing ran";
}

// `record --after RECORD`: the program kept beside an earlier record (its command, folder and
// ending) run again with each setting, the record's own run the first row; a record with no
// program beside it, or a program named beside --after, is refused before anything runs.
TEST(RecordAfter, TheProgramOfAnEarlierRecordIsRunAgainWhereItRan) {
    test::TempDir dir;
    const std::string record = dir.file("r.pickle");
    const int built = test::built_snapshot("make_private_pool_trace.py", record);
    if (built < 0) {
        GTEST_SKIP() << "no python3 to write the snapshot";
    }
    ASSERT_EQ(built, 0);
    const std::string cli = test::shell_quote(test::cli_program());
    const test::CommandResult alone =
        test::run_command(cli + " record --after " + test::shell_quote(record) +
                          " --try expandable_segments:True 2>&1");
    EXPECT_EQ(alone.exit_code, 2) << alone.out;
    EXPECT_NE(alone.out.find("r.pickle.program.json beside it"), std::string::npos) << alone.out;

    test::write_file(record + ".program.json",
                     R"({"command": ["sh", "-c", "pwd > where; exit 3"], "directory": ")" +
                         dir.path() + R"(", "exit_code": 1, "seconds": 0.5})");
    const test::CommandResult after =
        test::run_command("cd / && " + cli + " record --after " + test::shell_quote(record) +
                          " --try expandable_segments:True 2>&1 </dev/null");
    ASSERT_EQ(after.exit_code, 0) << after.out;
    EXPECT_EQ(test::read_text(dir.file("where")), dir.path() + "\n") << "it ran where it had";
    EXPECT_NE(after.out.find("nothing else in it was changed"), std::string::npos) << after.out;
    const std::size_t as_run = after.out.find("\n  as run ");
    ASSERT_NE(as_run, std::string::npos) << after.out;
    EXPECT_NE(after.out.find("40.0 MiB", as_run), std::string::npos) << after.out;
    EXPECT_NE(after.out.find("exit status 3"), std::string::npos) << after.out;

    const test::CommandResult named =
        test::run_command(cli + " record --after " + test::shell_quote(record) +
                          " --try expandable_segments:True -- python3 other.py 2>&1 </dev/null");
    EXPECT_EQ(named.exit_code, 2) << named.out;
    EXPECT_NE(named.out.find("name no other after --"), std::string::npos) << named.out;

    // A program file that is not one, named with its key; a setting PyTorch refuses.
    test::write_file(record + ".program.json", R"({"command": "python3 train.py"})");
    const test::CommandResult damaged =
        test::run_command(cli + " record --after " + test::shell_quote(record) +
                          " --try expandable_segments:True 2>&1 </dev/null");
    EXPECT_EQ(damaged.exit_code, 2) << damaged.out;
    EXPECT_NE(damaged.out.find("r.pickle.program.json: \"command\" is not a list"),
              std::string::npos)
        << damaged.out;
    const test::CommandResult refused =
        test::run_command(cli + " record --after " + test::shell_quote(record) +
                          " --try expandable_segment:True 2>&1 </dev/null");
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_NE(refused.out.find("--try \"expandable_segment:True\""), std::string::npos)
        << refused.out;
}

// A real CUDA program's out-of-memory from fragmentation (recorded on an H200, tests/data/gpu):
// its what-if under expandable segments avoids the error, and the table says so beside the
// 940 MiB predicted (it printed "out of memory" there while the advice said the opposite).
TEST(RecordAfter, ThePredictionOfATryThatAvoidsTheOutOfMemorySaysSo) {
    test::TempDir dir;
    const std::string record = dir.file("r.pickle");
    std::filesystem::copy_file(test::fixture("gpu/fragmented-oom.pickle.gz"), record);
    test::write_file(record + ".program.json",
                     R"({"command": ["sh", "-c", "exit 0"], "directory": ")" + dir.path() +
                         R"(", "exit_code": 1, "seconds": 0.5})");
    const test::CommandResult after = test::run_command(
        test::shell_quote(test::cli_program()) + " record --after " + test::shell_quote(record) +
        " --try expandable_segments:True 2>&1 </dev/null");
    ASSERT_EQ(after.exit_code, 0) << after.out;
    const std::size_t tried = after.out.find("\n  expandable_segments:True ");
    ASSERT_NE(tried, std::string::npos) << after.out;
    const std::string line = after.out.substr(tried + 1, after.out.find('\n', tried + 1) - tried);
    EXPECT_NE(line.find("940.0 MiB"), std::string::npos) << line;
    EXPECT_EQ(line.find("out of memory"), std::string::npos) << line;
}

// record keeps the program beside its record, but never over a file it did not write: refused
// before the program runs (--force replaces it).
TEST(RecordAfter, TheProgramFileNeverReplacesAFileRecordDidNotWrite) {
    test::TempDir dir;
    test::write_file(dir.file("m.pickle.program.json"), "my notes\n");
    const test::CommandResult refused = test::run_command(
        "cd " + test::shell_quote(dir.path()) + " && " + test::shell_quote(test::cli_program()) +
        " record --out m.pickle -- sh -c 'touch ran' 2>&1 </dev/null");
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_NE(refused.out.find("m.pickle.program.json: already exists"), std::string::npos)
        << refused.out;
    EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << "the program ran";
    EXPECT_EQ(test::read_text(dir.file("m.pickle.program.json")), "my notes\n");
}

// Nor does a try write over one: each try's files (NAME-try-N beside --out) are checked as
// --out's are before any try runs (they were replaced).
TEST(RecordAfter, ATryNeverReplacesAFileRecordDidNotWrite) {
    test::TempDir dir;
    test::write_file(dir.file("m-try-1.json"), "my notes\n");
    const std::string record = "cd " + test::shell_quote(dir.path()) + " && " +
                               test::shell_quote(test::cli_program()) +
                               " record --out m.pickle --try expandable_segments:True";
    const test::CommandResult refused =
        test::run_command(record + " -- sh -c 'touch ran' 2>&1 </dev/null");
    EXPECT_EQ(refused.exit_code, 2) << refused.out;
    EXPECT_NE(refused.out.find("m-try-1.json"), std::string::npos) << refused.out;
    EXPECT_NE(refused.out.find("--try expandable_segments:True"), std::string::npos) << refused.out;
    EXPECT_EQ(test::read_text(dir.file("m-try-1.json")), "my notes\n");
    const test::CommandResult forced =
        test::run_command(record + " --force -- sh -c 'touch ran' 2>&1 </dev/null");
    EXPECT_EQ(forced.exit_code, 0) << forced.out;
}

// A --try before -- takes one setting: the program's own options after -- are its own (sh -c
// was refused, the -- taken as the end of --try's values).
TEST(RecordAfter, TheProgramsOptionsAfterTheSettingsAreItsOwn) {
    test::TempDir dir;
    const test::CommandResult ran = test::run_command(
        "cd " + test::shell_quote(dir.path()) + " && " + test::shell_quote(test::cli_program()) +
        " record --try expandable_segments:True -- sh -c 'touch ran' 2>&1 </dev/null");
    EXPECT_EQ(ran.exit_code, 0) << ran.out;
    EXPECT_TRUE(std::filesystem::exists(dir.file("ran"))) << ran.out;
}

// Values no run can take are refused with words before the program runs: an empty allocator
// setting (PyTorch 2.11 aborted on ","), a timeout past a week or not a number (1e300 was printed
// as "at most -2147483648 s", nan taken silently).
TEST(RecordAfter, ImpossibleTriesAndTimeoutsAreRefusedBeforeTheProgramRuns) {
    test::TempDir dir;
    const std::pair<std::string, std::string> cases[] = {
        {"--try ','", "an empty setting between commas"},
        {"--try 'expandable_segments:True,'", "an empty setting between commas"},
        {"--timeout 1e300", "from 0 to 604800"},
        {"--timeout nan", "from 0 to 604800"},
        {"--timeout -1", "from 0 to 604800"},
        {"--kill-after nan", "the seconds a stopped program has to end, from 0 to 604800"},
        {"--kill-after -2", "from 0 to 604800"},
    };
    for (const auto& [options, words] : cases) {
        const test::CommandResult refused =
            test::run_command("cd " + test::shell_quote(dir.path()) + " && " +
                              test::shell_quote(test::cli_program()) + " record " + options +
                              " -- sh -c 'touch ran' 2>&1 </dev/null");
        EXPECT_EQ(refused.exit_code, 2) << options << ": " << refused.out;
        EXPECT_NE(refused.out.find(words), std::string::npos) << options << ": " << refused.out;
        EXPECT_FALSE(std::filesystem::exists(dir.file("ran"))) << options << ": the program ran";
    }
}

}  // namespace
}  // namespace oomlab
