#include "dropout.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <ostream>

namespace oomlab::model {
namespace {

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // SplitMix64's increment
constexpr std::int64_t kDrawsPerTask = 1 << 14;
constexpr int kElementsPerDraw = 4;  // 16 bits each: p to within 2^-16

// SplitMix64's output for its state after `n` steps from `seed`: any element's draw without
// the ones before it, so the mask is the same however many threads fill it.
std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t n) {
    std::uint64_t z = seed + (n + 1) * kGolden;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t draw_seed() {
    at::Generator generator = at::globalContext().defaultGenerator(c10::Device(c10::kCPU));
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get<at::CPUGeneratorImpl>()->random64();
}

// Each element of `mask` 1 / keep with probability `keep` (its 16 bits of the draw under
// keep * 2^16), 0 otherwise.
template <typename T>
void fill_mask(T* mask, std::int64_t count, double keep, std::uint64_t seed) {
    const auto threshold = static_cast<std::uint64_t>(std::lround(std::ldexp(keep, 16)));
    // Chosen by index, not by a branch: a branch on random bits is mispredicted as often as
    // an element is dropped.
    const T values[2] = {static_cast<T>(0), static_cast<T>(1.0 / keep)};
    const std::int64_t draws = (count + kElementsPerDraw - 1) / kElementsPerDraw;
    at::parallel_for(0, draws, kDrawsPerTask, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t draw = begin; draw < end; ++draw) {
            std::uint64_t bits = splitmix64(seed, static_cast<std::uint64_t>(draw));
            const std::int64_t first = draw * kElementsPerDraw;
            const std::int64_t last = std::min(count, first + kElementsPerDraw);
            for (std::int64_t i = first; i < last; ++i, bits >>= 16) {
                mask[i] = values[(bits & 0xffffULL) < threshold];
            }
        }
    });
}

}  // namespace

DropoutImpl::DropoutImpl(double p) : m_p(p) {
    TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}

torch::Tensor DropoutImpl::forward(const torch::Tensor& input) {
    if (!is_training() || m_p == 0 || m_p == 1 || input.numel() == 0 || !input.is_cpu() ||
        !input.is_floating_point()) {
        return torch::dropout(input, m_p, is_training());
    }
    // Laid out as the input where it is dense, else contiguous: dense either way, so every
    // element is filled in storage order.
    torch::Tensor mask = at::empty_like(input);
    const std::uint64_t seed = draw_seed();
    AT_DISPATCH_FLOATING_TYPES_AND2(
        at::kBFloat16, at::kHalf, mask.scalar_type(), "dropout mask",
        [&] { fill_mask(mask.data_ptr<scalar_t>(), mask.numel(), 1 - m_p, seed); });
    return input * mask;
}

void DropoutImpl::pretty_print(std::ostream& stream) const {
    stream << "oomlab::model::Dropout(p=" << m_p << ")";
}

}  // namespace oomlab::model
