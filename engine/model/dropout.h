// Dropout with ATen's CPU memory and a cheaper draw of its mask.
//
// On the CPU, ATen's dropout makes a mask of the input's type and size (1 / (1 - p) where an
// element is kept, 0 where it is dropped), multiplies the input by it, and the product keeps
// the mask for backward. It draws the mask with one call of the default generator per element:
// 8 ns an element with Debian's LibTorch (no MKL), a fifth of a transformer's step on the CPU.
// This module makes the same two tensors in the same order and draws the mask from
// SplitMix64 in counter form, seeded once per call from the CPU's default generator, so that
// a seed, or a checkpoint's restored generator, gives the same masks again. On any other
// device it is torch::dropout: CUDA's fused dropout and its one-byte mask are left as they are.
#pragma once

#include <torch/nn.h>

namespace oomlab::model {

class DropoutImpl : public torch::nn::Cloneable<DropoutImpl> {
public:
    explicit DropoutImpl(double p);
    void reset() override {}
    torch::Tensor forward(const torch::Tensor& input);
    void pretty_print(std::ostream& stream) const override;

private:
    double m_p;
};
TORCH_MODULE(Dropout);

}  // namespace oomlab::model
