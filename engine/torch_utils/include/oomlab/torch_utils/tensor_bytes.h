// The bytes a tensor's elements take, as the engine counts parameters, gradients and optimizer
// state.
#pragma once

#include <torch/types.h>

#include <cstdint>

namespace oomlab {

// 0 for an undefined tensor (a parameter without its gradient yet, a state not made).
inline std::int64_t tensor_bytes(const torch::Tensor& tensor) {
    return tensor.defined() ? static_cast<std::int64_t>(tensor.nbytes()) : 0;
}

}  // namespace oomlab
