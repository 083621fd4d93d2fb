// Commands that do not train never load LibTorch (the training engine is loaded on first use),
// so they answer at once. The dynamic loader's own report (LD_DEBUG=files) says what was loaded.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace oomlab
