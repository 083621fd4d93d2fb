// Matrix products of the CPU's fused LSTM (lstm_layer.h) and of bfloat16 widened to float32
// (bf16_products.h).
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

// out = a @ b for float32 matrices laid out as multiply_into takes them, out row-major: the
// same BLAS, called directly, so that no operator is dispatched (a profile sees none) and no
// tensor is allocated.
void multiply_float32(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b);

}  // namespace oomlab::model
