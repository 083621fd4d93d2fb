// `record` of a training script with an LSTM, a GRU and convolutions on a machine without CUDA,
// with a real PyTorch (OOMLAB_TORCH_PYTHON: 2.11, and 2.15 in ./oomlab.sh cuda-test): its
// profile keeps each call's shapes, and the GPU estimate makes the calls as cuDNN makes them.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.h"
#include "test_support.h"

namespace oomlab {
namespace {

TEST(PyTorchPrograms, RecordedRnnAndConvolutionCallsAreEstimatedAsCudnnMakesThem) {
    if (test::torch_python().empty()) {
        GTEST_SKIP() << "OOMLAB_TORCH_PYTHON is not set: this test runs PyTorch 2.x's own "
                        "profiler (./oomlab.sh cuda-test sets it)";
    }
    test::TempDir dir;
    test::write_file(dir.file("rnns.py"), R"PY(import torch

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(16, 32, batch_first=True, bidirectional=True)
        self.conv = torch.nn.Conv1d(64, 64, 3, padding=1)
        self.depthwise = torch.nn.Conv1d(64, 64, 3, padding=1, groups=64)
        self.gru = torch.nn.GRU(64, 24, num_layers=2)
        self.out = torch.nn.Linear(24, 3)

    def forward(self, x):
        hidden, _ = self.lstm(x)
        hidden = self.depthwise(self.conv(hidden.transpose(1, 2)))
        hidden, _ = self.gru(hidden.permute(2, 0, 1))
        return self.out(hidden[-1])

torch.manual_seed(0)
model = Model()
optimizer = torch.optim.Adam(model.parameters())
for step in range(2):
    loss = torch.nn.functional.cross_entropy(model(torch.randn(4, 10, 16)),
                                             torch.tensor([0, 1, 2, 0]))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
with torch.no_grad():
    model(torch.randn(4, 10, 16))
)PY");
    const test::CommandResult recorded =
        test::run_command("cd " + test::shell_quote(dir.path()) + " && timeout 120 " +
                          test::shell_quote(test::cli_program()) + " record --out " +
                          test::shell_quote(dir.file("rnns.pickle")) + " -- " +
                          test::shell_quote(test::torch_python()) + " rnns.py 2>&1 </dev/null");
    ASSERT_EQ(recorded.exit_code, 0) << recorded.out;

    const test::CliResult shown =
        test::run_cli({"snapshot", "show", dir.file("rnns.json"), "--json"});
    ASSERT_EQ(shown.exit_code, 0) << shown.err;
    const nlohmann::json device = nlohmann::json::parse(shown.out)["devices"][0];
    ASSERT_EQ(device["device"], -1) << "the CPU";
    const nlohmann::json& gpu = device["gpu_estimate"];
    ASSERT_TRUE(gpu.is_object()) << device.dump();
    // Two training steps and an evaluation, each calling both RNNs and the convolution, whose
    // backward runs in both steps; the grouped one (depthwise) is left as the CPU made it.
    EXPECT_EQ(gpu["recurrent_calls_as_cudnn"], 6) << gpu.dump();
    EXPECT_EQ(gpu["convolution_calls_as_cudnn"], 5) << gpu.dump();
    EXPECT_NE(gpu["leaves_out"].get<std::string>().find("LSTMs and GRUs"), std::string::npos);
}

}  // namespace
}  // namespace oomlab
