#include "bernoulli_draws.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/bernoulli_native.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>

#include "replaced_cpu_kernels.h"

namespace oomlab::model {
namespace {

using at::Tensor;

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // SplitMix64's increment
constexpr std::int64_t kDrawsPerTask = 1 << 14;
constexpr int kElementsPerDraw = 4;  // 16 bits each: p to within 2^-16

// SplitMix64's output for its state after `n` steps from `seed`: any element's draw without
// the ones before it, so the draws are the same however many threads make them.
std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t n) {
    std::uint64_t z = seed + (n + 1) * kGolden;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t draw_seed(const c10::optional<at::Generator>& generator) {
    auto* cpu = at::get_generator_or_default<at::CPUGeneratorImpl>(
        generator, at::detail::getDefaultCPUGenerator());
    std::lock_guard<std::mutex> lock(cpu->mutex_);
    return cpu->random64();
}

// Each element of `values` 1 with probability `p` (its 16 bits under p * 2^16), else 0.
template <typename T>
void fill_draws(T* values, std::int64_t count, double p, std::uint64_t seed) {
    const auto threshold = static_cast<std::uint64_t>(std::lround(std::ldexp(p, 16)));
    // Chosen by index, not by a branch: a branch on random bits is mispredicted as often as
    // the rarer value is drawn.
    const T outcomes[2] = {static_cast<T>(0), static_cast<T>(1)};
    const std::int64_t draws = (count + kElementsPerDraw - 1) / kElementsPerDraw;
    at::parallel_for(0, draws, kDrawsPerTask, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t draw = begin; draw < end; ++draw) {
            std::uint64_t bits = splitmix64(seed, static_cast<std::uint64_t>(draw));
            const std::int64_t first = draw * kElementsPerDraw;
            const std::int64_t last = std::min(count, first + kElementsPerDraw);
            for (std::int64_t i = first; i < last; ++i, bits >>= 16) {
                values[i] = outcomes[(bits & 0xffffULL) < threshold];
            }
        }
    });
}

// bernoulli_.float: a floating-point tensor whose elements are its storage's, each once (any
// dense layout), is filled here; anything else, and the errors, are LibTorch's.
Tensor& bernoulli_scalar(Tensor& self, double p, c10::optional<at::Generator> generator) {
    if (!self.is_floating_point() || self.numel() == 0 || !(p >= 0 && p <= 1) ||
        !self.unsafeGetTensorImpl()->is_non_overlapping_and_dense()) {
        return at::native::bernoulli_(self, p, generator);
    }
    const std::uint64_t seed = draw_seed(generator);
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kBFloat16, at::kHalf, self.scalar_type(), "bernoulli_",
        [&] { fill_draws(self.data_ptr<scalar_t>(), self.numel(), p, seed); });
    return self;
}

const torch::Library* registered_kernel() {
    return replace_cpu_kernels(__FILE__, __LINE__, [](torch::Library& library) {
        library.impl("bernoulli_.float", TORCH_FN(bernoulli_scalar));
    });
}

}  // namespace

void install_bernoulli_draws() {
    static const torch::Library* const kernel = at::hasMKL() ? nullptr : registered_kernel();
    (void)kernel;
}

namespace {
// When the library loads (replaced_cpu_kernels.h says why).
const bool kDrawsInstalledOnLoad = (install_bernoulli_draws(), true);
}  // namespace

}  // namespace oomlab::model
