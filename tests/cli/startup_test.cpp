// Commands that do not train never load LibTorch (the training engine is loaded on first use),
// so they answer at once. The dynamic loader's own report (LD_DEBUG=files) says what was loaded.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cli_runner.h"
#include "oomlab/store/run_store.h"
#include "test_support.h"

namespace oomlab {
namespace {

using test::run_cli;

bool loaded_libtorch(const test::CliResult& result) {
    return result.err.find("file=libtorch") != std::string::npos;
}

TEST(Startup, CommandsThatDoNotTrainNeverLoadLibTorch) {
    test::TempDir dir;
    const std::string db = dir.file("runs.sqlite");
    const std::string glove = dir.file("glove.txt");
    test::write_file(glove, test::read_text(test::fixture("glove/glove_6b_50d_sample.txt")));
    ASSERT_EQ(run_cli({"glove", "convert", glove}).exit_code, 0);  // writes its cache
    RunStore::open(db);  // `runs list` reads a database, never makes one

    const std::vector<std::vector<std::string>> commands = {
        {"--version"},
        {"--help"},
        {"runs", "list", "--db", db},
        {"config", "keys"},
        {"config", "show", "--set", "train.batch_size=64"},
        {"glove", "info", glove, "--json"},
        {"estimate", "--set", "model.kind=transformer"},
        {"device", "--help"},
    };
    for (const auto& command : commands) {
        const test::CliResult result = run_cli(command, {"LD_DEBUG=files"});
        EXPECT_EQ(result.exit_code, 0) << command.front() << ": " << result.err;
        EXPECT_FALSE(loaded_libtorch(result))
            << "oomlab-cli " << command.front() << " " << (command.size() > 1 ? command[1] : "");
    }
    // The same report does show LibTorch for a command that needs it.
    const test::CliResult device = run_cli({"device", "--json"}, {"LD_DEBUG=files"});
    EXPECT_EQ(device.exit_code, 0) << device.err;
    EXPECT_TRUE(loaded_libtorch(device));
}

// A run's settings and dataset are checked before the training engine is loaded: a dataset
// path mistyped is said at once, not after LibTorch's load (0.3-0.5 s of it alone).
TEST(Startup, ADatasetThatCannotBeReadIsRefusedBeforeLibTorchLoads) {
    test::TempDir dir;
    const std::string missing = dir.file("missing.tsv");
    const test::CliResult result =
        run_cli({"run", "--db", dir.file("runs.sqlite"), "--set", "dataset.path=" + missing},
                {"LD_DEBUG=files"});
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find("error: " + missing), std::string::npos) << result.err;
    EXPECT_FALSE(loaded_libtorch(result)) << result.err;
}

// OpenBLAS, the BLAS of Debian's LibTorch, picks its kernels when the training engine loads it
// and takes a processor newer than it knows for an old one; the engine names the kernels the
// processor can run, unless the user did. OPENBLAS_VERBOSE=2 makes OpenBLAS say which it took.
TEST(Startup, OpenBlasRunsKernelsThisProcessorCanRun) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        GTEST_SKIP() << "a processor without AVX2: OpenBLAS's own choice stands";
    }
    if (std::getenv("OPENBLAS_CORETYPE")) {
        GTEST_SKIP() << "OPENBLAS_CORETYPE is set for this test's environment";
    }
    const auto core_of = [](const test::CliResult& result) -> std::string {
        const std::string said = result.err + result.out;
        const auto at = said.find("Core: ");
        return at == std::string::npos ? "" : said.substr(at + 6, said.find('\n', at) - at - 6);
    };
    const test::CliResult chosen = run_cli({"device", "--json"}, {"OPENBLAS_VERBOSE=2"});
    ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
    if (core_of(chosen).empty()) {
        GTEST_SKIP() << "this LibTorch's BLAS is not OpenBLAS";
    }
    const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512cd");
    EXPECT_EQ(core_of(chosen), avx512 ? "SkylakeX" : "Haswell");
    const test::CliResult users =
        run_cli({"device", "--json"}, {"OPENBLAS_VERBOSE=2", "OPENBLAS_CORETYPE=Sandybridge"});
    EXPECT_EQ(core_of(users), "Sandybridge") << "the user's choice stands";
}

}  // namespace
}  // namespace oomlab
