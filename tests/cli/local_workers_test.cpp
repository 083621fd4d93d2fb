// The launcher of local worker processes: what the workers say on standard error reaches the
// caller once, and a config every worker refuses comes back as the refusal itself.
#include "oomlab/session/local_workers.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "oomlab/common/errors.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(LocalWorkers, EachWorkersErrorsAreKeptAndRepeatedLinesShownOnce) {
    LocalWorkers workers;
    workers.program = "/bin/sh";
    workers.arguments = {"-c",
                         "echo \"error: same for all\" >&2; echo \"rank $RANK of $WORLD_SIZE\" "
                         ">&2; exit $((RANK + 2))"};
    workers.count = 3;
    const std::atomic<bool> stop{false};
    const std::vector<WorkerExit> exits = run_local_workers(workers, stop);
    ASSERT_EQ(exits.size(), 3u);
    for (int rank = 0; rank < 3; ++rank) {
        EXPECT_EQ(exits[rank].exit_code, rank + 2);
        EXPECT_EQ(exits[rank].errors,
                  "error: same for all\nrank " + std::to_string(rank) + " of 3\n");
    }
    EXPECT_EQ(distinct_error_lines(exits),
              (std::vector<std::string>{"error: same for all", "rank 0 of 3", "rank 1 of 3",
                                        "rank 2 of 3"}));
}

TEST(LocalWorkers, AConfigTheWorkersRefuseIsTheCallersBadInput) {
    setenv("OOMLAB_CLI", OOMLAB_CLI_PATH, 1);
    test::TempDir dir;
    ExperimentConfig config;
    config.dataset.path = dir.file("missing.csv");
    const std::atomic<bool> cancel{false};
    try {
        run_with_local_workers(config, "refused", dir.file("runs.sqlite"), 2, cancel);
        FAIL() << "a run without its dataset was recorded";
    } catch (const BadInput& error) {
        // The workers' own message, once, without the ranks' exit codes around it.
        EXPECT_EQ(std::string(error.what()),
                  dir.file("missing.csv") + ": does not exist (dataset.path)");
    }
    EXPECT_TRUE(RunStore::open(dir.file("runs.sqlite")).list_runs().empty());
}

}  // namespace
}  // namespace oomlab
