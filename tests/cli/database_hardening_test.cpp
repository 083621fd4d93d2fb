// Databases under stress: a file that is not ours kept byte for byte, another writer holding
// the lock, a full disk, a read-only file system.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include <sqlite3.h>
#include <nlohmann/json.hpp>

#include "hardening_fixture.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::Hardening;
using test::python_available;
using test::run_cli;
using test::Unmount;

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

// A run's uid names its TensorBoard file: one changed into a path by hand is refused, and
// nothing is written outside --out.
TEST_F(Hardening, ARunUidThatIsAPathIsNotSent) {
    if (!python_available()) {
        GTEST_SKIP() << "python3 changes the database";
    }
    make_database();
    ASSERT_EQ(
        test::run_command("python3 -c \"import sqlite3, sys\n"
                          "c = sqlite3.connect(sys.argv[1])\n"
                          "c.execute(\\\"UPDATE runs SET uid = 'abcdefgh/../../../escaped'\\\")\n"
                          "c.commit()\" " +
                          test::shell_quote(db()))
            .exit_code,
        0);
    const std::string out = file("logs/inner");
    const auto result =
        run_cli({"runs", "export", "1", "--to", "tensorboard", "--out", out, "--db", db()});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("uid"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("abcdefgh/../../../escaped"), std::string::npos) << result.err;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(file(""))) {
        EXPECT_EQ(entry.path().filename().string().find("escaped"), std::string::npos)
            << entry.path();
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

}  // namespace
}  // namespace oomlab
