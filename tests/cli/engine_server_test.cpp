// `oomlab-cli engine-server`: a command handed to it runs in a copy of the server and ends as
// it would alone (oomlab/session/engine_server.h).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <thread>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using namespace std::chrono_literals;

// A server of this test's own, stopped (SIGTERM) at the end.
class EngineServer {
public:
    EngineServer() {
        // One thread, as the test preset runs: with more, the BLAS starts its threads when the
        // engine loads and the server refuses to serve. The commands get it too (they would
        // otherwise be declined for another OpenMP setting).
        setenv("OMP_NUM_THREADS", "1", /*overwrite=*/0);
        m_pid = fork();
        if (m_pid == 0) {
            if (!freopen(m_log.c_str(), "w", stderr)) {
                _exit(126);
            }
            execl(test::cli_program(), test::cli_program(), "engine-server", m_folder.c_str(),
                  static_cast<char*>(nullptr));
            _exit(127);
        }
        for (int attempt = 0; attempt < 600 && !ready() && !m_ended; ++attempt) {
            std::this_thread::sleep_for(50ms);
            m_ended = waitpid(m_pid, nullptr, WNOHANG) == m_pid;  // refused to serve
        }
    }
    ~EngineServer() {
        if (!m_ended) {
            kill(m_pid, SIGTERM);
            test::wait_exit(m_pid, std::chrono::seconds(30));
        }
    }
    EngineServer(const EngineServer&) = delete;
    EngineServer& operator=(const EngineServer&) = delete;

    bool ready() const {
        struct stat info {};
        return stat(m_socket.c_str(), &info) == 0 && S_ISSOCK(info.st_mode);
    }
    std::string setting() const { return "OOMLAB_ENGINE_SERVER=" + m_folder; }
    std::string log() const { return test::read_text(m_log); }
    pid_t pid() const { return m_pid; }
    // The copy that ran the `nth` command it took (from 1), or 0 before it did.
    pid_t copy(int nth) const {
        const std::string text = log();
        const std::regex ran(R"(ran \S* of pid \d+ as pid (\d+))");
        int seen = 0;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), ran);
             it != std::sregex_iterator(); ++it) {
            if (++seen == nth) {
                return static_cast<pid_t>(std::stol((*it)[1]));
            }
        }
        return 0;
    }
    // The same, waiting up to 30 s for it.
    pid_t wait_for_copy(int nth) const {
        for (int attempt = 0; attempt < 600 && copy(nth) == 0; ++attempt) {
            std::this_thread::sleep_for(50ms);
        }
        return copy(nth);
    }

private:
    test::TempDir m_dir;
    std::string m_folder = m_dir.path();
    // Where oomlab-cli's server listens in it: the folder and the program's file name.
    std::string m_socket = m_dir.file("oomlab-cli");
    std::string m_log = m_dir.file("server.log");
    pid_t m_pid = -1;
    bool m_ended = false;
};

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t found = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
        ++found;
    }
    return found;
}

// The figure after "outside the allocator" in a run's report, in MiB.
double outside_the_allocator(const std::string& report) {
    std::smatch found;
    const std::regex figure(R"(outside the allocator\s+([0-9.]+) MiB)");
    return std::regex_search(report, found, figure) ? std::stod(found[1]) : -1;
}

// Waits up to 30 s for the database at `db` to hold a run.
bool has_a_run(const std::string& db) {
    for (int attempt = 0; attempt < 600; ++attempt) {
        try {
            if (!RunStore::open(db).list_runs().empty()) {
                return true;
            }
        } catch (const std::exception&) {  // not made yet
        }
        std::this_thread::sleep_for(50ms);
    }
    return false;
}

// Starts oomlab-cli ARGUMENTS with `setting`, at the priority `nice` (the server's and more).
pid_t start_cli(const std::vector<std::string>& arguments, const std::string& setting,
                const std::string& err_file, int nice = 0) {
    const pid_t child = fork();
    if (child == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen(err_file.c_str(), "w", stderr) ||
            setpriority(PRIO_PROCESS, 0, getpriority(PRIO_PROCESS, 0) + nice) != 0) {
            _exit(126);
        }
        putenv(const_cast<char*>(setting.c_str()));
        std::vector<char*> argv{const_cast<char*>(test::cli_program())};
        for (const std::string& argument : arguments) {
            argv.push_back(const_cast<char*>(argument.c_str()));
        }
        argv.push_back(nullptr);
        execv(test::cli_program(), argv.data());
        _exit(127);
    }
    return child;
}

TEST(EngineServer, ACommandRunsInACopyAndEndsAsItWouldAlone) {
    const EngineServer server;
    ASSERT_TRUE(server.ready()) << server.log();
    test::TempDir dir;
    const std::vector<std::string> run = {"run", "--db", dir.file("runs.sqlite"), "--set",
                                          "train.max_steps=2"};
    const test::CliResult alone = test::run_cli(run, {"OOMLAB_ENGINE_SERVER="});
    const test::CliResult copied = test::run_cli(run, {server.setting()});
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    EXPECT_EQ(copied.exit_code, 0) << copied.err;
    EXPECT_EQ(count(server.log(), "ran run of pid"), 1u) << server.log();
    // Its report is the run's own (run 2 of the same database), its memory too: the copy's
    // resident memory counts the engine's libraries as a process that loaded them does.
    EXPECT_NE(copied.out.find("run 2"), std::string::npos) << copied.out;
    const double alone_mib = outside_the_allocator(alone.out);
    EXPECT_GT(alone_mib, 0) << alone.out;
    EXPECT_NEAR(outside_the_allocator(copied.out), alone_mib, alone_mib * 0.05) << copied.out;

    // A refused command: the same message on its standard error, the same exit code.
    const test::CliResult refused_alone = test::run_cli({"frobnicate"}, {"OOMLAB_ENGINE_SERVER="});
    const test::CliResult refused = test::run_cli({"frobnicate"}, {server.setting()});
    EXPECT_EQ(refused.exit_code, refused_alone.exit_code);
    EXPECT_NE(refused_alone.exit_code, 0);
    EXPECT_EQ(refused.err, refused_alone.err);
    EXPECT_EQ(count(server.log(), "ran frobnicate of pid"), 1u) << server.log();
}

TEST(EngineServer, TheCopyWorksInTheCommandsFolderWithItsUmask) {
    const EngineServer server;
    ASSERT_TRUE(server.ready()) << server.log();
    test::TempDir dir;
    const test::CommandResult made = test::run_command(
        "cd " + test::shell_quote(dir.path()) + " && umask 027 && " + server.setting() + " " +
        test::shell_quote(test::cli_program()) +
        " glove synth 6B.50d --rows 3 --out here.txt >/dev/null 2>&1 && stat -c %a here.txt");
    ASSERT_EQ(made.exit_code, 0) << made.out;
    EXPECT_EQ(made.out, "640\n");
    EXPECT_EQ(count(server.log(), "ran glove of pid"), 1u) << server.log();
}

TEST(EngineServer, TheCopyHasTheCommandsEnvironmentAndOpenFiles) {
    const EngineServer server;
    ASSERT_TRUE(server.ready()) << server.log();
    test::TempDir dir;
    const std::string cli = server.setting() + " " + test::shell_quote(test::cli_program());
    // The database's default place comes from the command's XDG_DATA_HOME, not the server's.
    const test::CommandResult listed = test::run_command(
        "XDG_DATA_HOME=" + test::shell_quote(dir.file("data")) + " " + cli + " runs list 2>&1");
    EXPECT_NE(listed.out.find(dir.file("data") + "/oomlab/runs.sqlite"), std::string::npos)
        << listed.out;
    // A file open as descriptor 3 of the command is descriptor 3 of the copy.
    test::write_file(dir.file("settings.json"), R"({"train": {"batch_size": 7}})");
    const test::CommandResult estimated =
        test::run_command(cli + " estimate --config /dev/fd/3 --json 3<" +
                          test::shell_quote(dir.file("settings.json")) + " 2>&1");
    EXPECT_EQ(estimated.exit_code, 0) << estimated.out;
    EXPECT_NE(estimated.out.find("\"peak_bytes\""), std::string::npos) << estimated.out;
    EXPECT_EQ(count(server.log(), "ran runs of pid"), 1u) << server.log();
    EXPECT_EQ(count(server.log(), "ran estimate of pid"), 1u) << server.log();
}

TEST(EngineServer, ACommandWhoseLibrariesWouldLoadOtherwiseRunsAlone) {
    const EngineServer server;
    ASSERT_TRUE(server.ready()) << server.log();
    const char* threads = std::getenv("OMP_NUM_THREADS");
    const std::string other =
        "OMP_NUM_THREADS=" + std::to_string(threads ? std::atoi(threads) + 1 : 3);
    const test::CliResult ran = test::run_cli({"--version"}, {server.setting(), other});
    EXPECT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_NE(ran.out.find("oomlab-cli "), std::string::npos) << ran.out;
    EXPECT_NE(server.log().find("declined --version of pid"), std::string::npos) << server.log();
    EXPECT_EQ(count(server.log(), "ran "), 0u) << server.log();
}

TEST(EngineServer, ASignalReachesTheCopyAndItsEndIsTheStartersEnd) {
    const EngineServer server;
    ASSERT_TRUE(server.ready()) << server.log();
    test::TempDir dir;
    const std::vector<std::string> long_run = {"run", "--db", dir.file("runs.sqlite"), "--set",
                                               "train.epochs=1000"};
    // SIGTERM to the process that handed the command over: the run stops and is saved, as
    // a run of its own would be (exit 130, "cancelled").
    const pid_t stopped = start_cli(long_run, server.setting(), dir.file("stopped.err"));
    ASSERT_NE(server.wait_for_copy(1), 0) << server.log();
    ASSERT_TRUE(has_a_run(dir.file("runs.sqlite"))) << "the run never began";
    kill(stopped, SIGTERM);
    const int stopped_status = test::wait_exit(stopped, std::chrono::seconds(60));
    ASSERT_TRUE(WIFEXITED(stopped_status)) << test::read_text(dir.file("stopped.err"));
    EXPECT_EQ(WEXITSTATUS(stopped_status), 130) << test::read_text(dir.file("stopped.err"));
    const test::CliResult listed =
        test::run_cli({"runs", "list", "--db", dir.file("runs.sqlite")}, {"OOMLAB_ENGINE_SERVER="});
    EXPECT_NE(listed.out.find("cancelled"), std::string::npos) << listed.out;

    // The copy killed: its starter ends by the same signal.
    const pid_t killed = start_cli(long_run, server.setting(), dir.file("killed.err"));
    ASSERT_NE(server.wait_for_copy(2), 0) << server.log();
    kill(server.copy(2), SIGKILL);
    const int killed_status = test::wait_exit(killed, std::chrono::seconds(60));
    ASSERT_TRUE(WIFSIGNALED(killed_status)) << killed_status;
    EXPECT_EQ(WTERMSIG(killed_status), SIGKILL);

    // The starter killed: its copy goes with it. Started at a lower priority than the server,
    // as a student's run of the class is, the copy runs at the starter's.
    const pid_t starter = start_cli(long_run, server.setting(), dir.file("starter.err"), 5);
    const pid_t orphan = server.wait_for_copy(3);
    ASSERT_NE(orphan, 0) << server.log();
    EXPECT_EQ(getpriority(PRIO_PROCESS, static_cast<id_t>(orphan)),
              getpriority(PRIO_PROCESS, 0) + 5);
    kill(starter, SIGKILL);
    test::wait_exit(starter, std::chrono::seconds(60));
    bool gone = false;
    for (int attempt = 0; attempt < 600 && !gone; ++attempt) {
        std::this_thread::sleep_for(50ms);
        gone = kill(orphan, 0) != 0;  // reaped by the server
    }
    EXPECT_TRUE(gone) << "the copy " << orphan << " outlived its starter";
}

}  // namespace
}  // namespace oomlab
