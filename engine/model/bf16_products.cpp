#include "bf16_products.h"

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/empty_cpu_dispatch.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm_cpu_dispatch.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "matrix_product.h"
#include "replaced_cpu_kernels.h"

namespace oomlab::model {
namespace {

using at::BFloat16;
using at::Tensor;

// `count` matrices of `rows` x `columns` bfloat16 elements, `batch_stride` apart, laid out as
// BLAS reads them in place: each row contiguous (row-major) or each column, `leading` apart.
struct Matrices {
    const BFloat16* data = nullptr;
    std::int64_t count = 1;
    std::int64_t rows = 0;
    std::int64_t columns = 0;
    std::int64_t batch_stride = 0;
    std::int64_t leading = 0;
    bool row_major = true;

    std::int64_t size() const { return rows * columns; }
};

bool is_bf16(const Tensor& t) {
    return t.defined() && t.scalar_type() == at::kBFloat16 && t.layout() == at::kStrided &&
           t.device().is_cpu();
}

// The matrices of a 2-D (one) or 3-D (a batch) tensor, where LibTorch's kernels would read
// them in place; nullopt where they would copy them first.
std::optional<Matrices> as_matrices(const Tensor& t) {
    const std::int64_t d = t.dim();
    Matrices m;
    m.count = d == 3 ? t.size(0) : 1;
    m.rows = t.size(d - 2);
    m.columns = t.size(d - 1);
    m.batch_stride = d == 3 ? t.stride(0) : 0;
    const std::int64_t row_stride = t.stride(d - 2);
    const std::int64_t column_stride = t.stride(d - 1);
    if (column_stride == 1 && row_stride >= std::max<std::int64_t>(1, m.columns)) {
        m.leading = row_stride;
    } else if (row_stride == 1 && column_stride >= std::max<std::int64_t>(1, m.rows)) {
        m.row_major = false;
        m.leading = column_stride;
    } else {
        return std::nullopt;
    }
    m.data = t.data_ptr<BFloat16>();
    return m;
}

// Whether a @ b, both `dims`-dimensional, is one this file computes.
bool multipliable(const Tensor& a, const Tensor& b, std::int64_t dims) {
    if (!is_bf16(a) || !is_bf16(b) || a.dim() != dims || b.dim() != dims ||
        a.size(dims - 1) != b.size(dims - 2) || (dims == 3 && a.size(0) != b.size(0))) {
        return false;  // LibTorch's kernel raises its own error for shapes that do not multiply
    }
    if (a.numel() == 0 || b.numel() == 0) {
        return false;
    }
    return as_matrices(a) && as_matrices(b);
}

// Whether two tensors may share an element (same storage, and not provably apart).
bool may_overlap(const Tensor& a, const Tensor& b) {
    return a.storage().is_alias_of(b.storage()) &&
           at::get_overlap_status(a, b) != at::MemOverlapStatus::No;
}

// Whether `out` can take a product of `sizes` as written, as LibTorch's kernel writes it: of
// those sizes (else LibTorch resizes it), in a layout it writes in place (else it writes a
// copy), its matrices apart from each other and from the operands.
bool writable(const Tensor& out, at::IntArrayRef sizes, std::initializer_list<const Tensor*> read) {
    if (!is_bf16(out) || out.sizes() != sizes) {
        return false;
    }
    const std::optional<Matrices> m = as_matrices(out);
    if (!m) {
        return false;
    }
    const std::int64_t span = (m->row_major ? m->rows - 1 : m->columns - 1) * m->leading +
                              (m->row_major ? m->columns : m->rows);
    if (m->count > 1 && m->batch_stride < span) {
        return false;
    }
    return std::none_of(read.begin(), read.end(),
                        [&](const Tensor* operand) { return may_overlap(out, *operand); });
}

// `count` contiguous values widened, eight at a time where it can: GCC's -O2 turns a loop into
// vector instructions only when it needs no remainder, as the inner one here.
void widen_line(const BFloat16* from, float* to, std::int64_t count) {
    constexpr std::int64_t kLanes = 8;
    std::int64_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
        for (std::int64_t lane = 0; lane < kLanes; ++lane) {
            to[i + lane] = static_cast<float>(from[i + lane]);
        }
    }
    for (; i < count; ++i) {
        to[i] = static_cast<float>(from[i]);
    }
}

// Rows `first` to `first + rows` of matrix `index`, widened to float32 at `to` in the matrix's
// own order (a transpose stays a transpose: BLAS reads either), as a tensor over that memory.
Tensor widen(const Matrices& m, std::int64_t index, std::int64_t first, std::int64_t rows,
             float* to) {
    const BFloat16* matrix = m.data + index * m.batch_stride;
    const auto options = at::TensorOptions().dtype(at::kFloat);
    if (m.row_major) {
        for (std::int64_t row = 0; row < rows; ++row) {
            widen_line(matrix + (first + row) * m.leading, to + row * m.columns, m.columns);
        }
        return at::from_blob(to, {rows, m.columns}, {m.columns, 1}, options);
    }
    for (std::int64_t column = 0; column < m.columns; ++column) {
        widen_line(matrix + column * m.leading + first, to + column * rows, rows);
    }
    return at::from_blob(to, {rows, m.columns}, {1, rows}, options);
}

// A bfloat16 tensor of up to 3 dimensions as strides of 3 (missing leading ones 0), read as
// `sizes`: a dimension of size 1 or absent where `sizes` has more broadcasts (stride 0).
struct Strided3 {
    std::array<std::int64_t, 3> stride{};
    BFloat16* data = nullptr;

    BFloat16* row(std::int64_t index, std::int64_t i) const {
        return data + index * stride[0] + i * stride[1];
    }
};

Strided3 strided3(const Tensor& t, const std::array<std::int64_t, 3>& sizes) {
    Strided3 s;
    s.data = t.data_ptr<BFloat16>();
    const std::int64_t missing = 3 - t.dim();
    for (std::int64_t d = 0; d < t.dim(); ++d) {
        const std::size_t to = std::size_t(d + missing);
        s.stride[to] = t.size(d) == sizes[to] ? t.stride(d) : 0;
    }
    return s;
}

// Rows `first` to `first + rows` of matrix `index` of out = alpha * product + beta * addend,
// rounded once to bfloat16; `product` is those rows in float32, packed row-major.
void narrow_into(const Strided3& out, const Strided3& addend, std::int64_t index,
                 std::int64_t first, std::int64_t rows, std::int64_t columns, const float* product,
                 float alpha, float beta) {
    const bool add = beta != 0.0F;  // beta 0 ignores the addend, NaNs included
    for (std::int64_t i = first; i < first + rows; ++i) {
        BFloat16* to = out.row(index, i);
        const BFloat16* added = add ? addend.row(index, i) : nullptr;
        for (std::int64_t j = 0; j < columns; ++j) {
            float value = alpha * *product++;
            if (add) {
                value += beta * static_cast<float>(added[j * addend.stride[2]]);
            }
            to[j * out.stride[2]] = BFloat16(value);
        }
    }
}

// The left operand and the result go through float32 in blocks of rows of about this many
// floats: the scratch is the right operand in float32 and a megabyte more, not the product's
// three operands (which for a bilstm's input projection were 26 MiB of the process's memory).
constexpr std::int64_t kBlockFloats = std::int64_t{1} << 18;
constexpr std::int64_t kFewestBlockRows = 16;  // fewer would leave BLAS a matrix-vector product

// out = alpha * (a @ b) + beta * addend, for operands that multipliable() accepts.
void product_into(const Tensor& out, const Tensor& a, const Tensor& b, float alpha = 1.0F,
                  const Tensor& addend = {}, float beta = 0.0F) {
    const Matrices left = *as_matrices(a);
    const Matrices right = *as_matrices(b);
    const std::int64_t inner = left.columns;
    const std::int64_t columns = right.columns;
    const std::int64_t block =
        std::min(left.rows, std::max(kFewestBlockRows, kBlockFloats / (inner + columns)));
    // Scratch, never a tensor: the tensor allocator sees exactly what LibTorch's kernel makes.
    const std::unique_ptr<float[]> scratch(
        new float[std::size_t(right.size() + block * (inner + columns))]);
    float* const right_floats = scratch.get();
    float* const left_floats = right_floats + right.size();
    float* const result_floats = left_floats + block * inner;
    const std::array<std::int64_t, 3> sizes{left.count, left.rows, columns};
    const Strided3 to = strided3(out, sizes);
    const Strided3 added = beta != 0.0F ? strided3(addend, sizes) : Strided3{};
    const auto options = at::TensorOptions().dtype(at::kFloat);
    for (std::int64_t index = 0; index < left.count; ++index) {
        const Tensor right_matrix = widen(right, index, 0, right.rows, right_floats);
        for (std::int64_t first = 0; first < left.rows; first += block) {
            const std::int64_t rows = std::min(block, left.rows - first);
            multiply_float32(at::from_blob(result_floats, {rows, columns}, options),
                             widen(left, index, first, rows, left_floats), right_matrix);
            narrow_into(to, added, index, first, rows, columns, result_floats, alpha, beta);
        }
    }
}

// The sizes of a @ b: a's, with b's columns.
std::vector<std::int64_t> product_sizes(const Tensor& a, const Tensor& b) {
    std::vector<std::int64_t> sizes = a.sizes().vec();
    sizes.back() = b.size(-1);
    return sizes;
}

// Whether `addend` (addmm's self) broadcasts to the product's sizes.
bool broadcasts(const Tensor& addend, at::IntArrayRef sizes) {
    return is_bf16(addend) && at::is_expandable_to(addend.sizes(), sizes);
}

// a @ b (2-D with `dims` 2, batches with 3) in a new tensor, as LibTorch's kernel makes it.
Tensor product(const Tensor& a, const Tensor& b, std::int64_t dims) {
    if (!multipliable(a, b, dims)) {
        return dims == 2 ? at::cpu::mm(a, b) : at::cpu::bmm(a, b);
    }
    Tensor out = at::cpu::empty(product_sizes(a, b), a.options());
    product_into(out, a, b);
    return out;
}

// The same into `out`.
Tensor& product_out(const Tensor& a, const Tensor& b, std::int64_t dims, Tensor& out) {
    if (!multipliable(a, b, dims) || !writable(out, product_sizes(a, b), {&a, &b})) {
        return dims == 2 ? at::cpu::mm_outf(a, b, out) : at::cpu::bmm_outf(a, b, out);
    }
    product_into(out, a, b);
    return out;
}

Tensor mm(const Tensor& self, const Tensor& mat2) {
    return product(self, mat2, 2);
}

Tensor& mm_out(const Tensor& self, const Tensor& mat2, Tensor& out) {
    return product_out(self, mat2, 2, out);
}

Tensor bmm(const Tensor& self, const Tensor& mat2) {
    return product(self, mat2, 3);
}

Tensor& bmm_out(const Tensor& self, const Tensor& mat2, Tensor& out) {
    return product_out(self, mat2, 3, out);
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const at::Scalar& beta,
             const at::Scalar& alpha) {
    if (!multipliable(mat1, mat2, 2) || !broadcasts(self, product_sizes(mat1, mat2))) {
        return at::cpu::addmm(self, mat1, mat2, beta, alpha);
    }
    Tensor out = at::cpu::empty(product_sizes(mat1, mat2), mat1.options());
    product_into(out, mat1, mat2, alpha.to<float>(), self, beta.to<float>());
    return out;
}

Tensor& addmm_out(const Tensor& self, const Tensor& mat1, const Tensor& mat2,
                  const at::Scalar& beta, const at::Scalar& alpha, Tensor& out) {
    // out may be self (an accumulation in place): each element is read before it is written.
    const bool in_place = self.is_same(out);
    if (!multipliable(mat1, mat2, 2) || !broadcasts(self, product_sizes(mat1, mat2)) ||
        !writable(out, product_sizes(mat1, mat2),
                  in_place ? std::initializer_list<const Tensor*>{&mat1, &mat2}
                           : std::initializer_list<const Tensor*>{&self, &mat1, &mat2})) {
        return at::cpu::addmm_outf(self, mat1, mat2, beta, alpha, out);
    }
    product_into(out, mat1, mat2, alpha.to<float>(), self, beta.to<float>());
    return out;
}

// The kernels, registered for the CPU.
const torch::Library* registered_kernels() {
    return replace_cpu_kernels(__FILE__, __LINE__, [](torch::Library& library) {
        library.impl("mm", TORCH_FN(mm));
        library.impl("mm.out", TORCH_FN(mm_out));
        library.impl("addmm", TORCH_FN(addmm));
        library.impl("addmm.out", TORCH_FN(addmm_out));
        library.impl("bmm", TORCH_FN(bmm));
        library.impl("bmm.out", TORCH_FN(bmm_out));
    });
}

}  // namespace

void install_bf16_products() {
    static const torch::Library* const kernels = registered_kernels();
    (void)kernels;
}

namespace {
// When the library loads (replaced_cpu_kernels.h says why).
const bool kInstalledOnLoad = (install_bf16_products(), true);
}  // namespace

}  // namespace oomlab::model
