// Hostile inputs and outputs that need more than the bad-input corpus: files that must survive
// byte for byte, FIFOs and devices, a busy or full database, pipes and signals.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;

class Hardening : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    std::string file(const std::string& name) const { return m_dir.file(name); }
    // A database holding one completed run.
    void make_database() {
        ASSERT_EQ(run_cli({"run", "--set", "train.max_steps=2", "--db", db()}).exit_code, 0);
    }
    std::size_t run_count() const { return RunStore::open(db()).list_runs().size(); }
    test::TempDir m_dir;
};

// Unmounts `path` when the test ends, however it ends.
struct Unmount {
    std::string path;
    ~Unmount() { test::run_command("umount " + test::shell_quote(path) + " 2>/dev/null"); }
};

bool python_available() {
    return test::run_command("command -v python3 >/dev/null 2>&1").exit_code == 0;
}

// --- Outputs never replace what they should not -------------------------------------------

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

// --- Databases ----------------------------------------------------------------------------

TEST_F(Hardening, ADatabaseThatSavesNothingIsRefused) {
    for (const std::string& path : {std::string(), std::string(":memory:")}) {
        const auto result = run_cli({"run", "--set", "train.max_steps=2", "--db", path});
        EXPECT_EQ(result.exit_code, 2) << path << ": " << result.err;
        EXPECT_NE(result.err.find("--db"), std::string::npos) << result.err;
    }
}

TEST_F(Hardening, ARefusedDatabaseKeepsEveryByte) {
    if (!python_available()) {
        GTEST_SKIP() << "python3 writes the foreign databases";
    }
    const std::string newer = file("newer.sqlite");
    const std::string foreign = file("foreign.sqlite");
    ASSERT_EQ(test::run_command("python3 -c \"import sqlite3, sys\n"
                                "for path, sql in ((sys.argv[1], 'PRAGMA user_version = 99'),\n"
                                "                  (sys.argv[2], 'CREATE TABLE photos (x)')):\n"
                                "    c = sqlite3.connect(path); c.execute('CREATE TABLE t (x)')\n"
                                "    c.execute(sql); c.commit(); c.close()\" " +
                                test::shell_quote(newer) + " " + test::shell_quote(foreign))
                  .exit_code,
              0);
    for (const std::string& path : {newer, foreign}) {
        const std::string before = test::read_text(path);
        for (const auto& args : std::vector<std::vector<std::string>>{
                 {"run", "--set", "train.max_steps=2", "--db", path},
                 {"runs", "list", "--db", path}}) {
            const auto result = run_cli(args);
            EXPECT_EQ(result.exit_code, 2) << path << ": " << result.err;
            EXPECT_NE(result.err.find(path), std::string::npos) << result.err;
        }
        EXPECT_EQ(test::read_text(path), before) << path;
        EXPECT_FALSE(std::filesystem::exists(path + "-wal")) << path;
        EXPECT_FALSE(std::filesystem::exists(path + "-writers")) << path;
    }
}

TEST_F(Hardening, AnotherWriterHoldingTheLockForNineSecondsNeverFailsARun) {
    if (!python_available()) {
        GTEST_SKIP() << "python3 holds the lock";
    }
    make_database();
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        execl(test::cli_program(), test::cli_program(), "run", "--db", db().c_str(), "--set",
              "train.max_steps=600", "--set", "eval.every=0", static_cast<char*>(nullptr));
        _exit(127);
    }
    // Once the run writes metrics, hold the write lock for nine seconds.
    for (int attempt = 0; attempt < 300; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        const auto runs = RunStore::open(db()).list_runs();
        if (runs.size() == 2 && !RunStore::open(db()).metrics(runs[0].id).empty()) {
            break;
        }
    }
    const auto locked = test::run_command(
        "python3 -c \"import sqlite3, sys, time\n"
        "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "c.execute('BEGIN IMMEDIATE'); time.sleep(9); c.execute('COMMIT')\" " +
        test::shell_quote(db()));
    EXPECT_EQ(locked.exit_code, 0);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_EQ(WEXITSTATUS(status), 0);
    const RunStore store = RunStore::open(db());
    const auto runs = store.list_runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].outcome.status, RunStatus::Completed) << runs[0].outcome.error;
    std::int64_t steps = 0;
    for (const MetricRow& row : store.metrics(runs[0].id)) {
        steps += row.phase == phase::kStep;
    }
    EXPECT_EQ(steps, 600);  // no batch of metrics lost
}

// A database on a 300 KiB file system: the run fills it and fails saying so, is left failed
// (not running), and reading and deleting runs still works.
TEST_F(Hardening, AFullDiskFailsTheRunAndKeepsTheDatabaseReadable) {
    const std::string mount = file("small");
    std::filesystem::create_directory(mount);
    if (getuid() != 0 || test::run_command("mount -t tmpfs -o size=300k tmpfs " +
                                           test::shell_quote(mount) + " 2>/dev/null")
                                 .exit_code != 0) {
        GTEST_SKIP() << "needs root and tmpfs to make a small disk";
    }
    const std::string small_db = mount + "/runs.sqlite";
    const auto result = run_cli(
        {"run", "--db", small_db, "--set", "train.max_steps=5000", "--set", "eval.every=0"});
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const auto listed = run_cli({"runs", "list", "--db", small_db, "--json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    ASSERT_FALSE(listed.lines().empty());
    const json run = json::parse(listed.lines().front());
    EXPECT_EQ(run["status"], "failed");
    EXPECT_NE(run["error"].get<std::string>().find("full"), std::string::npos) << run["error"];
    const std::string id = std::to_string(run["run_id"].get<int>());
    EXPECT_EQ(run_cli({"runs", "show", id, "--db", small_db}).exit_code, 0);
    EXPECT_EQ(run_cli({"runs", "export", id, "--db", small_db, "--format", "csv"}).exit_code, 0);
    EXPECT_EQ(run_cli({"runs", "delete", id, "--db", small_db}).exit_code, 0);
    test::run_command("umount " + test::shell_quote(mount));
}

// The database alone on a full disk (a copy: no -wal or -shm beside it, which SQLite must
// make to open it as usual): the runs are still read, and every write says the disk is full.
// Once there is room, the file opens as before.
TEST_F(Hardening, AFullDiskWithTheDatabaseAloneIsStillRead) {
    make_database();
    const std::string mount = file("full");
    std::filesystem::create_directory(mount);
    if (getuid() != 0 || test::run_command("mount -t tmpfs -o size=1m tmpfs " +
                                           test::shell_quote(mount) + " 2>/dev/null")
                                 .exit_code != 0) {
        GTEST_SKIP() << "needs root and tmpfs to make a small disk";
    }
    const Unmount unmount{mount};
    const std::string copy = mount + "/runs.sqlite";
    std::filesystem::copy_file(db(), copy);
    test::run_command("dd if=/dev/zero of=" + test::shell_quote(mount + "/fill") +
                      " bs=4k 2>/dev/null");
    const auto listed = run_cli({"runs", "list", "--db", copy, "--json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(listed.lines().size(), 1u);
    EXPECT_EQ(run_cli({"runs", "show", "1", "--db", copy}).exit_code, 0);
    EXPECT_EQ(run_cli({"runs", "export", "1", "--db", copy, "--format", "csv"}).exit_code, 0);
    for (const std::vector<std::string>& write :
         {std::vector<std::string>{"runs", "delete", "1"}, {"runs", "tag", "1", "x"}}) {
        std::vector<std::string> args = write;
        args.insert(args.end(), {"--db", copy});
        const auto refused = run_cli(args);
        EXPECT_EQ(refused.exit_code, 2) << refused.err;
        EXPECT_NE(refused.err.find("the disk holding the run store " + copy + " is full"),
                  std::string::npos)
            << refused.err;
    }
    std::filesystem::remove(mount + "/fill");
    EXPECT_EQ(run_cli({"runs", "tag", "1", "kept", "--db", copy}).exit_code, 0);
    const auto again = run_cli({"runs", "list", "--db", copy, "--json"});
    ASSERT_EQ(again.lines().size(), 1u);
    EXPECT_EQ(json::parse(again.lines().front())["tags"], "kept");
}

// A database on a read-only file system: read as usual; a write says it is read-only (exit
// 2), not SQLite's statement.
TEST_F(Hardening, AReadOnlyDatabaseIsReadAndWritesSayWhy) {
    make_database();
    const std::string mount = file("readonly");
    std::filesystem::create_directory(mount);
    const std::string folder = test::shell_quote(m_dir.path());
    if (getuid() != 0 ||
        test::run_command("mount --bind " + folder + " " + test::shell_quote(mount) +
                          " 2>/dev/null && mount -o remount,bind,ro " + test::shell_quote(mount))
                .exit_code != 0) {
        GTEST_SKIP() << "needs root to mount a folder read-only";
    }
    std::optional<Unmount> unmount;
    unmount.emplace().path = mount;
    const std::string seen = mount + "/runs.sqlite";
    EXPECT_EQ(run_cli({"runs", "list", "--db", seen}).exit_code, 0);
    for (const std::vector<std::string>& write :
         {std::vector<std::string>{"runs", "delete", "1"}, {"runs", "tag", "1", "x"}}) {
        std::vector<std::string> args = write;
        args.insert(args.end(), {"--db", seen});
        const auto refused = run_cli(args);
        EXPECT_EQ(refused.exit_code, 2) << refused.err;
        EXPECT_NE(refused.err.find("cannot be written: it is read-only"), std::string::npos)
            << refused.err;
        EXPECT_EQ(refused.err.find("UPDATE"), std::string::npos) << refused.err;
    }
    unmount.reset();
    EXPECT_EQ(run_count(), 1u);
}

// A database copied alone onto a read-only file system (no -wal or -shm beside it, which
// SQLite must make to open it as usual): its runs are read, every write says why not and
// what to do, and one of an older version says it needs a writable copy to be upgraded.
TEST_F(Hardening, ACopiedDatabaseOnAReadOnlyMountIsRead) {
    make_database();
    const std::string source = file("copied");
    const std::string mount = file("readonly-copy");
    std::filesystem::create_directories(source);
    std::filesystem::create_directory(mount);
    {
        RunStore store = RunStore::open(db());  // its log moved into the file, as a copy is
    }
    std::filesystem::copy_file(db(), source + "/runs.sqlite");
    std::filesystem::copy_file(test::fixture("store/runs-v1.sqlite"), source + "/old.sqlite");
    for (const char* beside : {"-wal", "-shm"}) {
        ASSERT_FALSE(std::filesystem::exists(source + "/runs.sqlite" + beside));
    }
    if (getuid() != 0 ||
        test::run_command("mount --bind " + test::shell_quote(source) + " " +
                          test::shell_quote(mount) + " 2>/dev/null && mount -o remount,bind,ro " +
                          test::shell_quote(mount))
                .exit_code != 0) {
        GTEST_SKIP() << "needs root to mount a folder read-only";
    }
    const Unmount unmount{mount};
    const std::string seen = mount + "/runs.sqlite";
    const auto listed = run_cli({"runs", "list", "--db", seen, "--json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(listed.lines().size(), 1u);
    EXPECT_EQ(run_cli({"runs", "show", "1", "--db", seen}).exit_code, 0);
    for (const std::vector<std::string>& write : {std::vector<std::string>{"runs", "tag", "1", "x"},
                                                  {"run", "--set", "train.max_steps=1"}}) {
        std::vector<std::string> args = write;
        args.insert(args.end(), {"--db", seen});
        const auto refused = run_cli(args);
        EXPECT_EQ(refused.exit_code, 2) << refused.err;
        EXPECT_NE(refused.err.find(seen + " is on a read-only file system: its runs can be read, "
                                          "not changed"),
                  std::string::npos)
            << refused.err;
        EXPECT_NE(refused.err.find("copy it to a folder you may write to"), std::string::npos);
    }
    const auto old = run_cli({"runs", "list", "--db", mount + "/old.sqlite"});
    EXPECT_EQ(old.exit_code, 2) << old.err;
    EXPECT_NE(old.err.find("written by an older OOM Lab: it must be upgraded"), std::string::npos)
        << old.err;
    EXPECT_EQ(old.err.find("cannot open the run store for writing"), std::string::npos);
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
