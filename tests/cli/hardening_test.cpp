// Hostile inputs and outputs that need more than the bad-input corpus: files that must survive
// byte for byte, FIFOs and devices, pipes and signals, text that is not UTF-8. Databases under
// stress are in database_hardening_test.cpp.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "hardening_fixture.h"
#include "oomlab/store/run_store.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::Hardening;
using test::run_cli;

// --- Outputs never replace what they should not -------------------------------------------

// A password in a tracking URI is refused before the run trains or anything is sent, and is
// never repeated: not in the refusal, not in a command to send the run later.
TEST_F(Hardening, APasswordInATrackingUriIsNeverPrinted) {
    const std::string uri = "http://alice:s3cret@127.0.0.1:9";
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"run", "--set", "train.max_steps=1", "--db", db(), "--mlflow", uri},
             {"runs", "export", "1", "--to", "mlflow", "--tracking-uri", uri, "--db", db()}}) {
        const auto result = run_cli(args);
        EXPECT_EQ(result.exit_code, 2) << args[0] << ": " << result.err;
        EXPECT_EQ((result.out + result.err).find("s3cret"), std::string::npos)
            << result.out << result.err;
        EXPECT_NE(result.err.find("MLFLOW_TRACKING_PASSWORD"), std::string::npos) << result.err;
    }
    EXPECT_FALSE(std::filesystem::exists(db())) << "the run trained before the URI was checked";
}

// Commands that read saved runs never make a store of an empty file (a mistyped path), and
// name the option the user typed.
TEST_F(Hardening, ReadingRunsNeverMakesAStoreOfAnEmptyFile) {
    const std::string empty = file("empty.sqlite");
    test::write_file(empty, "");
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"runs", "calibration", "--db", empty},
                                               {"runs", "list", "--db", empty},
                                               {"runs", "show", "1", "--db", empty}}) {
        const auto result = run_cli(args);
        EXPECT_EQ(result.exit_code, 2) << args[1] << ": " << result.err;
        EXPECT_NE(result.err.find("empty file"), std::string::npos) << result.err;
    }
    EXPECT_EQ(std::filesystem::file_size(empty), 0U);
    for (const char* side : {"-wal", "-shm", "-journal", "-writers"}) {
        EXPECT_FALSE(std::filesystem::exists(empty + side)) << side;
    }
    const auto named = run_cli({"runs", "export", "1", "--to", "mlflow", "--tracking-uri",
                                "http://127.0.0.1:9", "--experiment", "", "--db", empty});
    EXPECT_EQ(named.exit_code, 2) << named.err;
    EXPECT_EQ(named.err.find("--mlflow-experiment"), std::string::npos) << named.err;
    EXPECT_NE(named.err.find("--experiment"), std::string::npos) << named.err;
}

TEST_F(Hardening, GloveConvertNeverReplacesItsInput) {
    const std::string glove = file("a.txt");
    test::write_file(glove, "the 0.1 0.2\nof 0.3 0.4\n");
    const auto result = run_cli({"glove", "convert", glove, "--out", glove});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("itself"), std::string::npos) << result.err;
    EXPECT_EQ(test::read_text(glove), "the 0.1 0.2\nof 0.3 0.4\n");
}

TEST_F(Hardening, GloveSynthNeverReplacesADatabase) {
    make_database();
    const auto result = run_cli({"glove", "synth", "6B.50d", "--rows", "10", "--out", db()});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("--force"), std::string::npos) << result.err;
    EXPECT_EQ(run_count(), 1u);
    // The same output with --force over a file of its own is fine.
    const std::string text = file("synth.txt");
    test::write_file(text, "old");
    EXPECT_EQ(
        run_cli({"glove", "synth", "6B.50d", "--rows", "3", "--out", text, "--force"}).exit_code,
        0);
    const std::string written = test::read_text(text);
    EXPECT_EQ(std::count(written.begin(), written.end(), '\n'), 3);
}

TEST_F(Hardening, OutputsAreNeverDevicesOrFifos) {
    const std::string fifo = file("fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::vector<std::string> targets = {fifo, m_dir.path()};
    // As root, a device node of our own (what /dev/full is) shows that none is replaced.
    const std::string device = file("full");
    if (getuid() == 0 && mknod(device.c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {
        targets.push_back(device);
    }
    for (const std::string& target : targets) {
        const auto synth =
            run_cli({"glove", "synth", "6B.50d", "--rows", "3", "--out", target, "--force"});
        EXPECT_EQ(synth.exit_code, 2) << target << ": " << synth.err;
        EXPECT_NE(synth.err.find(target), std::string::npos) << synth.err;
    }
    struct stat info {};
    ASSERT_EQ(stat(fifo.c_str(), &info), 0);
    EXPECT_TRUE(S_ISFIFO(info.st_mode));
    if (targets.size() == 3) {
        ASSERT_EQ(stat(device.c_str(), &info), 0);
        EXPECT_TRUE(S_ISCHR(info.st_mode));
    }
}

TEST_F(Hardening, TheMemorySnapshotNeverOverwritesTheDataset) {
    const std::string dataset = file("data.tsv");
    const std::string content = test::read_text(test::fixture("datasets/sms_style.tsv"));
    test::write_file(dataset, content);
    const auto result = run_cli({"run", "--db", db(), "--set", "dataset.path=" + dataset, "--set",
                                 "debug.memory_snapshot=" + dataset});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("debug.memory_snapshot"), std::string::npos) << result.err;
    EXPECT_EQ(test::read_text(dataset), content);
}

TEST_F(Hardening, ExportReplacesOnlyExports) {
    make_database();
    const std::string notes = file("notes.txt");
    test::write_file(notes, "my notes");
    EXPECT_EQ(run_cli({"runs", "export", "1", "--db", db(), "--out", notes}).exit_code, 2);
    EXPECT_EQ(test::read_text(notes), "my notes");
    const std::string csv = file("run.csv");
    for (int time = 0; time < 2; ++time) {  // an export replaces an export
        EXPECT_EQ(run_cli({"runs", "export", "1", "--db", db(), "--format", "csv", "--out", csv})
                      .exit_code,
                  0);
    }
    EXPECT_EQ(run_cli({"runs", "export", "1", "--db", db(), "--out", notes, "--force"}).exit_code,
              0);
    EXPECT_EQ(test::read_text(notes).front(), '{');
    // The database is never an export target.
    EXPECT_EQ(run_cli({"runs", "export", "1", "--db", db(), "--out", db(), "--force"}).exit_code,
              2);
    EXPECT_EQ(run_count(), 1u);
}

TEST_F(Hardening, AnUnwritableFolderIsNamedNotATemporaryFile) {
    const auto result =
        run_cli({"glove", "synth", "6B.50d", "--rows", "3", "--out", "/proc/x/glove.txt"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("/proc/x"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find(".tmp-"), std::string::npos) << result.err;
}

TEST_F(Hardening, AFullStandardOutputIsAnError) {
    make_database();
    const auto full =
        test::run_command(test::shell_quote(test::cli_program()) + " runs export 1 --db " +
                          test::shell_quote(db()) + " >/dev/full 2>/dev/null");
    EXPECT_EQ(full.exit_code, 1);
}

TEST_F(Hardening, AClosedPipeDoesNotKillARun) {
    // head exits after two lines; the run goes on, is saved, and exits 0 (not 141).
    const auto piped =
        test::run_command("bash -o pipefail -c " +
                          test::shell_quote(test::shell_quote(test::cli_program()) +
                                            " run --json --set " + "train.max_steps=40 --db " +
                                            test::shell_quote(db()) + " | head -2 >/dev/null"));
    EXPECT_EQ(piped.exit_code, 0);
    const auto runs = RunStore::open(db()).list_runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].outcome.status, RunStatus::Completed);
    EXPECT_EQ(runs[0].outcome.steps, 40);
}

// --- Inputs that are not files, or not UTF-8 -------------------------------------------------

TEST_F(Hardening, FifosAndDevicesAreNeverRead) {
    const std::string fifo = file("fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const std::vector<std::vector<std::string>> commands = {
        {"run", "--db", db(), "--config", fifo},
        {"run", "--db", db(), "--set", "dataset.path=" + fifo},
        {"run", "--db", db(), "--set", "dataset.path=/dev/zero"},
        {"run", "--db", db(), "--set", "embeddings.source=file", "--set",
         "embeddings.path=" + fifo},
        {"glove", "info", "/dev/urandom"},
        {"runs", "list", "--db", fifo},
    };
    for (const auto& command : commands) {
        const auto result = run_cli(command);  // a hang would be killed and fail as 124
        EXPECT_EQ(result.exit_code, 2) << command.back() << ": " << result.err;
        EXPECT_NE(result.err.find("not a regular file"), std::string::npos) << result.err;
    }
}

// The tools refuse such names now (Cli.NamesAndTagsThatAreNotUtf8Exit2AndCreateNoRun), but a
// database written by an earlier version or another program may still hold them.
// A name or tags with a line break would break every list; a file name with one becomes
// part of a default name as '?', and a name stored with one lists on one line.
TEST_F(Hardening, RunNamesAndTagsAreOneLine) {
    for (const char* option : {"--name", "--tags"}) {
        const auto refused =
            run_cli({"run", "--db", db(), "--set", "train.max_steps=1", option, "two\nlines"});
        EXPECT_EQ(refused.exit_code, 2) << option;
        EXPECT_NE(refused.err.find(std::string(option) + ": control character 10"),
                  std::string::npos)
            << refused.err;
    }
    EXPECT_EQ(run_count(), 0u);
    make_database();
    EXPECT_EQ(run_cli({"runs", "tag", "1", "a\tb", "--db", db()}).exit_code, 2);
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &handle), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(handle, "UPDATE runs SET name = 'one' || char(10) || 'two'", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(handle);
    const auto listed = run_cli({"runs", "list", "--db", db()});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(listed.lines().size(), 2u) << listed.out;  // the header and the run
    EXPECT_NE(listed.out.find("one?two"), std::string::npos) << listed.out;
}

TEST_F(Hardening, NamesThatAreNotUtf8StillListAsJson) {
    make_database();
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &handle), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(handle, "UPDATE runs SET name = CAST(X'636166E920FF' AS TEXT)", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(handle);
    for (const auto& args :
         std::vector<std::vector<std::string>>{{"runs", "list", "--db", db(), "--json"},
                                               {"runs", "show", "1", "--db", db(), "--json"},
                                               {"runs", "export", "1", "--db", db(), "--json"}}) {
        const auto result = run_cli(args);
        ASSERT_EQ(result.exit_code, 0) << args[1] << ": " << result.err;
        const json parsed = json::parse(result.lines().front());
        EXPECT_EQ(parsed["name"], "caf\xEF\xBF\xBD \xEF\xBF\xBD");  // U+FFFD for each bad byte
    }
}

TEST_F(Hardening, LoneCarriageReturnsAndUtf16AreDecodedNotMerged) {
    const std::string lines = "1 first question\n2 second one\n1 third line\n2 fourth\n";
    std::string mac = lines;
    std::replace(mac.begin(), mac.end(), '\n', '\r');
    std::string utf16 = "\xFF\xFE";
    for (char c : lines) {
        utf16 += c;
        utf16 += '\0';
    }
    for (const auto& [name, content] : {std::pair{"mac.txt", mac}, std::pair{"utf16.txt", utf16}}) {
        test::write_file(file(name), content);
        const auto result =
            run_cli({"run", "--db", db(), "--json", "--set", "dataset.path=" + file(name), "--set",
                     "dataset.valid_ratio=0", "--set", "train.max_steps=1"});
        ASSERT_EQ(result.exit_code, 0) << name << ": " << result.err;
        const json start = json::parse(result.lines().front());
        EXPECT_EQ(start["train_examples"], 4) << name;
    }
}

TEST_F(Hardening, ALossThatBecomesNanEndsTheRunAsFailed) {
    const auto result = run_cli({"run", "--db", db(), "--json", "--set", "train.lr=10", "--set",
                                 "train.optimizer=sgd", "--set", "model.hidden=512", "--set",
                                 "train.max_steps=200", "--set", "eval.every=0"});
    EXPECT_EQ(result.exit_code, 1) << result.out;
    const json summary = json::parse(result.lines().back());
    EXPECT_EQ(summary["status"], "failed");
    EXPECT_NE(summary["error"].get<std::string>().find("NaN or infinite"), std::string::npos)
        << summary["error"];
    EXPECT_LT(summary["steps"].get<int>(), 200);
    bool event = false;
    for (const EventRow& row : RunStore::open(db()).events(summary["run_id"].get<int>())) {
        event = event || row.kind == event_kind::kDiverged;
    }
    EXPECT_TRUE(event);
}

// `python train.py 2>&1 | oomlab-cli explain`: the OOM at the end of 1.7 MB of progress lines
// (only the first megabyte was read), each figure its own; a size of 30,000 digits (a stack
// overflow, signal 11) and a GPU number out of range (std::stoi's error, exit 1) are bad input
// naming the figure.
TEST_F(Hardening, ExplainReadsAWholeLogAndRefusesFiguresOutOfRange) {
    std::string log;
    for (int step = 0; log.size() < 1700 * 1024; ++step) {
        log += "step " + std::to_string(step) + " loss 2.31 | Using GPU 3\n";
    }
    log +=
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
        "total capacity of 79.14 GiB of which 3.56 MiB is free. Of the allocated memory 75.02 "
        "GiB is allocated by PyTorch, and 3.68 GiB is reserved by PyTorch but unallocated.\n";
    test::write_file(file("train.log"), log);
    const auto piped = test::run_command("cat " + test::shell_quote(file("train.log")) + " | " +
                                         test::shell_quote(test::cli_program()) + " explain");
    ASSERT_EQ(piped.exit_code, 0) << piped.out;
    EXPECT_EQ(piped.out.rfind("Fragmentation: ", 0), 0u) << piped.out;
    EXPECT_NE(piped.out.find("on GPU 0 of 79.14 GiB"), std::string::npos) << piped.out;
    EXPECT_NE(piped.out.find("\nTry, in this order:\n  1. "), std::string::npos) << piped.out;

    const auto digits =
        run_cli({"explain", "CUDA out of memory. Tried to allocate " + std::string(30000, '9') +
                                " GiB. GPU 0 has a total capacity of 79.14 GiB"});
    EXPECT_EQ(digits.exit_code, 2) << digits.err.substr(0, 300);
    EXPECT_NE(digits.err.find("the size asked for, \"999"), std::string::npos)
        << digits.err.substr(0, 300);
    const auto device = run_cli({"explain", "CUDA out of memory. GPU 99999999999 has a total"});
    EXPECT_EQ(device.exit_code, 2) << device.err;
    EXPECT_NE(device.err.find("\"99999999999\", is out of range"), std::string::npos) << device.err;
}

}  // namespace
}  // namespace oomlab
