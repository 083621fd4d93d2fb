// `oomlab-cli snapshot show` and `snapshot diff` on the snapshots runs write: the replay
// against the run's own figures, the advice against the engine's own verdict and fixes, and
// what changed between two.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "oomlab/common/format.h"
#include "test_support.h"

namespace oomlab {
namespace {

using nlohmann::json;
using test::run_cli;

class SnapshotCli : public ::testing::Test {
protected:
    std::string db() const { return m_dir.file("runs.sqlite"); }
    test::TempDir m_dir;
};

// The snapshot a run writes reads back in `snapshot show`: its trace replayed peaks where the
// run measured its peak, and what was alive then is named by the engine's categories.
TEST_F(SnapshotCli, SnapshotShowReplaysARunsOwnSnapshot) {
    const std::string snapshot = db() + ".pickle";
    const auto ran = run_cli({"run", "--db", db(), "--json", "--set", "train.max_steps=5", "--set",
                              "debug.memory_snapshot=" + snapshot});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const json summary = json::parse(ran.lines().back());
    const auto shown = run_cli({"snapshot", "show", snapshot, "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const json device = json::parse(shown.out)["devices"][0];
    EXPECT_EQ(device["peak_allocated_bytes"], summary["peak_bytes"]);
    EXPECT_EQ(device["at_peak"][0]["where"].get<std::string>().rfind("oomlab: ", 0), 0u)
        << device["at_peak"].dump();
    const auto text = run_cli({"snapshot", "show", snapshot});
    EXPECT_NE(text.out.find("alive at the peak, by source line"), std::string::npos) << text.out;
    // The three figures under the names the workbench gives them, with the JSON's values.
    const auto bytes = [&](const char* key) {
        return format_bytes(device[key].get<std::int64_t>());
    };
    for (const std::string& figure :
         {"peak allocated: " + bytes("peak_allocated_bytes") + " after event ",
          ", reserved at that moment " + bytes("reserved_at_peak_bytes") + ";",
          "; most reserved at any time " + bytes("peak_reserved_bytes")}) {
        EXPECT_NE(text.out.find(figure), std::string::npos) << figure << "\n" << text.out;
    }
    // The state after any event: at the peak's, the peak; halfway there, less.
    const auto at = [&](const std::string& event) {
        const auto shown_at = run_cli({"snapshot", "show", snapshot, "--json", "--at", event});
        EXPECT_EQ(shown_at.exit_code, 0) << shown_at.err;
        return json::parse(shown_at.out)["devices"][0]["at_event"];
    };
    const std::size_t peak_event = device["peak_event"];
    const json at_peak = at(std::to_string(peak_event));
    EXPECT_EQ(at_peak["allocated_bytes"], device["peak_allocated_bytes"]);
    EXPECT_EQ(at_peak["by_line"], device["at_peak"]);
    EXPECT_LT(at(std::to_string(peak_event / 2))["allocated_bytes"].get<std::int64_t>(),
              device["peak_allocated_bytes"].get<std::int64_t>());
    EXPECT_EQ(at("999999999")["allocated_bytes"], device["allocated_bytes"]) << "past the end";
    const auto text_at = run_cli({"snapshot", "show", snapshot, "--at", "3"});
    EXPECT_NE(text_at.out.find("after event 3 of"), std::string::npos) << text_at.out;
    for (const char* not_events : {"-1", "abc", "1e3", "99999999999999999999999"}) {
        const auto refused_at = run_cli({"snapshot", "show", snapshot, "--at", not_events});
        EXPECT_EQ(refused_at.exit_code, 2) << not_events;
        EXPECT_NE(refused_at.err.find(std::string("a number of events, 0 or more, not '") +
                                      not_events + "'"),
                  std::string::npos)
            << refused_at.err;
        EXPECT_EQ(refused_at.err.find("1797693"), std::string::npos) << refused_at.err;
    }
    const auto refused = run_cli({"snapshot", "show", db()});
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_NE(refused.err.find("neither a memory snapshot"), std::string::npos) << refused.err;
}

// With the caching allocator modelled on the CPU (memory.alloc_conf), a run's snapshot holds
// the model's segments and the segments it opened: replayed through the same model by
// `snapshot whatif`, every segment the run opened is opened again by the same request, with
// the same size, and the cache shows as reserved but unallocated.
TEST_F(SnapshotCli, AModelledCpuRunsSnapshotReplaysToTheSameSegments) {
    for (const std::string conf : {"backend:native", "expandable_segments:True"}) {
        const std::string snapshot = db() + "." + conf.substr(0, 7) + ".pickle";
        const auto ran =
            run_cli({"run", "--db", db(), "--set", "train.max_steps=5", "--set",
                     "memory.alloc_conf=" + conf, "--set", "debug.memory_snapshot=" + snapshot});
        ASSERT_EQ(ran.exit_code, 0) << ran.err;
        const auto replayed = run_cli({"snapshot", "whatif", snapshot, "--json"});
        ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
        const json device = json::parse(replayed.out)["devices"][0];
        const json& fidelity = device["fidelity"];
        EXPECT_GE(fidelity["segment_allocs_recorded"].get<int>(), 1) << conf;
        EXPECT_EQ(fidelity["agreed"], fidelity["segment_allocs_recorded"]) << fidelity.dump();
        EXPECT_EQ(fidelity["segment_allocs_modelled"], fidelity["segment_allocs_recorded"]);
        EXPECT_TRUE(fidelity["disagreements"].empty()) << fidelity.dump();
        EXPECT_GT(device["recorded"]["reserved_unallocated_at_peak"].get<std::int64_t>(), 0);
        EXPECT_EQ(device["replayed"]["peak_reserved"], device["recorded"]["peak_reserved"]);
    }
}

// What the replay cannot take as the program had it is said, not dropped: CUDA's own
// allocator (backend:cudaMallocAsync) is not the one replayed. A device's memory is given with
// its unit: 80 alone is refused before the file is read, not taken as 80 bytes; a wrong
// --alloc-conf is named as such, not as an environment variable.
TEST_F(SnapshotCli, WhatIfSaysWhatItDoesNotReplayAndTakesSizesWithUnits) {
    const std::string snapshot = db() + ".async.pickle";
    const auto ran = run_cli({"run", "--db", db(), "--set", "train.max_steps=2", "--set",
                              "debug.memory_snapshot=" + snapshot});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    const auto replayed = run_cli({"snapshot", "whatif", snapshot, "--alloc-conf",
                                   "backend:cudaMallocAsync", "--device-memory", "80GiB"});
    ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
    EXPECT_NE(replayed.out.find("note: backend:cudaMallocAsync"), std::string::npos)
        << replayed.out;
    EXPECT_NE(replayed.out.find("80.00 GiB"), std::string::npos) << replayed.out;
    const auto bare =
        run_cli({"snapshot", "whatif", db() + ".no-such.pickle", "--device-memory", "80"});
    EXPECT_EQ(bare.exit_code, 2);
    EXPECT_NE(bare.err.find("80GiB"), std::string::npos) << bare.err;
    EXPECT_EQ(bare.err.find("no-such"), std::string::npos)
        << "refused before the file: " << bare.err;
    // The same size to `show`: how close the run came to running out on such a device.
    const auto shown =
        run_cli({"snapshot", "show", snapshot, "--device-memory", "80GiB", "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const json headroom = json::parse(shown.out)["headroom"][0];
    EXPECT_EQ(headroom["device_memory"], std::int64_t(80) << 30);
    EXPECT_EQ(headroom["rows"][0]["how"], "as it ran, on its own device");
    EXPECT_GT(headroom["rows"][0]["left"].get<std::int64_t>(), std::int64_t(79) << 30);
    const auto shown_bare =
        run_cli({"snapshot", "show", db() + ".no-such.pickle", "--device-memory", "80"});
    EXPECT_EQ(shown_bare.exit_code, 2);
    EXPECT_NE(shown_bare.err.find("80GiB"), std::string::npos) << shown_bare.err;
    const auto wrong =
        run_cli({"snapshot", "whatif", snapshot, "--alloc-conf", "max_split_size_mb:x"});
    EXPECT_EQ(wrong.exit_code, 2);
    EXPECT_NE(wrong.err.find("--alloc-conf: max_split_size_mb"), std::string::npos) << wrong.err;
    EXPECT_EQ(wrong.err.find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos) << wrong.err;
}

// What PyTorch 2.10-2.12 write beside the totals, from a snapshot built field by field as they
// write it: memory by pool (a CUDA graph's private pool beside the default one) and what the
// program asked for of what was allocated (the rest is the allocator's rounding).
TEST_F(SnapshotCli, PoolsAndRoundingAreShown) {
    const std::string snapshot = db() + ".pools.pickle";
    const int built = test::built_snapshot("make_pools_snapshot.py", snapshot);
    if (built < 0) {
        GTEST_SKIP() << "no python3 to write the snapshot";
    }
    ASSERT_EQ(built, 0);
    const auto shown = run_cli({"snapshot", "show", snapshot, "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const json device = json::parse(shown.out)["devices"][0];
    EXPECT_EQ(device["allocated_bytes"], 30 << 20);
    EXPECT_EQ(device["requested_bytes"], (28 << 20) + 1 - 300 - 512);
    ASSERT_EQ(device["pools"].size(), 2u);
    EXPECT_EQ(device["pools"][1]["pool"], json::array({1, 2}));
    EXPECT_EQ(device["pools"][1]["reserved_bytes"], 20 << 20);
    EXPECT_EQ(device["pools"][0]["segments"], 2);
    const auto text = run_cli({"snapshot", "show", snapshot});
    EXPECT_NE(text.out.find("(1, 2) a private pool: 1 segment, 20.0 MiB reserved"),
              std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("the program asked for 28.0 MiB: 2.0 MiB is the allocator's rounding"),
              std::string::npos)
        << text.out;
}

// A snapshot made from a CPU profile (torch.cuda._memory_viz._profile_to_snapshot): each
// allocation's kind is PyTorch's category of the tensor, its line the profiler's frame name, and
// the segment spanning the tensors' addresses is not counted as reserved; the GPU's estimate
// replays its requests, the parameter made before the profile first.
TEST_F(SnapshotCli, ASnapshotMadeFromAProfileTakesPyTorchsCategories) {
    const std::string snapshot = db() + ".profile.pickle";
    const int built = test::built_snapshot("make_profile_snapshot.py", snapshot);
    if (built < 0) {
        GTEST_SKIP() << "no python3 to write the snapshot";
    }
    ASSERT_EQ(built, 0);
    const auto shown = run_cli({"snapshot", "show", snapshot, "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const json device = json::parse(shown.out)["devices"][0];
    EXPECT_EQ(device["device"], -1) << "the CPU, numbered after the CUDA devices";
    EXPECT_TRUE(device["from_profile"].get<bool>());
    EXPECT_EQ(device["reserved_bytes"], 0);
    EXPECT_EQ(device["peak_reserved_bytes"], 0);
    EXPECT_EQ(device["allocated_bytes"], (16 << 20) + 64);
    EXPECT_EQ(device["peak_allocated_bytes"], 17 << 20);
    std::map<std::string, std::int64_t> kinds;
    for (const auto& kind : device["at_peak_by_kind"]) {
        kinds[kind["kind"]] = kind["bytes"];
    }
    EXPECT_EQ(kinds, (std::map<std::string, std::int64_t>{
                         {"activation", 8 << 20},
                         {"gradient", 4 << 20},
                         {"temporary", 1 << 20},
                         {"(allocated before the trace began)", 4 << 20}}));
    EXPECT_EQ(device["at_peak"][0]["where"], "train.py:12 (forward)");
    // Large requests share a 20 MiB segment (4 + 8 + 4 MiB), the 1 MiB one a small 2 MiB one
    // with cuBLASLt's workspace; cuBLAS's two threads' (a backward ran) 32 MiB each.
    EXPECT_EQ(device["gpu_estimate"]["peak_reserved_bytes"], (20 + 2 + 2 * 32) << 20);
    EXPECT_EQ(device["gpu_estimate"]["cublas_workspaces_bytes"], (2 * 32 + 1) << 20);

    const auto whatif = run_cli({"snapshot", "whatif", snapshot});
    EXPECT_EQ(whatif.exit_code, 0) << whatif.err;
    EXPECT_NE(whatif.out.find("no caching allocator served its allocations"), std::string::npos)
        << whatif.out;
}

// A private pool's segment serves only its own requests: the default pool's 8 MiB does not go
// into the 14 MiB the pool's segment has free, in the replay as in the allocator that opened a
// second segment for it (trace entries name no pool: their addresses and the segments' pools
// at the end tell).
TEST_F(SnapshotCli, APrivatePoolsSegmentServesOnlyItsOwnRequestsInTheReplay) {
    const std::string snapshot = db() + ".private-pool.pickle";
    const int built = test::built_snapshot("make_private_pool_trace.py", snapshot);
    if (built < 0) {
        GTEST_SKIP() << "no python3 to write the snapshot";
    }
    ASSERT_EQ(built, 0);
    const auto whatif = run_cli({"snapshot", "whatif", snapshot, "--json"});
    ASSERT_EQ(whatif.exit_code, 0) << whatif.err;
    const json device = json::parse(whatif.out)["devices"][0];
    EXPECT_EQ(device["fidelity"]["agreed"], 2) << device["fidelity"].dump();
    EXPECT_EQ(device["recorded"]["peak_reserved"], 40 << 20) << device.dump();
    EXPECT_TRUE(device["baseline_is_the_programs"].get<bool>()) << device.dump();
    const auto text = run_cli({"snapshot", "whatif", snapshot});
    EXPECT_NE(text.out.find("2 of the trace's events fall in a private pool's segments"),
              std::string::npos)
        << text.out;

    // The pool's 6 MiB freed first: its segment is all free but the pool's while it is held,
    // so on a 30 MiB device the default pool's request finds no room even after a retry.
    const std::string freed = db() + ".private-pool-freed.pickle";
    ASSERT_EQ(test::built_snapshot("make_private_pool_trace.py", freed, "--freed"), 0);
    const auto small = run_cli({"snapshot", "whatif", freed, "--device-memory", "30MiB", "--json"});
    ASSERT_EQ(small.exit_code, 0) << small.err;
    const json held = json::parse(small.out)["devices"][0]["replayed"];
    EXPECT_EQ(held["failed_allocations"], 1) << held.dump();
    EXPECT_EQ(held["peak_reserved"], 20 << 20) << held.dump();

    // The trace begun after the pool took its segment: the replay starts from that segment,
    // still the pool's, so the default pool's 8 MiB opens a segment of its own as recorded.
    const std::string late = db() + ".private-pool-late.pickle";
    ASSERT_EQ(test::built_snapshot("make_private_pool_trace.py", late, "--late"), 0);
    const auto seeded = run_cli({"snapshot", "whatif", late, "--json"});
    ASSERT_EQ(seeded.exit_code, 0) << seeded.err;
    const json late_device = json::parse(seeded.out)["devices"][0];
    EXPECT_EQ(late_device["fidelity"]["agreed"], 1) << late_device["fidelity"].dump();
    EXPECT_EQ(late_device["recorded"]["peak_reserved"], 40 << 20) << late_device.dump();

    // A recorded setting PyTorch refuses, and segments that add up past any machine: said
    // where the figures are (the threshold was dropped silently, and a reserved figure past
    // 1 EiB printed as the program's own).
    const std::string odd = db() + ".private-pool-odd.pickle";
    ASSERT_EQ(test::built_snapshot("make_private_pool_trace.py", odd, "--gc-nan --past-eib"), 0);
    const auto odd_whatif = run_cli({"snapshot", "whatif", odd});
    ASSERT_EQ(odd_whatif.exit_code, 0) << odd_whatif.err;
    for (const char* said : {"note: the snapshot recorded garbage_collection_threshold nan, "
                             "which PyTorch takes only between 0 and 1",
                             "note: the trace does not add up: event 1024: the trace's segments "
                             "add up past 1 EiB"}) {
        EXPECT_NE(odd_whatif.out.find(said), std::string::npos) << said << "\n" << odd_whatif.out;
    }
    const auto odd_show = run_cli({"snapshot", "show", odd, "--json"});
    ASSERT_EQ(odd_show.exit_code, 0) << odd_show.err;
    EXPECT_NE(json::parse(odd_show.out).value("alloc_conf_problem", "").find("nan"),
              std::string::npos)
        << odd_show.out.substr(0, 400);
}

// A snapshot of no memory (what PyTorch writes before the first CUDA allocation, after
// empty_cache(), or in a process that allocated nothing) says so and how to record one, rather
// than printing nothing.
TEST_F(SnapshotCli, ASnapshotOfNoMemorySaysHowToRecordOne) {
    const std::string empty = db() + ".empty.pickle";
    // {"segments": [], "device_traces": [[]]}, protocol 2.
    test::write_file(empty, std::string("\x80\x02}(\x8c\x08segments]\x8c\x0d"
                                        "device_traces]]au.",
                                        35));
    const auto shown = run_cli({"snapshot", "show", empty});
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.out.find("no device's memory in it"), std::string::npos) << shown.out;
    EXPECT_NE(shown.out.find("_record_memory_history()"), std::string::npos) << shown.out;
}

// A snapshot without a trace (DocuBox's, dumped with the history off) has no peak: its figures,
// what was alive and the advice are said at the dump.
TEST_F(SnapshotCli, ASnapshotWithoutATraceIsToldAtTheDumpNotAtAPeak) {
    const auto shown =
        run_cli({"snapshot", "show",
                 test::fixture("wild/snapshots/Charran78__DocuBox__dump_snapshot.pickle")});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_NE(shown.out.find("  allocated at the dump: 86.7 MiB (no trace, so no peak); reserved "
                             "then 104.0 MiB\n"),
              std::string::npos)
        << shown.out;
    EXPECT_NE(shown.out.find("  alive at the dump, by source line:\n"), std::string::npos)
        << shown.out;
    EXPECT_EQ(shown.out.find("at the peak"), std::string::npos) << shown.out;
    const std::string dump =
        test::fixture("wild/snapshots/Charran78__DocuBox__dump_snapshot.pickle");
    const auto diffed = run_cli({"snapshot", "diff", dump, dump});
    ASSERT_EQ(diffed.exit_code, 0) << diffed.err;
    EXPECT_NE(diffed.out.find("104.0 MiB -> 104.0 MiB reserved at the dump\n"), std::string::npos)
        << diffed.out;
    EXPECT_EQ(diffed.out.find("at the peak"), std::string::npos) << diffed.out;
    const auto mixed = run_cli(
        {"snapshot", "diff", dump,
         test::fixture("wild/snapshots/Okazaki-Yumemi__CS336__memory_small_forward_128.pickle"),
         "--json"});
    ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
    EXPECT_EQ(json::parse(mixed.out)["devices"][0]["moment"], "the peak or the dump") << mixed.out;
}

// The snapshot's advice for a run out of memory agrees with the engine's own verdict: memory
// really in use (no allocator setting), and activations hold the most, as in its breakdown.
TEST_F(SnapshotCli, SnapshotAdviceForARunOutOfMemoryAgreesWithTheEngine) {
    const std::string snapshot = db() + ".pickle";
    const auto ran =
        run_cli({"run", "--db", db(), "--json", "--set", "memory.cap_mb=8", "--set",
                 "train.batch_size=256", "--set", "debug.memory_snapshot=" + snapshot});
    ASSERT_EQ(ran.exit_code, 3) << ran.err;
    const json summary = json::parse(ran.lines().back());
    const auto shown = run_cli({"snapshot", "show", snapshot, "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const json device = json::parse(shown.out)["devices"][0];
    ASSERT_EQ(device["ooms"].size(), 1u) << device.dump();
    const json& advice = device["advice"];
    ASSERT_GE(advice.size(), 2u) << advice.dump();
    EXPECT_EQ(advice[0]["what"], "hold less at the peak") << advice.dump();
    EXPECT_EQ(advice.dump().find("expandable_segments"), std::string::npos) << advice.dump();
    EXPECT_EQ(summary["fixes"].dump().find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos);
    // The largest category of the engine's breakdown is the snapshot's largest line.
    std::string largest;
    std::int64_t most = -1;
    for (const auto& [category, bytes] : summary["breakdown"].items()) {
        if (bytes.get<std::int64_t>() > most) {
            most = bytes.get<std::int64_t>();
            largest = category;
        }
    }
    EXPECT_EQ(largest, "activations");
    const auto offered = [&](const std::string& what) {
        return std::any_of(advice.begin(), advice.end(),
                           [&](const json& item) { return item["what"] == what; });
    };
    EXPECT_TRUE(offered("start with oomlab: forward: activations")) << advice.dump();
    EXPECT_TRUE(offered("mixed precision or activation checkpointing")) << advice.dump();
    EXPECT_EQ(device["at_peak_by_kind"][0]["kind"], "forward") << device["at_peak_by_kind"].dump();
    // The snapshot carries the experiment that recorded it: a config that runs it again.
    const json experiment = json::parse(shown.out)["experiment"];
    EXPECT_EQ(experiment["train"]["batch_size"], 256) << experiment.dump();
    EXPECT_EQ(experiment["memory"]["cap_mb"], 8) << experiment.dump();
    const std::string config = db() + ".experiment.json";
    std::ofstream(config) << experiment.dump();
    const auto again = run_cli(
        {"run", "--db", db(), "--json", "--config", config, "--set", "debug.memory_snapshot="});
    EXPECT_EQ(again.exit_code, 3) << "the same experiment runs out of memory again: " << again.err;
    EXPECT_NE(run_cli({"snapshot", "show", snapshot}).out.find("recorded by an OOM Lab run"),
              std::string::npos);
}

// A transformer out of memory in its first forward under a cap: the snapshot bounds the batch
// from the bytes forward had kept and the room the device had, and every smaller batch the
// engine's own fixes offer (from its estimator) is under that bound; the bound says the
// optimizer's state is still to come, as no update came before the failure.
TEST_F(SnapshotCli, ASnapshotsBoundOnTheBatchAgreesWithTheEnginesFixes) {
    const std::string snapshot = db() + ".pickle";
    const std::vector<std::string> model{"--set", "model.kind=transformer",
                                         "--set", "train.max_len=32",
                                         "--set", "train.optimizer=sgd"};
    std::vector<std::string> estimate{"estimate", "--json", "--set", "train.batch_size=32"};
    estimate.insert(estimate.end(), model.begin(), model.end());
    const auto fits = json::parse(run_cli(estimate).out)["peak_bytes"].get<std::int64_t>();
    std::vector<std::string> run{"run",   "--db",
                                 db(),    "--json",
                                 "--set", "train.batch_size=64",
                                 "--set", "memory.cap_mb=" + std::to_string(fits * 11 / 10 >> 20),
                                 "--set", "debug.memory_snapshot=" + snapshot};
    run.insert(run.end(), model.begin(), model.end());
    const auto ran = run_cli(run);
    ASSERT_EQ(ran.exit_code, 3) << ran.err;
    const json advice =
        json::parse(run_cli({"snapshot", "show", snapshot, "--json"}).out)["devices"][0]["advice"];
    double bound = 0;
    for (const json& item : advice) {
        const std::string what = item["what"];
        if (what.rfind("a batch under ", 0) == 0) {
            bound = std::stod(what.substr(14)) / 100.0 * 64;
            EXPECT_NE(item["why"].get<std::string>().find("still to come"), std::string::npos)
                << item.dump();
        }
    }
    ASSERT_GT(bound, 0) << advice.dump();
    EXPECT_LT(bound, 64);
    int smaller_batches = 0;
    const json summary = json::parse(ran.lines().back());
    for (const json& fix : summary["fixes"]) {
        if (fix["set"].contains("train.batch_size")) {
            ++smaller_batches;
            EXPECT_LE(std::stod(fix["set"]["train.batch_size"].get<std::string>()), bound)
                << fix.dump();
        }
    }
    EXPECT_GT(smaller_batches, 0) << summary["fixes"].dump();
}

// Two snapshots of the same run with four times the batch: the diff's peak is each snapshot's,
// and its changes by kind add up to the change of the peak.
TEST_F(SnapshotCli, SnapshotDiffSaysWhatChangedAtThePeak) {
    std::vector<std::string> snapshots;
    for (const std::string batch : {"32", "128"}) {
        snapshots.push_back(db() + "." + batch + ".pickle");
        ASSERT_EQ(run_cli({"run", "--db", db(), "--set", "train.max_steps=3", "--set",
                           "train.batch_size=" + batch, "--set",
                           "debug.memory_snapshot=" + snapshots.back()})
                      .exit_code,
                  0);
    }
    const auto shown = [](const std::string& file) {
        return json::parse(run_cli({"snapshot", "show", file, "--json"}).out)["devices"][0];
    };
    const auto diffed = run_cli({"snapshot", "diff", snapshots[0], snapshots[1], "--json"});
    ASSERT_EQ(diffed.exit_code, 0) << diffed.err;
    const json device = json::parse(diffed.out)["devices"][0];
    EXPECT_EQ(device["peak_allocated_before_bytes"], shown(snapshots[0])["peak_allocated_bytes"]);
    EXPECT_EQ(device["peak_allocated_after_bytes"], shown(snapshots[1])["peak_allocated_bytes"]);
    const std::int64_t peak_change = device["peak_allocated_after_bytes"].get<std::int64_t>() -
                                     device["peak_allocated_before_bytes"].get<std::int64_t>();
    EXPECT_GT(peak_change, 0);
    std::int64_t by_kind = 0;
    for (const json& change : device["by_kind"]) {
        by_kind += change["change_bytes"].get<std::int64_t>();
    }
    EXPECT_EQ(by_kind, peak_change) << device.dump();
    const auto text = run_cli({"snapshot", "diff", snapshots[0], snapshots[1]});
    EXPECT_NE(text.out.find("alive at the peak, by what it was for"), std::string::npos)
        << text.out;
    EXPECT_EQ(run_cli({"snapshot", "diff", snapshots[0]}).exit_code, 2);
}

// A trace of a GPU program: the GPU's memory leads, and the CPU's few bytes beside it are one
// line, without advice.
TEST_F(SnapshotCli, ATracesGpuLeadsAndAFewBytesOfCpuAreOneLine) {
    const auto memory = [](int ts, int type, int id, long long address, long long bytes) {
        return R"({"name": "[memory]", "ph": "i", "ts": )" + std::to_string(ts) +
               R"(, "pid": 1, "tid": 1, "args": {"Device Type": )" + std::to_string(type) +
               R"(, "Device Id": )" + std::to_string(id) + R"(, "Addr": )" +
               std::to_string(address) + R"(, "Bytes": )" + std::to_string(bytes) + "}}";
    };
    const std::string trace = m_dir.file("trace.json");
    test::write_file(trace, "{\"traceEvents\": [" + memory(1, 0, -1, 64, 64) + "," +
                                memory(2, 1, 0, 1 << 20, 512 << 20) + "," +
                                memory(3, 0, -1, 64, -64) + "]}");
    const auto shown = run_cli({"snapshot", "show", trace});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    EXPECT_EQ(shown.out.rfind("device 0: ", 0), 0u) << shown.out;
    const std::size_t cpu = shown.out.find(
        "the CPU: 64 B allocated at most over 2 events, "
        "nothing reserved: too little to change anything\n");
    ASSERT_NE(cpu, std::string::npos) << shown.out;
    EXPECT_EQ(shown.out.find("what to do", cpu), std::string::npos) << shown.out;
}

}  // namespace
}  // namespace oomlab
