// What this build is: the LibTorch it links and whether it has CUDA, as --version and `device`
// say, and a CUDA device asked for where none can be used refused with the reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(Build, VersionNamesTheLibTorchAndWhetherItHasCuda) {
    const test::CliResult version = test::run_cli({"--version"});
    ASSERT_EQ(version.exit_code, 0) << version.err;
    const test::CliResult device = test::run_cli({"device", "--json"});
    ASSERT_EQ(device.exit_code, 0) << device.err;
    const auto described = nlohmann::json::parse(device.out);
    const std::string cuda = described.at("torch_cuda_version");
    EXPECT_NE(version.out.find("(LibTorch " + described.at("torch_version").get<std::string>() +
                               (cuda.empty() ? ", CPU only)" : ", CUDA " + cuda + ")")),
              std::string::npos)
        << version.out;
#if OOMLAB_EXPECT_CUDA
    // The CUDA build (./oomlab.sh cuda-test) links PyTorch 2.x's LibTorch with its CUDA code.
    EXPECT_EQ(described.at("torch_version").get<std::string>().rfind("2.", 0), 0u) << device.out;
    EXPECT_FALSE(cuda.empty()) << "this build was asked for CUDA but its LibTorch has none";
#endif
}

TEST(Build, ACudaDeviceThatCannotBeUsedIsRefusedWithTheReason) {
    const test::CliResult device = test::run_cli({"device", "--json"});
    ASSERT_EQ(device.exit_code, 0) << device.err;
    const auto described = nlohmann::json::parse(device.out);
    if (described.at("cuda").get<bool>()) {
        GTEST_SKIP() << "this machine has a CUDA device";
    }
    test::TempDir dir;
    const test::CliResult ran =
        test::run_cli({"run", "--db", dir.file("runs.sqlite"), "--set", "device=cuda"});
    EXPECT_EQ(ran.exit_code, 2) << ran.err;
    EXPECT_NE(ran.err.find("device: \"cuda\" is not available"), std::string::npos) << ran.err;
    const bool built_with_cuda = !described.at("torch_cuda_version").get<std::string>().empty();
    EXPECT_NE(ran.err.find(built_with_cuda ? "sees no CUDA device" : "was built without CUDA"),
              std::string::npos)
        << ran.err;
    EXPECT_NE(ran.err.find("use device=cpu"), std::string::npos) << ran.err;
    // Nothing was recorded for a run that could not start.
    EXPECT_EQ(test::run_cli({"runs", "show", "1", "--db", dir.file("runs.sqlite")}).exit_code, 2);
}

}  // namespace
}  // namespace oomlab
