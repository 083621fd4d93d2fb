#include "matrix_product.h"

#include <ATen/ops/mm_cpu_dispatch.h>

#include <optional>

#if OOMLAB_ONEDNN_GEMM
#include <oneapi/dnnl/dnnl.h>
#endif

namespace oomlab::model {
namespace {

#if OOMLAB_ONEDNN_GEMM
// A matrix as row-major BLAS takes it: stored as is ('N') or transposed ('T'), and the
// distance between the rows it is stored in.
struct Operand {
    char layout;
    dnnl_dim_t leading;
};

std::optional<Operand> operand(const torch::Tensor& matrix) {
    const std::int64_t rows = matrix.size(0);
    const std::int64_t columns = matrix.size(1);
    if (matrix.stride(1) == 1 || columns == 1) {
        // One row's stride is never read: any distance at least the row's length will do.
        const std::int64_t leading = rows == 1 ? columns : matrix.stride(0);
        if (leading >= columns) {
            return Operand{'N', leading};
        }
    }
    if (matrix.stride(0) == 1 || rows == 1) {
        const std::int64_t leading = columns == 1 ? rows : matrix.stride(1);
        if (leading >= rows) {
            return Operand{'T', leading};
        }
    }
    return std::nullopt;
}

bool onednn_multiply(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                     float beta) {
    if (out.scalar_type() != torch::kFloat32 || a.scalar_type() != torch::kFloat32 ||
        b.scalar_type() != torch::kFloat32 || !out.is_cpu() || out.numel() == 0 || a.size(1) == 0) {
        return false;
    }
    const auto c = operand(out);
    const auto left = operand(a);
    const auto right = operand(b);
    if (!c || c->layout != 'N' || !left || !right) {
        return false;
    }
    return dnnl_sgemm(left->layout, right->layout, out.size(0), out.size(1), a.size(1), 1.0F,
                      a.data_ptr<float>(), left->leading, b.data_ptr<float>(), right->leading, beta,
                      out.data_ptr<float>(), c->leading) == dnnl_success;
}
#endif

}  // namespace

void multiply_into(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b,
                   float beta) {
    TORCH_CHECK(out.dim() == 2 && a.dim() == 2 && b.dim() == 2 && a.size(0) == out.size(0) &&
                    b.size(1) == out.size(1) && a.size(1) == b.size(0),
                "multiply_into: shapes ", out.sizes(), " = ", a.sizes(), " @ ", b.sizes());
#if OOMLAB_ONEDNN_GEMM
    if (onednn_multiply(out, a, b, beta)) {
        return;
    }
#endif
    torch::Tensor result = out;  // a handle to the same tensor, which addmm_out writes
    at::addmm_out(result, out, a, b, beta, 1.0F);  // beta 0 ignores out, NaNs included
}

void multiply_float32(const torch::Tensor& out, const torch::Tensor& a, const torch::Tensor& b) {
#if OOMLAB_ONEDNN_GEMM
    if (onednn_multiply(out, a, b, 0.0F)) {
        return;
    }
#endif
    torch::Tensor result = out;
    at::cpu::mm_out(result, a, b);  // ATen's CPU kernel itself, not the dispatcher
}

}  // namespace oomlab::model
