// The engine's bf16 matrix products (engine/model/bf16_products.h) against LibTorch's own bf16
// kernel and against fp32, on one thread, at the shapes of bench/bf16_matmul.py: a bilstm's
// gates, a transformer's feed-forward, a square product, and attention's batched scores.
// Each reports GFLOP/s (items per second, an item being a floating-point operation).
//
//   OMP_NUM_THREADS=1 build/bench/oomlab-bf16-products-bench
#include <benchmark/benchmark.h>

#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <torch/torch.h>

#include "model/bf16_products.h"

namespace {

enum class Kernel { LibTorchBf16, EngineBf16, Fp32 };

// A product of `batch` pairs (rows x inner) @ (inner x columns); batch 0 is one 2-D product.
void product(benchmark::State& state, Kernel kernel) {
    oomlab::model::install_bf16_products();
    const std::int64_t batch = state.range(0);
    const std::int64_t rows = state.range(1);
    const std::int64_t inner = state.range(2);
    const std::int64_t columns = state.range(3);
    const auto type = kernel == Kernel::Fp32 ? torch::kFloat32 : torch::kBFloat16;
    const auto shape = [&](std::int64_t a, std::int64_t b) {
        return batch == 0 ? std::vector<std::int64_t>{a, b}
                          : std::vector<std::int64_t>{batch, a, b};
    };
    const torch::Tensor left = torch::randn(shape(rows, inner)).to(type);
    const torch::Tensor right = torch::randn(shape(inner, columns)).to(type);
    for (auto _ : state) {
        torch::Tensor result;
        if (kernel == Kernel::LibTorchBf16) {  // LibTorch's kernel itself, past the engine's
            // Below autograd, as the dispatcher calls it: on a CPU with AVX-512 the kernel
            // hands the product to oneDNN, which asserts that it is.
            const at::AutoDispatchBelowADInplaceOrView below_autograd;
            result = batch == 0 ? at::cpu::mm(left, right) : at::cpu::bmm(left, right);
        } else {
            result = batch == 0 ? torch::mm(left, right) : torch::bmm(left, right);
        }
        benchmark::DoNotOptimize(result.data_ptr());
    }
    state.SetItemsProcessed(state.iterations() * 2 * std::max<std::int64_t>(batch, 1) * rows *
                            inner * columns);
}

void shapes(benchmark::internal::Benchmark* b) {
    b->ArgNames({"batch", "rows", "inner", "columns"});
    b->Args({0, 32, 178, 512});       // a bilstm's gates
    b->Args({0, 32 * 24, 128, 256});  // a transformer's feed-forward
    b->Args({0, 256, 256, 256});
    b->Args({32 * 4, 24, 32, 24});  // attention's scores: batch x heads, length, head width
    b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(product, libtorch_bf16, Kernel::LibTorchBf16)->Apply(shapes);
BENCHMARK_CAPTURE(product, engine_bf16, Kernel::EngineBf16)->Apply(shapes);
BENCHMARK_CAPTURE(product, fp32, Kernel::Fp32)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
