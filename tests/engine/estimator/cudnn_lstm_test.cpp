// cuDNN's LSTM buffers as the estimator models them, against every shape recorded on a GPU
// (bench/results/gpu-2026-11-28/probe.json, bench/gpu/probe_device_memory.py), and what a CUDA
// run holds beside its tensors: outside the allocator, and in host memory.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "estimator/cudnn_lstm.h"
#include "estimator/library_workspaces.h"
#include "oomlab/estimator/estimator.h"
#include "test_support.h"
#include "tiny_run.h"

namespace oomlab {
namespace {

using estimator::cudnn_lstm_buffers;
using test::tiny;
using test::tiny_profile;

using test::kMiB;

nlohmann::json recorded_probe() {
    const std::string path =
        std::string(test::source_root()) + "/bench/results/gpu-2026-11-28/probe.json";
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    return in ? nlohmann::json::parse(in) : nlohmann::json::object();
}

// The forward's workspace is the first block it frees; the reserve is the request after it.
TEST(CudnnLstm, BuffersMatchEveryShapeRecordedOnTheGpu) {
    const nlohmann::json probe = recorded_probe();
    int shapes = 0;
    double worst = 0;
    for (const auto& trace : probe.value("cudnn_lstm", nlohmann::json::array())) {
        const auto& events = trace.at("events");
        std::int64_t first_free = -1;
        for (const auto& event : events) {
            if (event.at(0) == "free_completed") {
                first_free = event.at(1).get<std::int64_t>();
                break;
            }
        }
        std::int64_t workspace = -1, reserve = -1;
        for (std::size_t i = 0; i + 1 < events.size(); ++i) {
            if (events[i].at(0) == "alloc" && events[i].at(1) == first_free) {
                workspace = events[i].at(2).get<std::int64_t>();
                reserve = events[i + 1].at(2).get<std::int64_t>();
                break;
            }
        }
        const estimator::LstmShape shape = {
            trace.at("batch").get<std::int64_t>(), trace.at("length").get<std::int64_t>(),
            trace.at("features").get<std::int64_t>(), trace.at("hidden").get<std::int64_t>(),
            trace.at("precision") == "fp32" ? 4 : 2};
        const estimator::CudnnLstmBuffers modelled = cudnn_lstm_buffers(shape);
        EXPECT_EQ(modelled.reserve, reserve) << trace.dump().substr(0, 120);
        const double error = std::abs(double(modelled.workspace - workspace)) / double(workspace);
        EXPECT_LT(error, 0.005) << "batch " << shape.batch << " length " << shape.length
                                << " input " << shape.input << " hidden " << shape.hidden;
        worst = std::max(worst, error);
        ++shapes;
    }
    EXPECT_EQ(shapes, 305);  // the whole recorded grid
    RecordProperty("worst_workspace_error_percent", std::to_string(100 * worst));
}

TEST(CudnnLstm, WorkspaceGrowsWithTheBatchAndPastTheRecordedSizes) {
    const auto workspace = [](std::int64_t batch, std::int64_t hidden) {
        return cudnn_lstm_buffers({batch, 37, 50, hidden, 4}).workspace;
    };
    EXPECT_LT(workspace(32, 128), workspace(64, 128));
    // Between recorded hidden sizes, between their workspaces.
    EXPECT_GT(workspace(32, 192), std::min(workspace(32, 128), workspace(32, 256)));
    EXPECT_LT(workspace(32, 192), std::max(workspace(32, 128), workspace(32, 256)));
    // Past them, growing with the hidden size, never below the largest recorded.
    EXPECT_GT(workspace(32, 1024), workspace(32, 512));
    EXPECT_GT(workspace(32, 512), workspace(32, 256));
    EXPECT_GT(cudnn_lstm_buffers({8, 8, 50, 16, 2}).workspace, 0);
}

// The BiLSTM on CUDA holds cuDNN's workspace at its peak: with it, the estimate of a
// 2-layer BiLSTM's step rises by about one workspace over the CPU's fused LSTM.
TEST(CudnnLstm, TheBiLstmsPeakOnCudaHoldsTheWorkspace) {
    const auto config = [](const char* device) {
        return tiny({"model.kind=bilstm", "model.hidden=128", "model.layers=2",
                     "train.batch_size=32", device});
    };
    DataProfile profile = tiny_profile();
    profile.embedding_dim = 50;
    profile.lengths.assign(64, 5);
    profile.train_examples = 64;
    const MemoryEstimate cpu = estimate_memory(config("device=cpu"), profile);
    const MemoryEstimate cuda = estimate_memory(config("device=cuda"), profile);
    const std::int64_t workspace = cudnn_lstm_buffers({32, 5, 256, 128, 4}).workspace;
    const std::int64_t added = cuda.peak_bytes - cpu.peak_bytes - cuda.library_workspaces;
    EXPECT_GT(added, workspace * 9 / 10);
    EXPECT_LT(added, workspace * 11 / 10);
}

TEST(OutsideTheAllocator, PredictedOnCudaFromWhatAnH200Held) {
    EXPECT_EQ(estimate_memory(tiny({}), tiny_profile()).breakdown.other, 0);
    const std::int64_t bag = estimate_memory(tiny({"device=cuda"}), tiny_profile()).breakdown.other;
    // The idle device's 618.3 MiB, the context's 615.6, cuBLAS's 66 and autograd's 64.
    EXPECT_NEAR(double(bag) / kMiB, 1363.9, 0.1);
    EXPECT_EQ(
        estimator::cuda_outside_allocator_bytes(tiny({"device=cuda", "model.kind=bilstm"}), 1) -
            bag,
        8 * kMiB);
    EXPECT_EQ(estimator::cuda_outside_allocator_bytes(tiny({"device=cuda"}), 2) - bag, 558 * kMiB);
    EXPECT_EQ(estimator::cuda_outside_allocator_bytes(
                  tiny({"device=cuda", "distributed.backend=gloo"}), 2),
              bag);
}

// On CUDA a host-placed table keeps its weights, gradient and Adam's state in host memory.
TEST(HostTable, ItsWeightsGradientAndStateAreNotTheDevices) {
    const auto estimate = [](std::initializer_list<std::string> settings) {
        ExperimentConfig config = tiny(settings);
        return estimate_memory(config, tiny_profile());
    };
    const MemoryEstimate device = estimate({"device=cuda", "train.optimizer=adam"});
    const MemoryEstimate host =
        estimate({"device=cuda", "train.optimizer=adam", "embeddings.placement=cpu"});
    const std::int64_t table = 10 * 4 * 4;  // 10 rows x 4, float32
    EXPECT_EQ(host.host_bytes, 4 * table);  // weights, gradient, two moments
    EXPECT_EQ(host.breakdown.embedding_table, 0);
    EXPECT_EQ(device.breakdown.embedding_table, table);
    EXPECT_EQ(device.breakdown.optimizer_state - host.breakdown.optimizer_state, 2 * table);
    // The weights and state leave every phase; the gradient those it is alive in.
    EXPECT_GE(device.peak_bytes - host.peak_bytes, 3 * table);
    EXPECT_LE(device.peak_bytes - host.peak_bytes, 4 * table);
    // On the CPU the host is the device: nothing moves.
    EXPECT_EQ(estimate({"embeddings.placement=cpu"}).host_bytes, 0);
}

}  // namespace
}  // namespace oomlab
