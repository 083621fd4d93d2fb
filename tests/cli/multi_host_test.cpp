// Ranks on hosts of their own: two network namespaces the test makes, joined by a veth pair at
// addresses it chooses, so MASTER_ADDR is rank 0's host and never the other's; each host with
// its own database. Then a cluster's faults: a link taken down mid-run, a rank stopped past
// the timeout. Skipped, saying why, where namespaces cannot be made (not root, no `ip`).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTimeoutSeconds = 5;  // distributed.timeout_s of the faults' runs

class TwoHosts : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) {
            GTEST_SKIP() << "making test hosts (network namespaces) needs root";
        }
        const std::string tag = std::to_string(getpid());
        m_hosts = {"oomlab-" + tag + "-a", "oomlab-" + tag + "-b"};
        m_links = {"oa" + tag, "ob" + tag};  // at most 15 characters
        const std::string subnet = "10.231." + std::to_string(getpid() % 250) + ".";
        m_addresses = {subnet + "1", subnet + "2"};
        const std::vector<std::string> commands = {
            "ip netns add " + m_hosts[0],
            "ip netns add " + m_hosts[1],
            // Made inside the hosts: the machine's own interfaces never list them, which a test
            // beside this one that names them would see change.
            "ip link add " + m_links[0] + " netns " + m_hosts[0] + " type veth peer name " +
                m_links[1] + " netns " + m_hosts[1],
        };
        for (const std::string& command : commands) {
            const test::CommandResult made = test::run_command(command + " 2>&1");
            if (made.exit_code != 0) {
                GTEST_SKIP() << "cannot make the test hosts (" << command << "): " << made.out;
            }
        }
        for (int host = 0; host < 2; ++host) {
            const std::string in = "ip -n " + m_hosts[host] + " ";
            for (const std::string& command :
                 {in + "addr add " + m_addresses[host] + "/24 dev " + m_links[host],
                  in + "link set lo up", in + "link set " + m_links[host] + " up"}) {
                ASSERT_EQ(test::run_command(command + " 2>&1").exit_code, 0) << command;
            }
        }
    }

    void TearDown() override {
        for (const pid_t pid : m_started) {
            if (pid > 0) {  // never kill(-1, ...): that is every process
                kill(pid, SIGKILL);
                waitpid(pid, nullptr, 0);
            }
        }
        for (const std::string& host : m_hosts) {
            // What is left in the host (ip netns pids lists only its processes).
            test::run_command("ip netns pids " + host + " 2>/dev/null | xargs -r kill -9");
            test::run_command("ip netns del " + host + " 2>/dev/null");  // its veth end with it
        }
    }

    // `oomlab-cli run` as rank `rank` on host `rank`, rank 0's host as MASTER_ADDR.
    pid_t start_rank(int rank, const std::vector<std::string>& settings) {
        std::vector<std::string> words = {"ip",
                                          "netns",
                                          "exec",
                                          m_hosts[rank],
                                          "env",
                                          "WORLD_SIZE=2",
                                          "RANK=" + std::to_string(rank),
                                          "MASTER_ADDR=" + m_addresses[0],
                                          "MASTER_PORT=29561",
                                          test::cli_program(),
                                          "run",
                                          "--db",
                                          db(rank)};
        for (const std::string& setting : settings) {
            words.push_back("--set");
            words.push_back(setting);
        }
        const std::string err = output_file(rank);
        const pid_t child = fork();
        if (child < 0) {
            ADD_FAILURE() << "cannot start rank " << rank << ": " << std::strerror(errno);
            return 0;
        }
        if (child == 0) {
            setpgid(0, 0);  // its own group: no signal meant for it reaches the test runner
            // Both streams: rank 0 ends its summary with the run's error, the others say theirs
            // on standard error.
            if (!freopen(err.c_str(), "w", stdout) || dup2(fileno(stdout), fileno(stderr)) < 0) {
                _exit(126);
            }
            std::vector<char*> argv;
            for (std::string& word : words) {
                argv.push_back(word.data());
            }
            argv.push_back(nullptr);
            execvp("ip", argv.data());  // ip netns exec, then env, exec in place: this pid
            _exit(127);
        }
        m_started.push_back(child);
        return child;
    }

    // Waits until host `rank`'s database holds step rows of rank `rank` (the group is training).
    bool wait_for_steps(int rank) {
        for (int attempt = 0; attempt < 600; ++attempt) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            try {
                const RunStore store = RunStore::open(db(rank));
                const auto runs = store.list_runs();
                if (!runs.empty() && store.metrics(runs.front().id).size() > 4) {
                    return true;
                }
            } catch (const std::exception&) {
            }
        }
        return false;
    }

    void set_link(int host, bool up) {
        ASSERT_EQ(test::run_command("ip -n " + m_hosts[host] + " link set " + m_links[host] +
                                    (up ? " up" : " down"))
                      .exit_code,
                  0);
    }

    std::string db(int rank) const { return m_dir.file("host" + std::to_string(rank) + ".sqlite"); }
    std::string output_file(int rank) const {
        return m_dir.file("rank" + std::to_string(rank) + ".out");
    }

    test::TempDir m_dir;
    std::vector<std::string> m_hosts;
    std::vector<std::string> m_links;
    std::vector<std::string> m_addresses;
    std::vector<pid_t> m_started;
};

bool exited_with(int status, int code) {
    return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == code;
}

// Rank 1 reaches rank 0 at rank 0's address, and Gloo listens on the address facing rank 0
// (it used to bind MASTER_ADDR, which is not rank 1's: "Cannot resolve ... to a (local)
// address").
TEST_F(TwoHosts, TrainOneRunEachWithItsOwnDatabase) {
    const std::vector<std::string> settings = {"train.max_steps=8", "distributed.timeout_s=20"};
    const pid_t rank0 = start_rank(0, settings);
    const pid_t rank1 = start_rank(1, settings);
    EXPECT_TRUE(exited_with(test::wait_exit(rank0, std::chrono::seconds(90)), 0))
        << test::read_text(output_file(0));
    EXPECT_TRUE(exited_with(test::wait_exit(rank1, std::chrono::seconds(90)), 0))
        << test::read_text(output_file(1));
    const std::optional<RunRecord> run = RunStore::open(db(0)).find_run(1);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->outcome.status, RunStatus::Completed);
    EXPECT_EQ(run->world_size, 2);
    ASSERT_EQ(run->ranks.size(), 2u);
    EXPECT_EQ(run->ranks[1].status, RunStatus::Completed);  // handed over to rank 0
    EXPECT_EQ(run->ranks[1].steps, 8);
}

// Host 0's link goes down mid-run: each rank ends within the timeout, naming itself and the
// collective that did not complete; rank 0's database has the run failed, its steps kept.
TEST_F(TwoHosts, ALinkTakenDownMidRunEndsBothRanksWithinTheTimeout) {
    const std::vector<std::string> settings = {
        "train.max_steps=1000000", "distributed.timeout_s=" + std::to_string(kTimeoutSeconds)};
    const pid_t ranks[2] = {start_rank(0, settings), start_rank(1, settings)};
    ASSERT_TRUE(wait_for_steps(0)) << test::read_text(output_file(0));
    const auto down = Clock::now();
    set_link(0, false);
    for (int rank = 0; rank < 2; ++rank) {
        const int status = test::wait_exit(ranks[rank], std::chrono::seconds(kTimeoutSeconds + 30));
        const auto took = std::chrono::duration<double>(Clock::now() - down).count();
        const std::string errors = test::read_text(output_file(rank));
        EXPECT_TRUE(exited_with(status, 1)) << "rank " << rank << ": " << errors;
        EXPECT_LT(took, kTimeoutSeconds + 15) << "rank " << rank;
        // The rank and its host, by the address the other ranks reach it at.
        EXPECT_NE(errors.find("rank " + std::to_string(rank) + " of 2 on "), std::string::npos)
            << errors;
        EXPECT_NE(errors.find("(" + m_addresses[std::size_t(rank)] + "): "), std::string::npos)
            << errors;
        EXPECT_NE(errors.find("distributed.timeout_s"), std::string::npos) << errors;
    }
    const std::optional<RunRecord> run = RunStore::open(db(0)).find_run(1);
    ASSERT_TRUE(run);
    EXPECT_EQ(run->outcome.status, RunStatus::Failed);
    EXPECT_GT(run->outcome.steps, 0);
    // Host 0's record says which ranks it knows ended, and that rank 1 told it nothing.
    const test::CliResult shown = test::run_cli({"runs", "show", "1", "--db", db(0)});
    EXPECT_NE(shown.out.find("rank 0  failed"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("rank 1    nothing recorded in this database"), std::string::npos)
        << shown.out;
}

// Rank 1 stopped (SIGSTOP) past the timeout: rank 0 ends within it, blaming no step of its
// own; rank 1, let go, finds its group gone and ends too. Nothing is left running.
TEST_F(TwoHosts, ARankStoppedPastTheTimeoutEndsTheOther) {
    const std::vector<std::string> settings = {
        "train.max_steps=1000000", "distributed.timeout_s=" + std::to_string(kTimeoutSeconds)};
    const pid_t rank0 = start_rank(0, settings);
    const pid_t rank1 = start_rank(1, settings);
    ASSERT_GT(rank1, 0);
    ASSERT_TRUE(wait_for_steps(0)) << test::read_text(output_file(0));
    const auto stopped = Clock::now();
    ASSERT_EQ(kill(rank1, SIGSTOP), 0);
    const int status = test::wait_exit(rank0, std::chrono::seconds(kTimeoutSeconds + 30));
    const auto took = std::chrono::duration<double>(Clock::now() - stopped).count();
    const std::string errors = test::read_text(output_file(0));
    EXPECT_TRUE(exited_with(status, 1)) << errors;
    EXPECT_LT(took, kTimeoutSeconds + 15);
    EXPECT_NE(errors.find("rank 0 of 2"), std::string::npos) << errors;
    EXPECT_NE(errors.find("did not complete within " + std::to_string(kTimeoutSeconds) + " s"),
              std::string::npos)
        << errors;
    kill(rank1, SIGCONT);
    EXPECT_NE(test::wait_exit(rank1, std::chrono::seconds(kTimeoutSeconds + 30)), -1)
        << "rank 1 did not end after its group was gone";
    EXPECT_EQ(RunStore::open(db(0)).find_run(1)->outcome.status, RunStatus::Failed);
}

}  // namespace
}  // namespace oomlab
