// A real Slurm: the test starts its own cluster of one node (munged, slurmctld and slurmd from
// Debian's packages, with their sockets, ports, state and logs in a temporary folder, as
// root) and runs `srun -n 2 oomlab-cli run ...` as a user of a cluster would: each task is a
// rank, from the variables srun sets, with no MASTER_* given. The daemons are stopped after,
// and none is left. Skipped, saying why, without root or without the packages.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"
#include "data_parallel_runs.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

namespace fs = std::filesystem;

class SlurmCluster : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0) {
            GTEST_SKIP() << "a Slurm cluster of the test's own needs root (its slurmd)";
        }
        for (const char* program : {"/usr/sbin/munged", "/usr/sbin/mungekey", "/usr/sbin/slurmctld",
                                    "/usr/sbin/slurmd", "/usr/bin/srun", "/usr/bin/sinfo"}) {
            if (!fs::exists(program)) {
                GTEST_SKIP() << program << " is missing (./oomlab.sh test installs munge, "
                             << "slurmctld, slurmd and slurm-client)";
            }
        }
        m_folder = m_dir.file("cluster");
        for (const char* sub : {"", "/state", "/spool", "/munge"}) {
            fs::create_directories(m_folder + sub);
        }
        fs::permissions(m_folder + "/munge", fs::perms::owner_all, fs::perm_options::replace);
        ASSERT_TRUE(start("mungekey -c -b 1024 -k " + path("munge/munge.key")));
        ASSERT_TRUE(start(
            "munged -f -S " + path("munge/socket") + " --key-file=" + path("munge/munge.key") +
            " --log-file=" + path("munged.log") + " --pid-file=" + path("munge/munged.pid") +
            " --seed-file=" + path("munge/seed")));
        write_config();
        // Both daemonize and write their pid files; -c and -i: a clean state.
        ASSERT_TRUE(start("slurmctld -c -i"));
        ASSERT_TRUE(start("slurmd -c"));
        if (!wait_for_idle_node()) {
            FAIL() << "the node did not come up in 30 s:\n"
                   << test::read_text(path("slurmctld.log")) << "\n"
                   << test::read_text(path("slurmd.log"));
        }
    }

    void TearDown() override {
        if (m_folder.empty()) {
            return;
        }
        // slurmd first (with any step it still runs), then the controller, then munge.
        for (const char* pid_file : {"slurmd.pid", "slurmctld.pid", "munge/munged.pid"}) {
            stop(path(pid_file));
        }
    }

    std::string path(const std::string& name) const { return m_folder + "/" + name; }

    // Runs `command` with this cluster's SLURM_CONF; whether it exited 0.
    bool start(const std::string& command) {
        const test::CommandResult ran =
            test::run_command("SLURM_CONF=" + path("slurm.conf") + " " + command + " 2>&1");
        if (ran.exit_code != 0) {
            ADD_FAILURE() << command << ": " << ran.out;
        }
        return ran.exit_code == 0;
    }

    void write_config() {
        char host[256] = {};
        gethostname(host, sizeof host - 1);
        const std::string node = host;
        std::ofstream conf(path("slurm.conf"));
        conf << "ClusterName=oomlabtest\n"
             << "SlurmctldHost=" << node << "(127.0.0.1)\n"
             << "SlurmctldPort=" << free_loopback_port() << "\n"
             << "SlurmdPort=" << free_loopback_port() << "\n"
             << "AuthType=auth/munge\nCredType=cred/munge\n"
             << "AuthInfo=socket=" << path("munge/socket") << "\n"
             << "SlurmUser=root\nSlurmdUser=root\n"
             << "StateSaveLocation=" << path("state") << "\n"
             << "SlurmdSpoolDir=" << path("spool") << "\n"
             << "SlurmctldPidFile=" << path("slurmctld.pid") << "\n"
             << "SlurmdPidFile=" << path("slurmd.pid") << "\n"
             << "SlurmctldLogFile=" << path("slurmctld.log") << "\n"
             << "SlurmdLogFile=" << path("slurmd.log") << "\n"
             << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
             << "SchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
             << "SelectTypeParameters=CR_CPU\nReturnToService=2\n"
             << "JobAcctGatherType=jobacct_gather/none\n"
             << "AccountingStorageType=accounting_storage/none\n"
             << "NodeName=" << node << " NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n"
             << "PartitionName=test Nodes=" << node
             << " Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n";
    }

    bool wait_for_idle_node() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (std::chrono::steady_clock::now() < deadline) {
            const test::CommandResult state = test::run_command("SLURM_CONF=" + path("slurm.conf") +
                                                                " sinfo -h -o %t 2>/dev/null");
            if (state.exit_code == 0 && state.out.rfind("idle", 0) == 0) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        return false;
    }

    // Ends the daemon whose pid `pid_file` holds: SIGTERM, then SIGKILL after 10 s.
    static void stop(const std::string& pid_file) {
        std::ifstream in(pid_file);
        pid_t pid = 0;
        if (!(in >> pid) || pid <= 0) {  // never kill(-1, ...): that is every process
            return;
        }
        kill(pid, SIGTERM);
        for (int waited = 0; waited < 100 && kill(pid, 0) == 0; ++waited) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        if (kill(pid, 0) == 0) {
            kill(pid, SIGKILL);
        }
        EXPECT_NE(kill(pid, 0), 0) << pid_file << ": the daemon is still running";
    }

    test::TempDir m_dir;
    std::string m_folder;
};

TEST_F(SlurmCluster, TheTasksOfAnSrunStepTrainOneRun) {
    const std::string db = m_dir.file("runs.sqlite");
    const test::CommandResult ran = test::run_command(
        "SLURM_CONF=" + path("slurm.conf") + " timeout 120 srun -N 1 -n 2 --kill-on-bad-exit=1 " +
        test::shell_quote(test::cli_program()) + " run --db " + test::shell_quote(db) +
        " --set train.max_steps=12 --set distributed.timeout_s=30 2>&1 </dev/null");
    ASSERT_EQ(ran.exit_code, 0) << ran.out;
    for (const auto& rank : one_run_of_two_ranks(db).at("ranks")) {
        EXPECT_EQ(rank.at("status"), "completed") << rank.dump();
        EXPECT_EQ(rank.at("steps"), 12) << rank.dump();
    }
}

}  // namespace
}  // namespace oomlab
