// Several processes and connections on one file: runs of dead writers become
// `interrupted`, runs of live writers are left alone, and readers never wait for writers.
//
// Children are forked before the parent opens the database: a process must not carry an
// open SQLite connection across fork().
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "oomlab/store/run_store.h"
#include "raw_sqlite.h"
#include "test_support.h"

namespace oomlab {
namespace {

NewRun bare_run(const std::string& name) {
    return {name, "{}", "cpu", "0.1.0", "none"};
}

// Three steps with their peaks: 100, 300, 200 bytes, at 10, 20, 30 ms.
std::vector<MetricRow> three_steps() {
    std::vector<MetricRow> rows(3);
    const std::int64_t peaks[] = {100, 300, 200};
    for (int i = 0; i < 3; ++i) {
        rows[i].step = i + 1;
        rows[i].phase = "step";
        rows[i].wall_ms = 10.0 * (i + 1);
        rows[i].peak_bytes = peaks[i];
    }
    return rows;
}

// A child process that opens the store, creates a run with a few metrics, reports the run
// id through a pipe and then waits: until the parent writes a byte (it exits normally
// without finishing the run) or kills it.
class WriterProcess {
public:
    explicit WriterProcess(const std::string& path) {
        int ready[2];
        int release[2];
        if (pipe(ready) != 0 || pipe(release) != 0) {
            throw std::runtime_error("pipe failed");
        }
        m_pid = fork();
        if (m_pid == 0) {
            close(ready[0]);
            close(release[1]);
            std::int64_t id = -1;
            std::optional<RunStore> store;  // open while the child lives, as a writer's is
            try {
                store = RunStore::open(path);
                id = store->create_run(bare_run("written by a child"));
                store->append_metrics(id, three_steps());
            } catch (...) {
            }
            (void)!write(ready[1], &id, sizeof id);
            char byte = 0;
            (void)!read(release[0], &byte, 1);
            _exit(0);  // no destructors, as if the process had crashed
        }
        close(ready[1]);
        close(release[0]);
        m_release = release[1];
        if (read(ready[0], &m_run_id, sizeof m_run_id) != sizeof m_run_id) {
            m_run_id = -1;
        }
        close(ready[0]);
    }
    ~WriterProcess() {
        if (m_pid > 0) {
            kill(m_pid, SIGKILL);
            reap();
        }
        close(m_release);
    }

    std::int64_t run_id() const { return m_run_id; }
    pid_t pid() const { return m_pid; }

    // Lets the child exit and waits until it has, leaving it a zombie (not reaped).
    void exit_without_reaping() {
        const char byte = 1;
        (void)!write(m_release, &byte, 1);
        siginfo_t info{};
        waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOWAIT);
    }
    void kill_and_reap() {
        kill(m_pid, SIGKILL);
        reap();
    }
    void reap() {
        waitpid(m_pid, nullptr, 0);
        m_pid = -1;
    }

private:
    pid_t m_pid = -1;
    int m_release = -1;
    std::int64_t m_run_id = -1;
};

TEST(RunStoreProcessTest, RunOfALiveWriterStaysRunningUntilTheWriterDies) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    WriterProcess writer(path);
    ASSERT_GT(writer.run_id(), 0);

    {
        RunStore reader = RunStore::open(path);  // the GUI opening while the CLI trains
        const auto run = reader.find_run(writer.run_id());
        ASSERT_TRUE(run.has_value());
        EXPECT_EQ(run->outcome.status, RunStatus::Running);
        EXPECT_EQ(run->outcome.error, "");
    }

    const pid_t writer_pid = writer.pid();
    writer.kill_and_reap();
    RunStore after = RunStore::open(path);
    const auto run = after.find_run(writer.run_id());
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->outcome.status, RunStatus::Interrupted);
    EXPECT_NE(run->outcome.error.find("ended before it finished"), std::string::npos)
        << run->outcome.error;
    EXPECT_NE(run->outcome.error.find("pid " + std::to_string(writer_pid)), std::string::npos);
    EXPECT_FALSE(run->finished_at.empty());
    EXPECT_EQ(after.metrics(writer.run_id()).size(), 3u);  // what was written is kept
    // and the run's figures say what it did, from those rows.
    EXPECT_EQ(run->outcome.steps, 3);
    EXPECT_EQ(run->outcome.peak_bytes, 300);
    EXPECT_DOUBLE_EQ(run->outcome.wall_seconds, 0.03);
}

TEST(RunStoreProcessTest, ExitedWriterIsMarkedWhileOwnRunsStayRunning) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    WriterProcess writer(path);
    ASSERT_GT(writer.run_id(), 0);
    const pid_t writer_pid = writer.pid();
    writer.exit_without_reaping();  // a zombie has ended too

    RunStore store = RunStore::open(path);
    const auto orphan = store.find_run(writer.run_id());
    ASSERT_TRUE(orphan.has_value());
    EXPECT_EQ(orphan->outcome.status, RunStatus::Interrupted);
    EXPECT_NE(orphan->outcome.error.find("pid " + std::to_string(writer_pid)), std::string::npos)
        << orphan->outcome.error;
    writer.reap();

    // Opening again from this process leaves this process's own run alone.
    const std::int64_t mine = store.create_run(bare_run("mine"));
    RunStore second = RunStore::open(path);
    EXPECT_EQ(second.find_run(mine)->outcome.status, RunStatus::Running);
    EXPECT_EQ(second.find_run(writer.run_id())->outcome.status, RunStatus::Interrupted);
}

// Whether a writer lives is its lock's to say: a writer on another host (which a pid check
// can never see) that is gone is found out, and a live writer whose pid means nothing here
// (another PID namespace, a container) is left alone.
TEST(RunStoreProcessTest, TheWritersLockDecidesNotItsHostOrPid) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    RunStore writer = RunStore::open(path);
    const std::int64_t live = writer.create_run(bare_run("live, in a container"));
    const std::int64_t gone = [&] {
        RunStore closed = RunStore::open(path);
        return closed.create_run(bare_run("gone, on another host"));
    }();
    {
        test::RawDatabase raw(path);
        raw.exec("UPDATE runs SET owner_host = 'some-other-host', owner_pid = 1 WHERE id = " +
                 std::to_string(gone));
        raw.exec("UPDATE runs SET owner_pid = 999999999 WHERE id = " + std::to_string(live));
    }
    RunStore reopened = RunStore::open(path);
    EXPECT_EQ(reopened.find_run(gone)->outcome.status, RunStatus::Interrupted);
    EXPECT_EQ(reopened.find_run(live)->outcome.status, RunStatus::Running);
    writer.finish_run(live, RunOutcome{});
    EXPECT_EQ(RunStore::open(path).find_run(live)->outcome.status, RunStatus::Completed);
}

TEST(RunStoreProcessTest, ReaderDoesNotWaitForAnOpenWriteTransaction) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    RunStore writer = RunStore::open(path);
    const std::int64_t id = writer.create_run(bare_run("live"));
    writer.add_event(id, {0, "note", "committed"});

    test::RawDatabase raw(path);
    raw.exec("BEGIN IMMEDIATE");
    raw.exec("INSERT INTO events (run_id, step, kind, message, created_at) VALUES (" +
             std::to_string(id) + ", 1, 'note', 'uncommitted', '2024-01-01T00:00:00.000Z')");
    raw.exec("UPDATE runs SET name = 'renamed' WHERE id = " + std::to_string(id));

    const auto start = std::chrono::steady_clock::now();
    RunStore reader = RunStore::open(path);
    const auto run = reader.find_run(id);
    const auto events = reader.events(id);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(waited, 1.0);  // far below the 5 s busy timeout: nothing blocked
    ASSERT_TRUE(run.has_value());
    EXPECT_EQ(run->name, "live");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].message, "committed");

    raw.exec("COMMIT");
    EXPECT_EQ(reader.find_run(id)->name, "renamed");
    EXPECT_EQ(reader.events(id).size(), 2u);
}

TEST(RunStoreProcessTest, WriterDoesNotWaitForAnOpenReadTransaction) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    RunStore writer = RunStore::open(path);
    const std::int64_t id = writer.create_run(bare_run("live"));

    test::RawDatabase raw(path);
    raw.exec("BEGIN");
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics"), 0);  // holds a read snapshot

    writer.append_metrics(id, std::vector<MetricRow>(1000));
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics"), 0);  // its snapshot is stable
    raw.exec("COMMIT");
    EXPECT_EQ(raw.query_int("SELECT count(*) FROM metrics"), 1000);
}

// A reader opening the store (the GUI's refresh) while another process starts runs must never
// find one of them `running` without its writer's lock and mark it interrupted.
TEST(RunStoreProcessTest, ARunBeingCreatedIsNeverTakenForADeadWritersRun) {
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    RunStore::open(path);  // the schema, before the reader polls
    int stop[2];
    ASSERT_EQ(pipe(stop), 0);
    const pid_t reader = fork();
    if (reader == 0) {
        close(stop[1]);
        fcntl(stop[0], F_SETFL, O_NONBLOCK);
        char byte = 0;
        for (int opens = 0; opens < 100000 && read(stop[0], &byte, 1) != 1; ++opens) {
            try {
                RunStore::open(path);  // marks the runs it takes for dead writers' ones
            } catch (...) {
            }
        }
        _exit(0);
    }
    close(stop[0]);
    std::vector<std::int64_t> ids;
    {
        RunStore writer = RunStore::open(path);
        for (int i = 0; i < 300; ++i) {
            ids.push_back(writer.create_run(bare_run("starting")));
        }
        const char byte = 1;
        (void)!write(stop[1], &byte, 1);
        waitpid(reader, nullptr, 0);
        close(stop[1]);
        for (const std::int64_t id : ids) {
            EXPECT_EQ(writer.find_run(id)->outcome.status, RunStatus::Running) << "run " << id;
        }
    }
}

// `processes` processes open `path` at the same moment, each creating a run: how many failed.
int processes_opening_together_failed(const std::string& path, int processes) {
    constexpr int kOpens = 5;  // as a launcher and the test polls do after the first
    int start[2];
    if (pipe(start) != 0) {
        return processes;
    }
    std::vector<pid_t> children;
    for (int i = 0; i < processes; ++i) {
        const pid_t child = fork();
        if (child == 0) {
            close(start[1]);
            char byte = 0;
            (void)!read(start[0], &byte, 1);  // all at once, when the pipe closes
            try {
                for (int again = 0; again < kOpens; ++again) {
                    RunStore store = RunStore::open(path);
                    if (again == 0) {
                        store.create_run(bare_run("opened together"));
                    }
                }
            } catch (const std::exception& error) {
                std::fprintf(stderr, "%s\n", error.what());
                _exit(1);
            }
            _exit(0);
        }
        children.push_back(child);
    }
    close(start[0]);
    close(start[1]);
    int failed = 0;
    for (const pid_t child : children) {
        int status = 0;
        waitpid(child, &status, 0);
        failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    return failed;
}

// The ranks of a data-parallel run open a new database at the same moment: the first open of
// a file turns on its write-ahead log, which SQLite refuses at once (no busy wait) to a
// connection that races another for it. Every opener must still get the store.
TEST(RunStoreProcessTest, ProcessesOpeningANewFileTogetherAllGetIt) {
    constexpr int kFiles = 30;
    constexpr int kProcesses = 8;
    test::TempDir dir;
    for (int file = 0; file < kFiles; ++file) {
        const std::string path = dir.file("runs" + std::to_string(file) + ".sqlite");
        ASSERT_EQ(processes_opening_together_failed(path, kProcesses), 0)
            << "of " << kProcesses << " processes opening " << path;
        EXPECT_EQ(RunStore::open(path).list_runs().size(), std::size_t(kProcesses));
    }
}

// A database deleted alone (`rm runs.sqlite`) leaves its -wal and -shm, which the store keeps
// on purpose. The ranks of the next run then made the new file beside them at once, and one of
// them failed with "disk I/O error" (about one run in three) while the others waited out the
// rendezvous.
TEST(RunStoreProcessTest, ProcessesMakingAFileBesideADeletedOnesLogAllGetIt) {
    constexpr int kRounds = 20;
    constexpr int kProcesses = 4;
    test::TempDir dir;
    const std::string path = dir.file("runs.sqlite");
    for (int round = 0; round < kRounds; ++round) {
        RunStore::open(path).create_run(bare_run("before the file was deleted"));
        ASSERT_TRUE(std::filesystem::remove(path));
        ASSERT_TRUE(std::filesystem::exists(path + "-shm")) << "nothing left beside it to test";
        ASSERT_EQ(processes_opening_together_failed(path, kProcesses), 0)
            << "of " << kProcesses << " processes opening " << path << ", round " << round;
        EXPECT_EQ(RunStore::open(path).list_runs().size(), std::size_t(kProcesses));
    }
}

}  // namespace
}  // namespace oomlab
