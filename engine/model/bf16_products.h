// bfloat16 matrix products on the CPU at float32's pace.
//
// Where the CPU lacks AVX-512's bfloat16 instructions, LibTorch multiplies bfloat16 matrices
// one element at a time (bench/bf16_matmul.py: 4.3 GFLOP/s against 82-132 in float32 on an
// AVX2 CPU), so a bf16 run on such a CPU spends most of its time in its products.
// install_bf16_products() replaces ATen's CPU kernels of mm, addmm and bmm (and their out=
// forms) for bfloat16 operands: the operands are widened to float32 in scratch memory that the
// tensor allocator never sees, multiplied by the float32 BLAS, and the result rounded once to
// bfloat16 into the tensor LibTorch's kernel makes (or into out=). The tensors, and so every
// memory figure, are LibTorch's own; the sums are in float32, as in LibTorch's loop and in
// cuBLAS. LibTorch's kernels still take other types, empty products, and operands they would
// copy first (neither rows nor columns contiguous), so that those copies stay where they were.
//
// On a CPU with AVX-512, LibTorch hands bfloat16 products to oneDNN instead, which is fast but
// allocates a scratch tensor beside each result. The kernels replace that path too: a run's
// memory figures are then the same on every CPU, and like a GPU's, whose cuBLAS allocates no
// tensor of its own.
#pragma once

namespace oomlab::model {

// Done when this library loads; later calls do nothing.
void install_bf16_products();

}  // namespace oomlab::model
