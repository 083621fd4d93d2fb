#include "oomlab/config/snapshot_paths.h"

#include <gtest/gtest.h>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/experiment_config.h"

namespace oomlab {
namespace {

TEST(SnapshotPaths, OneProcessKeepsThePathAsWritten) {
    EXPECT_EQ(snapshot_path_for_rank("out/snap.pickle", 0, 1), "out/snap.pickle");
    EXPECT_EQ(snapshot_path_for_rank("", 0, 1), "");
    EXPECT_EQ(snapshot_path_for_rank("snap-{rank}.pickle", 0, 1), "snap-0.pickle");
}

TEST(SnapshotPaths, EveryRankGetsItsOwnFile) {
    EXPECT_EQ(snapshot_path_for_rank("out/snap.pickle", 0, 2), "out/snap.rank0.pickle");
    EXPECT_EQ(snapshot_path_for_rank("out/snap.pickle", 1, 2), "out/snap.rank1.pickle");
    // A dot in a folder is not an extension; a name without one gets the rank at its end.
    EXPECT_EQ(snapshot_path_for_rank("v1.2/snap", 3, 4), "v1.2/snap.rank3");
    // Where the path says where the rank goes, it goes only there.
    EXPECT_EQ(snapshot_path_for_rank("r{rank}/s{rank}.pickle", 1, 2), "r1/s1.pickle");
    EXPECT_EQ(snapshot_path_for_rank("", 1, 2), "");
}

TEST(SnapshotPaths, AFolderIsLeftForThePathCheckToRefuse) {
    EXPECT_EQ(snapshot_path_for_rank("out/", 1, 2), "out/");
    EXPECT_EQ(snapshot_path_for_rank("out/..", 1, 2), "out/..");
    EXPECT_EQ(snapshot_path_per_run("out/."), "out/.");
}

TEST(SnapshotPaths, TheRunIdReplacesItsPlaceholder) {
    EXPECT_EQ(snapshot_path_for_run("snap-{run}.pickle", 12), "snap-12.pickle");
    EXPECT_EQ(snapshot_path_for_run("{run}/{run}.pickle", 7), "7/7.pickle");
    EXPECT_EQ(snapshot_path_for_run("snap.pickle", 12), "snap.pickle");
}

TEST(SnapshotPaths, SeveralRunsFromOneConfigEachNameTheirRun) {
    EXPECT_EQ(snapshot_path_per_run("snap.pickle"), "snap.run{run}.pickle");
    EXPECT_EQ(snapshot_path_per_run("snap-{run}.pickle"), "snap-{run}.pickle");
    EXPECT_EQ(snapshot_path_per_run(""), "");
    EXPECT_EQ(
        snapshot_path_for_run(snapshot_path_for_rank(snapshot_path_per_run("s.pickle"), 1, 2), 5),
        "s.run5.rank1.pickle");
}

// The message of the BadInput that setting debug.memory_snapshot to `path` throws; empty if none.
std::string refusal(const std::string& path) {
    ExperimentConfig config;
    try {
        set_config_value(config, "debug.memory_snapshot", path);
    } catch (const BadInput& error) {
        EXPECT_EQ(config.debug.memory_snapshot, "") << "a refused value is not kept";
        return error.what();
    }
    EXPECT_EQ(config.debug.memory_snapshot, path);
    return "";
}

TEST(SnapshotPaths, OnlyTheTwoPlaceholdersMayUseBraces) {
    EXPECT_EQ(refusal("snaps/{rank}/run-{run}.{rank}.pickle"), "");
    EXPECT_EQ(refusal("plain.pickle"), "");
    EXPECT_EQ(refusal("snap-{rnak}.pickle"),
              "debug.memory_snapshot=snap-{rnak}.pickle: \"{rnak}\" at character 6 is not a "
              "placeholder; the name may hold {run} (the run's id) and {rank} (the process's "
              "rank), and no other braces");
    EXPECT_NE(refusal("{rank").find("\"{\" at character 1"), std::string::npos);
    EXPECT_NE(refusal("a}.pickle").find("\"}\" at character 2"), std::string::npos);
    EXPECT_NE(refusal("{run}}").find("\"}\" at character 6"), std::string::npos);
    EXPECT_NE(refusal("{{run}}").find("\"{{run}\" at character 1"), std::string::npos);
    EXPECT_NE(refusal("{RUN}.pickle").find("\"{RUN}\""), std::string::npos);
}

}  // namespace
}  // namespace oomlab
