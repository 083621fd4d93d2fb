// What the fused LSTM's per-step passes read and write: views [B, H] and [B, 4H] of its
// time-major buffers, each row contiguous, walked a row of the batch at a time.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace oomlab::model {

inline bool rows_contiguous(const at::Tensor& view) {
    return view.dim() == 2 && view.stride(1) == 1;
}

// Row `b` of `view`.
template <typename T>
T* row_of(const at::Tensor& view, std::int64_t b) {
    return view.data_ptr<T>() + b * view.stride(0);
}

}  // namespace oomlab::model
