// Matrix products of the CPU's fused LSTM (lstm_layer.h).
#pragma once

#include <torch/types.h>

namespace oomlab::model {

// out = beta * out + a @ b, for 2-D tensors of one type whose rows or columns are each
// contiguous (views such as a transpose or a column block read in place). With beta 0, out's
// contents are not read.
//
// In the build of Debian's LibTorch this is oneDNN's sgemm for float32 (the library that
// LibTorch links already): LibTorch's own products go to OpenBLAS, whose kernels follow
// OPENBLAS_CORETYPE, and a step of the LSTM is mostly products. Otherwise, and for other
// types, it is ATen's addmm.
void multiply_into(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                   float beta);

}  // namespace oomlab::model
