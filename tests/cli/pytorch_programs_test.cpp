// The engine with PyTorch 2.x's own programs, as users run them: torchrun launching
// `oomlab-cli run` with its defaults, and torch.cuda._memory_viz reading the snapshot a run
// wrote. They need a Python with PyTorch 2.x, named by OOMLAB_TORCH_PYTHON
// (`./oomlab.sh cuda-test` installs one and sets it); without it they skip. Debian's own
// torchrun (python3-torch 1.13, which `./oomlab.sh test` installs) launches it too.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "data_parallel_runs.h"
#include "oomlab/launch/rendezvous.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::torch_python;

#define OOMLAB_REQUIRE_TORCH_PYTHON()                                                        \
    do {                                                                                     \
        if (torch_python().empty()) {                                                        \
            GTEST_SKIP() << "OOMLAB_TORCH_PYTHON is not set: these tests run PyTorch 2.x's " \
                            "own programs (./oomlab.sh cuda-test sets it)";                  \
        }                                                                                    \
    } while (0)

constexpr const char* kDebianPython = "/usr/bin/python3";

// The major.minor of the PyTorch `python` imports ("1.13", "2.11"), or "" without one.
std::string python_torch_version(const std::string& python) {
    const test::CommandResult version =
        test::run_command(test::shell_quote(python) +
                          " -c 'import torch; print(torch.__version__)' 2>/dev/null </dev/null");
    const std::string out = version.exit_code == 0 ? version.out : "";
    const std::size_t second_dot = out.find('.', out.find('.') + 1);
    return second_dot == std::string::npos ? "" : out.substr(0, second_dot);
}

// The major.minor of the LibTorch oomlab-cli was built with, from its --version.
std::string engine_torch_version() {
    const std::string out = test::run_cli({"--version"}).out;
    const std::size_t at = out.find("LibTorch ");
    if (at == std::string::npos) {
        return "";
    }
    const std::size_t begin = at + 9;
    const std::size_t second_dot = out.find('.', out.find('.', begin) + 1);
    return out.substr(begin, second_dot - begin);
}

// `python -m module arguments...`, bounded in time, with standard error folded in.
test::CommandResult run_python_module(const std::string& module,
                                      const std::vector<std::string>& arguments,
                                      int timeout_s = 120,
                                      const std::string& python = torch_python()) {
    std::string command =
        "timeout " + std::to_string(timeout_s) + " " + test::shell_quote(python) + " -m " + module;
    for (const auto& argument : arguments) {
        command += " " + test::shell_quote(argument);
    }
    return test::run_command(command + " 2>&1 </dev/null");
}

// torchrun's default (static) rendezvous: its agent serves the store on MASTER_PORT and tells
// the workers so (TORCHELASTIC_USE_AGENT_STORE); rank 0 must join it, not serve its own.
TEST(PyTorchPrograms, TorchrunWithItsDefaultsTrainsOneRunOfTwoRanks) {
    OOMLAB_REQUIRE_TORCH_PYTHON();
    if (python_torch_version(torch_python()) != engine_torch_version()) {
        GTEST_SKIP() << "OOMLAB_TORCH_PYTHON's PyTorch is not oomlab-cli's LibTorch "
                     << engine_torch_version() << ": their stores do not talk to each other "
                     << "(ATorchrunOfAnotherPyTorchIsNamed)";
    }
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const test::CommandResult ran = run_python_module(
        "torch.distributed.run",
        {"--nproc_per_node", "2", "--master_port", std::to_string(free_loopback_port()),
         "--no_python", test::cli_program(), "run", "--db", db, "--json", "--set",
         "train.max_steps=12", "--set", "distributed.timeout_s=30"});
    ASSERT_EQ(ran.exit_code, 0) << ran.out;
    for (const auto& rank : one_run_of_two_ranks(db).at("ranks")) {
        EXPECT_GT(rank.at("peak_bytes").get<std::int64_t>(), 0) << rank.dump();
    }
}

// Debian 12's torchrun (python3-torch 1.13.1 under Python 3.11) with its default static
// rendezvous, the launcher a user of Debian's LibTorch has at hand. Its agent cannot start
// workers with the default --redirects/--tee of 0 there (its Std flag lookup misses 0 on
// Python 3.11: "'NoneType' object has no attribute 'get'"), so the ranks' output goes to its
// log files and is copied to the console (1), as a user works around it.
TEST(PyTorchPrograms, DebiansTorchrunTrainsOneRunOfTwoRanks) {
    const std::string python = kDebianPython;
    if (python_torch_version(python) != "1.13") {
        GTEST_SKIP() << "Debian's python3-torch 1.13 is not installed (./oomlab.sh test installs "
                        "it)";
    }
    if (engine_torch_version() != "1.13") {
        GTEST_SKIP() << "oomlab-cli is built with LibTorch " << engine_torch_version()
                     << ", whose store does not talk to torchrun 1.13's "
                     << "(ATorchrunOfAnotherPyTorchIsNamed)";
    }
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const test::CommandResult ran = run_python_module(
        "torch.distributed.run",
        {"--nproc_per_node", "2", "--master_port", std::to_string(free_loopback_port()),
         "--redirects", "1", "--tee", "1", "--log_dir", dir.file("torchrun-logs"), "--no_python",
         test::cli_program(), "run", "--db", db, "--set", "train.max_steps=12", "--set",
         "distributed.timeout_s=30"},
        120, python);
    ASSERT_EQ(ran.exit_code, 0) << ran.out;
    one_run_of_two_ranks(db);
}

// A torchrun of another PyTorch than oomlab-cli's LibTorch (Debian's 1.13 with a 2.x build, or
// OOMLAB_TORCH_PYTHON's 2.x with Debian's): neither store answers the other's client, which
// would look like ranks that never come; every rank says what it may be, within the timeout.
TEST(PyTorchPrograms, ATorchrunOfAnotherPyTorchIsNamed) {
    const std::string engine = engine_torch_version();
    std::string python;
    for (const std::string& candidate : {std::string(kDebianPython), torch_python()}) {
        const std::string version = candidate.empty() ? "" : python_torch_version(candidate);
        if (!version.empty() && version.substr(0, 2) != engine.substr(0, 2)) {
            python = candidate;
        }
    }
    if (python.empty()) {
        GTEST_SKIP() << "no torchrun of another major PyTorch than oomlab-cli's LibTorch " << engine
                     << " (Debian's python3-torch, or OOMLAB_TORCH_PYTHON)";
    }
    test::TempDir dir;
    const test::CommandResult ran = run_python_module(
        "torch.distributed.run",
        {"--nproc_per_node", "2", "--master_port", std::to_string(free_loopback_port()),
         "--redirects", "1", "--tee", "1", "--log_dir", dir.file("torchrun-logs"), "--no_python",
         test::cli_program(), "run", "--db", dir.file("runs.sqlite"), "--set", "train.max_steps=3",
         "--set", "distributed.timeout_s=5"},
        120, python);
    EXPECT_NE(ran.exit_code, 0) << ran.out;
    EXPECT_NE(
        ran.out.find("a torchrun of another PyTorch than oomlab-cli's LibTorch (" + engine + ")"),
        std::string::npos)
        << ran.out;
}

// PyTorch's own reader of memory snapshots walks the file a CPU run wrote: its summary of the
// segments, its text trace and its two HTML plots. (Its flame-graph views fetch a script from
// the network, so they are left out.)
TEST(PyTorchPrograms, TorchsMemoryVizReadsTheSnapshotARunWrote) {
    OOMLAB_REQUIRE_TORCH_PYTHON();
    test::TempDir dir;
    const std::string snapshot = dir.file("run.pickle");
    const test::CliResult trained =
        test::run_cli({"run", "--db", dir.file("runs.sqlite"), "--set", "train.max_steps=3",
                       "--set", "debug.memory_snapshot=" + snapshot});
    ASSERT_EQ(trained.exit_code, 0) << trained.err;

    const test::CommandResult stats =
        run_python_module("torch.cuda._memory_viz", {"stats", snapshot});
    EXPECT_EQ(stats.exit_code, 0) << stats.out;
    // On the CPU each tensor is its own segment: what is reserved at the end is allocated.
    const auto figure = [&](const std::string& name) {
        const std::size_t at = stats.out.find(name + ": ");
        return at == std::string::npos
                   ? std::string("missing")
                   : stats.out.substr(at + name.size() + 2,
                                      stats.out.find('\n', at) - at - name.size() - 2);
    };
    EXPECT_NE(figure("total_reserved"), "missing") << stats.out;
    EXPECT_EQ(figure("total_reserved"), figure("total_allocated")) << stats.out;
    EXPECT_EQ(figure("total_free"), "0.0B") << stats.out;

    const test::CommandResult trace =
        run_python_module("torch.cuda._memory_viz", {"trace", snapshot});
    EXPECT_EQ(trace.exit_code, 0) << trace.out;
    EXPECT_NE(trace.out.find(" entries\n"), std::string::npos) << trace.out;
    EXPECT_NE(trace.out.find("= cudaMalloc("), std::string::npos) << trace.out;  // its segments
    for (const char* plot : {"trace_plot", "segment_plot"}) {
        const std::string html = dir.file(std::string(plot) + ".html");
        const test::CommandResult drawn =
            run_python_module("torch.cuda._memory_viz", {plot, snapshot, "-o", html});
        EXPECT_EQ(drawn.exit_code, 0) << plot << ": " << drawn.out;
        EXPECT_GT(test::read_text(html).size(), 1000u) << plot;
    }
}

// PyTorch's profiler on the CPU: a user's training script records a Chrome trace with
// profile_memory=True; `snapshot show` replays its memory events to the peak PyTorch's own
// totals reach, and names the script's own line and what each byte was for. The same profile
// made into a snapshot by PyTorch's memory_viz carries its categories of the tensors: at the
// peak, the gradients are the parameters' size.
TEST(PyTorchPrograms, TheProfilersTraceOfATrainingScriptReadsAsASnapshot) {
    OOMLAB_REQUIRE_TORCH_PYTHON();
    test::TempDir dir;
    const std::string script = dir.file("train_step.py");
    const std::string trace = dir.file("trace.json");
    test::write_file(script, R"(import json, pickle, sys
import torch
import torch.cuda._memory_viz
from torch.profiler import profile, ProfilerActivity

model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                            torch.nn.Linear(1024, 10))
optimizer = torch.optim.Adam(model.parameters())
x, y = torch.randn(128, 256), torch.randint(0, 10, (128,))

def train_step():
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()

with profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_stack=True,
             record_shapes=True) as prof:
    for _ in range(3):
        train_step()
prof.export_chrome_trace(sys.argv[1])
events = json.load(open(sys.argv[1]))["traceEvents"]
print(max(e["args"]["Total Allocated"] for e in events if e.get("name") == "[memory]"))
with open(sys.argv[2], "wb") as out:
    pickle.dump(torch.cuda._memory_viz._profile_to_snapshot(prof), out)
)");
    const test::CommandResult recorded = test::run_command(
        "timeout 300 " + test::shell_quote(torch_python()) + " " + test::shell_quote(script) + " " +
        test::shell_quote(trace) + " " + test::shell_quote(dir.file("profile.pickle")) +
        " 2>/dev/null </dev/null");
    ASSERT_EQ(recorded.exit_code, 0) << recorded.out;
    const std::int64_t torch_peak = std::stoll(recorded.out);

    const test::CliResult shown = test::run_cli({"snapshot", "show", trace, "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const nlohmann::json device = nlohmann::json::parse(shown.out)["devices"][0];
    EXPECT_EQ(device["device"], -1) << "the CPU";
    EXPECT_EQ(device["peak_allocated_bytes"], torch_peak) << "the peak of PyTorch's own totals";
    std::map<std::string, std::int64_t> kinds;
    for (const auto& kind : device["at_peak_by_kind"]) {
        kinds[kind["kind"]] = kind["bytes"];
    }
    EXPECT_GT(kinds["optimizer step"] + kinds["backward"] + kinds["forward"], 0)
        << device["at_peak_by_kind"].dump();
    bool own_line = false;
    for (const auto& line : device["at_peak"]) {
        own_line |= line["where"].get<std::string>().rfind("train_step.py:", 0) == 0;
    }
    EXPECT_TRUE(own_line) << device["at_peak"].dump();
    // On a GPU the caching allocator would hold those requests in its segments: at least what
    // was allocated, an estimate said with what it leaves out.
    const nlohmann::json& gpu = device["gpu_estimate"];
    ASSERT_TRUE(gpu.is_object()) << device.dump();
    EXPECT_GE(gpu["peak_reserved_bytes"].get<std::int64_t>(), torch_peak);
    EXPECT_GE(gpu["segments_at_peak"].get<std::int64_t>(), 1);
    EXPECT_NE(gpu["leaves_out"].get<std::string>().find("cuBLAS"), std::string::npos);

    const test::CliResult profile =
        test::run_cli({"snapshot", "show", dir.file("profile.pickle"), "--json"});
    ASSERT_EQ(profile.exit_code, 0) << profile.err;
    const nlohmann::json made = nlohmann::json::parse(profile.out)["devices"][0];
    EXPECT_TRUE(made["from_profile"].get<bool>()) << made.dump();
    EXPECT_EQ(made["device"], -1) << "the CPU";
    EXPECT_EQ(made["reserved_bytes"], 0);
    std::map<std::string, std::int64_t> categories;
    for (const auto& kind : made["at_peak_by_kind"]) {
        categories[kind["kind"]] = kind["bytes"];
    }
    const std::int64_t parameter_bytes = (256 * 1024 + 1024 + 1024 * 10 + 10) * 4;
    EXPECT_EQ(categories["gradient"], parameter_bytes) << made["at_peak_by_kind"].dump();
    EXPECT_GE(categories["optimizer state"], 2 * parameter_bytes) << made["at_peak_by_kind"].dump();
    EXPECT_EQ(made["at_peak"][0]["where"].get<std::string>().rfind("train_step.py:", 0), 0u)
        << made["at_peak"].dump();
    EXPECT_TRUE(made["gpu_estimate"].is_object()) << made.dump();
}

// `oomlab-cli record -- python train.py`: the script, unchanged, trains a few steps, starts a
// Python of its own (which must not record), then asks for more memory than any machine has.
// Without CUDA the hook keeps the profiler's memory events: written at exit, read, explained,
// and the script's exit status passed on.
TEST(PyTorchPrograms, RecordKeepsAndExplainsTheMemoryOfAScriptThatRunsOutOfMemory) {
    OOMLAB_REQUIRE_TORCH_PYTHON();
    test::TempDir dir;
    const std::string script = dir.file("train.py");
    test::write_file(script, R"PY(import subprocess, sys
import torch
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 4))
optimizer = torch.optim.Adam(model.parameters())
for step in range(4):
    model(torch.randn(64 * 4 ** step, 256)).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
child = [sys.executable, "-c", "import os; print('child records:', os.environ.get('OOMLAB_RECORD_SNAPSHOT'))"]
print(subprocess.run(child, capture_output=True, text=True).stdout.strip(), flush=True)
torch.empty(1 << 46)
)PY");
    const test::CommandResult recorded = test::run_command(
        "cd " + test::shell_quote(dir.path()) + " && timeout 300 " +
        test::shell_quote(test::cli_program()) + " record --out " +
        test::shell_quote(dir.file("memory.pickle")) + " -- " + test::shell_quote(torch_python()) +
        " train.py 2>" + test::shell_quote(dir.file("stderr.txt")) + " </dev/null");
    EXPECT_EQ(recorded.exit_code, 1) << "the script's own status";
    const std::string& out = recorded.out;
    EXPECT_NE(out.find("child records: None"), std::string::npos) << out;
    EXPECT_NE(out.find("its memory, recorded in " + dir.file("memory.json")), std::string::npos)
        << out;
    EXPECT_NE(out.find("the CPU: "), std::string::npos) << out;
    EXPECT_NE(out.find("peak allocated: "), std::string::npos) << out;
    // The script's own top level, where it allocates: the profiler names no line there.
    EXPECT_NE(out.find("train.py: its top level (the profiler records no line there)"),
              std::string::npos)
        << out;
    EXPECT_EQ(out.find("train.py(0)"), std::string::npos) << "no line 0\n" << out;
    EXPECT_NE(out.find("Its out-of-memory message:"), std::string::npos) << out;
    EXPECT_NE(out.find("262144.00 GiB"), std::string::npos) << out;
    // Its standard error passed through as it was.
    EXPECT_NE(test::read_text(dir.file("stderr.txt")).find("DefaultCPUAllocator"),
              std::string::npos);
}

// `record` of what programs do besides training: fork (children that exit, with their own
// statuses, while the parent records), run their own sitecustomize, ignore PYTHONPATH, get
// killed, or have oomlab-cli itself stopped under them.
class RecordedPrograms : public ::testing::Test {
protected:
    void SetUp() override {
        if (torch_python().empty()) {
            GTEST_SKIP() << "OOMLAB_TORCH_PYTHON is not set";
        }
    }
    // `oomlab-cli record` of `python ARGS...` in the test's folder, its output and status.
    test::CommandResult record(const std::string& python_arguments,
                               const std::string& before = "") {
        return test::run_command("cd " + test::shell_quote(m_dir.path()) + " && " + before +
                                 "timeout 120 " + test::shell_quote(test::cli_program()) +
                                 " record --out " + test::shell_quote(m_dir.file("m.pickle")) +
                                 " -- " + test::shell_quote(torch_python()) + " " +
                                 python_arguments + " 2>/dev/null </dev/null");
    }
    test::TempDir m_dir;
};

TEST_F(RecordedPrograms, AProgramThatForksEndsAndItsChildrenKeepTheirStatuses) {
    test::write_file(m_dir.file("fork.py"), R"PY(import os, sys, torch
x = torch.randn(256, 256)
children = []
for i in range(5):
    pid = os.fork()
    if pid == 0:
        torch.randn(64, 64)
        if i == 3:
            sys.exit(7)
        if i == 4:
            raise ValueError("child four")
        sys.exit(0)
    children.append(pid)
print("children:", [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in children], flush=True)
)PY");
    // Twice: the second replaces the first's record (PyTorch 2.x starts its trace with a line
    // break, and it was taken for a file of the user's).
    for (int time = 0; time < 2; ++time) {
        const test::CommandResult recorded = record("fork.py");
        EXPECT_EQ(recorded.exit_code, 0) << recorded.out;
        EXPECT_NE(recorded.out.find("children: [0, 0, 0, 7, 1]"), std::string::npos)
            << recorded.out;
        EXPECT_NE(recorded.out.find("its memory, recorded in "), std::string::npos) << recorded.out;
    }
}

// A program that removes the folder its record goes to is told so, not said to have left
// without running its exit handlers.
TEST_F(RecordedPrograms, AProgramThatRemovesTheRecordsFolderIsToldSo) {
    std::filesystem::create_directories(m_dir.file("out"));
    test::write_file(m_dir.file("tidy.py"),
                     "import shutil, torch\ntorch.randn(64, 64)\nshutil.rmtree('out')\n");
    const test::CommandResult recorded = test::run_command(
        "cd " + test::shell_quote(m_dir.path()) + " && timeout 120 " +
        test::shell_quote(test::cli_program()) + " record --out out/m.pickle -- " +
        test::shell_quote(torch_python()) + " tidy.py 2>&1 </dev/null");
    EXPECT_EQ(recorded.exit_code, 0) << recorded.out;
    EXPECT_NE(recorded.out.find("its memory could not be written ("), std::string::npos)
        << recorded.out;
    EXPECT_EQ(recorded.out.find("exit handlers"), std::string::npos) << recorded.out;
}

TEST_F(RecordedPrograms, TheProgramsOwnSitecustomizeRunsAndIsTheOneImported) {
    std::filesystem::create_directories(m_dir.file("site"));
    test::write_file(m_dir.file("site/sitecustomize.py"), "MARK = \"the user's own\"\n");
    const test::CommandResult recorded =
        record("-c \"import sitecustomize, torch; torch.randn(8); print(sitecustomize.MARK)\"",
               "PYTHONPATH=" + test::shell_quote(m_dir.file("site")) + " ");
    EXPECT_EQ(recorded.exit_code, 0) << recorded.out;
    EXPECT_NE(recorded.out.find("the user's own"), std::string::npos) << recorded.out;
    EXPECT_NE(recorded.out.find("its memory, recorded in "), std::string::npos) << recorded.out;
}

TEST_F(RecordedPrograms, WhyNothingWasRecordedIsTold) {
    const test::CommandResult isolated = record("-I -c \"import torch; torch.randn(8)\"");
    EXPECT_EQ(isolated.exit_code, 0) << isolated.out;
    EXPECT_NE(isolated.out.find("a Python run with -I, -E or -S ignores it"), std::string::npos)
        << isolated.out;
    const test::CommandResult killed =
        record("-c \"import os, signal, torch; torch.randn(8); os.kill(os.getpid(), 9)\"");
    EXPECT_EQ(killed.exit_code, 137) << killed.out;
    EXPECT_NE(killed.out.find("the program was ended by signal 9"), std::string::npos)
        << killed.out;
}

// What a program that the stop tests record writes first: its pid, in "started".
constexpr const char* kSaysItStarted = R"PY(import os, signal, time, torch
with open("started.tmp", "w") as started:
    started.write(str(os.getpid()))
os.rename("started.tmp", "started")
)PY";

// Records `script` in the background, runs `stop` (shell, `$cli` being oomlab-cli's pid)
// once the program has started, and prints how oomlab-cli exited ("exit N"), its output,
// any temporary folder it left, and "the program still runs" if it does.
test::CommandResult stop_a_recording(const test::TempDir& dir, const std::string& script,
                                     const std::string& stop) {
    test::write_file(dir.file("program.py"), kSaysItStarted + script);
    return test::run_command(
        "cd " + test::shell_quote(dir.path()) + " || exit 1; TMPDIR=. " +
        test::shell_quote(test::cli_program()) + " record --out m.pickle -- " +
        test::shell_quote(torch_python()) +
        " program.py >out.txt 2>err.txt </dev/null & cli=$!; "
        "for i in $(seq 600); do [ -f started ] && break; sleep 0.1; done; " +
        stop +
        " wait $cli; echo exit $?; cat out.txt err.txt; ls -d oomlab-record-* 2>/dev/null; "
        "kill -0 $(cat started) 2>/dev/null && echo the program still runs");
}

// SIGTERM to oomlab-cli (a job's time limit) reaches the program, which still writes its
// memory on the way out; no program is left running and no temporary folder behind.
TEST_F(RecordedPrograms, StoppingOomlabCliStopsTheProgramAndKeepsItsMemory) {
    const test::CommandResult stopped =
        stop_a_recording(m_dir, "x = torch.randn(512, 512)\ntime.sleep(100)\n", "kill -TERM $cli;");
    EXPECT_NE(stopped.out.find("exit 143"), std::string::npos) << stopped.out;
    EXPECT_NE(stopped.out.find("exited with 143"), std::string::npos) << stopped.out;
    EXPECT_NE(stopped.out.find("its memory, recorded in "), std::string::npos) << stopped.out;
    EXPECT_EQ(stopped.out.find("oomlab-record-"), std::string::npos) << stopped.out;
    EXPECT_EQ(stopped.out.find("the program still runs"), std::string::npos) << stopped.out;
}

// A second stop does not wait out the grace: a program that takes no notice of SIGTERM is
// killed when oomlab-cli is asked again, not 10 s later.
TEST_F(RecordedPrograms, StoppingOomlabCliTwiceKillsTheProgramAtOnce) {
    const test::CommandResult stopped =
        stop_a_recording(m_dir, R"PY(asked = []
signal.signal(signal.SIGTERM, lambda number, frame: asked.append(number))
while True:
    time.sleep(0.1)
    if asked:
        with open("ticks", "a") as ticks:
            ticks.write("x")
)PY",
                         "kill -TERM $cli; "
                         "for i in $(seq 600); do [ -f ticks ] && break; sleep 0.1; done; "
                         "kill -TERM $cli;");
    EXPECT_NE(stopped.out.find("exit 143"), std::string::npos) << stopped.out;
    EXPECT_NE(stopped.out.find("stop again to kill it now"), std::string::npos) << stopped.out;
    EXPECT_NE(stopped.out.find("exited with 137"), std::string::npos) << stopped.out;
    EXPECT_EQ(stopped.out.find("the program still runs"), std::string::npos) << stopped.out;
    // Ticks of 0.1 s after the first stop: 100 had it waited out its grace.
    EXPECT_LT(std::filesystem::file_size(m_dir.file("ticks")), 50u) << stopped.out;
}

TEST(PyTorchPrograms, RecordOfAProgramThatIsNotThereSaysSo) {
    test::TempDir dir;
    const test::CliResult result =
        test::run_cli({"record", "--out", dir.file("m.pickle"), "--", dir.file("no-such-program")});
    EXPECT_EQ(result.exit_code, 127);
    EXPECT_NE(result.err.find("cannot run " + dir.file("no-such-program")), std::string::npos)
        << result.err;
    EXPECT_NE(result.out.find("no memory record was written"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace oomlab
