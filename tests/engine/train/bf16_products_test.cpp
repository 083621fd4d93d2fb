// The engine's bfloat16 products on the CPU: LibTorch's results (summed in float32, rounded
// once), in the tensors LibTorch's own kernels allocate, for every layout the models pass.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "oomlab/measure/tracking_allocator.h"

namespace oomlab::model {
namespace {

class Bf16Products : public ::testing::Test {
protected:
    // The kernels are the engine's from the moment its model library loaded: nothing here
    // installs them.
    static void SetUpTestSuite() { memory::install_tracking_allocator(); }
};

// `rows` x `columns` in bfloat16: contiguous, a transpose, or a column block of a wider
// matrix (as the LSTM's gates are), or neither rows nor columns contiguous.
enum class Layout { Contiguous, Transposed, ColumnBlock, Strided };

torch::Tensor matrix(std::int64_t rows, std::int64_t columns, Layout layout) {
    const auto bf16 = torch::kBFloat16;
    switch (layout) {
        case Layout::Contiguous:
            return torch::randn({rows, columns}).to(bf16);
        case Layout::Transposed:
            return torch::randn({columns, rows}).to(bf16).t();
        case Layout::ColumnBlock:
            return torch::randn({rows, 3 * columns}).to(bf16).narrow(1, columns, columns);
        case Layout::Strided:
            return torch::randn({2 * rows, 2 * columns})
                .to(bf16)
                .slice(0, 0, 2 * rows, 2)
                .slice(1, 0, 2 * columns, 2);
    }
    return {};
}

// The product of the same bfloat16 values in float64, and how far a result rounded once
// to bfloat16 from a float32 sum may be from it: half a unit in bfloat16's last place (8
// significant bits), and the float32 sum's own error.
void expect_rounded_once(const torch::Tensor& result, const torch::Tensor& exact) {
    ASSERT_EQ(result.scalar_type(), torch::kBFloat16);
    ASSERT_EQ(result.sizes(), exact.sizes());
    const torch::Tensor error = (result.to(torch::kFloat64) - exact).abs();
    const torch::Tensor allowed = exact.abs() * std::ldexp(1.0, -8) + 1e-4;
    EXPECT_TRUE((error <= allowed).all().item<bool>())
        << "largest error " << (error - allowed).max().item<double>() << " over what is allowed";
}

torch::Tensor exact_product(const torch::Tensor& a, const torch::Tensor& b) {
    return torch::matmul(a.to(torch::kFloat64), b.to(torch::kFloat64));
}

// Bytes and allocations the tensor allocator saw while `multiply` ran, its result alive.
struct Allocated {
    std::int64_t bytes = 0;
    std::int64_t count = 0;
    bool operator==(const Allocated& other) const {
        return bytes == other.bytes && count == other.count;
    }
};

Allocated allocated_by(const std::function<torch::Tensor()>& multiply) {
    memory::reset_cpu_peak();
    const memory::CpuTensorStats before = memory::cpu_tensor_stats();
    const torch::Tensor result = multiply();
    const memory::CpuTensorStats after = memory::cpu_tensor_stats();
    return {after.peak_bytes - before.current_bytes, after.allocations - before.allocations};
}

TEST_F(Bf16Products, TheDispatchersCpuKernelsAreTheEngines) {
    for (const char* name : {"mm", "addmm", "bmm"}) {
        for (const char* overload : {"", "out"}) {
            const auto op =
                c10::Dispatcher::singleton().findSchema({std::string("aten::") + name, overload});
            ASSERT_TRUE(op.has_value()) << name << "." << overload;
            const std::string table = "\n" + op->dumpComputedTable();
            const std::size_t cpu = table.find("\nCPU:");
            ASSERT_NE(cpu, std::string::npos) << table;
            const std::string entry = table.substr(cpu, table.find('\n', cpu + 1) - cpu);
            EXPECT_NE(entry.find("bf16_products.cpp"), std::string::npos) << entry;
        }
    }
}

TEST_F(Bf16Products, GiveTheProductRoundedOnceForEveryLayout) {
    torch::manual_seed(5);
    for (const Layout left : {Layout::Contiguous, Layout::Transposed, Layout::ColumnBlock}) {
        for (const Layout right : {Layout::Contiguous, Layout::Transposed, Layout::ColumnBlock}) {
            SCOPED_TRACE(std::to_string(int(left)) + " @ " + std::to_string(int(right)));
            const torch::Tensor a = matrix(33, 70, left);
            const torch::Tensor b = matrix(70, 19, right);
            expect_rounded_once(torch::mm(a, b), exact_product(a, b));
            const torch::Tensor bias = torch::randn({19}).to(torch::kBFloat16);
            const torch::Tensor added = torch::addmm(bias, a, b, 0.5, 2.0);
            expect_rounded_once(added, 0.5 * bias.to(torch::kFloat64) + 2.0 * exact_product(a, b));
        }
    }
}

// A product larger than one block of rows (a megabyte of the left operand and the result in
// float32): every block lands on its own rows, a transposed left operand's included.
TEST_F(Bf16Products, ProductsOfManyRowsGoInBlocksOfRows) {
    torch::manual_seed(10);
    for (const Layout left : {Layout::Contiguous, Layout::Transposed}) {
        SCOPED_TRACE(int(left));
        const torch::Tensor a = matrix(1500, 300, left);
        const torch::Tensor b = matrix(300, 200, Layout::Transposed);
        const torch::Tensor addend = torch::randn({1500, 200}).to(torch::kBFloat16);
        expect_rounded_once(torch::addmm(addend, a, b),
                            addend.to(torch::kFloat64) + exact_product(a, b));
    }
}

TEST_F(Bf16Products, BatchesWithTransposedAndRepeatedMatrices) {
    torch::manual_seed(6);
    const torch::Tensor a = torch::randn({6, 24, 16}).to(torch::kBFloat16);
    // Attention's keys, transposed; then one matrix for every batch (a stride of 0).
    const torch::Tensor keys = torch::randn({6, 24, 16}).to(torch::kBFloat16).transpose(1, 2);
    expect_rounded_once(torch::bmm(a, keys), exact_product(a, keys));
    const torch::Tensor shared = torch::randn({1, 16, 9}).to(torch::kBFloat16).expand({6, 16, 9});
    expect_rounded_once(torch::bmm(a, shared), exact_product(a, shared));
    torch::Tensor out = torch::empty({6, 24, 9}, torch::kBFloat16);
    torch::bmm_out(out, a, shared);
    expect_rounded_once(out, exact_product(a, shared));
}

TEST_F(Bf16Products, WriteIntoBlocksAndAccumulateInPlace) {
    torch::manual_seed(7);
    const torch::Tensor a = matrix(20, 30, Layout::Transposed);
    const torch::Tensor b = matrix(30, 12, Layout::Contiguous);
    const torch::Tensor buffer = torch::randn({20, 36}).to(torch::kBFloat16);
    const torch::Tensor outside = buffer.narrow(1, 0, 12).clone();
    torch::Tensor block = buffer.narrow(1, 12, 12);
    block.fill_(std::numeric_limits<float>::quiet_NaN());  // beta 0 must not read it
    torch::addmm_out(block, block, a, b, 0.0, 1.0);
    expect_rounded_once(block, exact_product(a, b));
    const torch::Tensor first = block.to(torch::kFloat64);
    torch::addmm_out(block, block, a, b, 1.0, 1.0);  // the LSTM's second direction adds so
    expect_rounded_once(block, first + exact_product(a, b));
    torch::mm_out(block, a, b);
    expect_rounded_once(block, exact_product(a, b));
    EXPECT_TRUE(torch::equal(buffer.narrow(1, 0, 12), outside));
}

// LibTorch's own kernels with oneDNN switched off: on a CPU with AVX-512, LibTorch hands
// bfloat16 products to oneDNN, which allocates a scratch tensor beside the result (a GPU's
// cuBLAS allocates none). The engine replaces that path too, so that a run's figures are the
// same on every CPU; what it must allocate is what LibTorch's kernel does everywhere else.
class WithoutOneDnn {
public:
    WithoutOneDnn() { at::globalContext().setUserEnabledMkldnn(false); }
    ~WithoutOneDnn() { at::globalContext().setUserEnabledMkldnn(m_was); }
    WithoutOneDnn(const WithoutOneDnn&) = delete;
    WithoutOneDnn& operator=(const WithoutOneDnn&) = delete;

private:
    bool m_was = at::globalContext().userEnabledMkldnn();
};

TEST_F(Bf16Products, AllocateWhatLibTorchsKernelsAllocate) {
    torch::manual_seed(8);
    const WithoutOneDnn kernels_of_libtorchs_own;
    for (const Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Strided}) {
        SCOPED_TRACE(int(layout));
        const torch::Tensor a = matrix(64, 48, layout);
        const torch::Tensor b = matrix(48, 40, Layout::Contiguous);
        const torch::Tensor bias = torch::randn({40}).to(torch::kBFloat16);
        EXPECT_EQ(allocated_by([&] { return torch::mm(a, b); }),
                  allocated_by([&] { return at::cpu::mm(a, b); }));
        EXPECT_EQ(allocated_by([&] { return torch::addmm(bias, a, b); }),
                  allocated_by([&] { return at::cpu::addmm(bias, a, b); }));
        const torch::Tensor batch = a.unsqueeze(0).expand({3, 64, 48});
        const torch::Tensor other = b.unsqueeze(0).expand({3, 48, 40});
        EXPECT_EQ(allocated_by([&] { return torch::bmm(batch, other); }),
                  allocated_by([&] { return at::cpu::bmm(batch, other); }));
        if (layout != Layout::Strided) {  // which LibTorch copies first
            EXPECT_EQ(allocated_by([&] { return torch::mm(a, b); }).bytes, 64 * 40 * 2);
        }
    }
}

// LibTorch copies a matrix whose neither rows nor columns are contiguous before multiplying;
// its kernel keeps those (and its sums, which in Debian's LibTorch are less exact than the
// engine's: they are not held to the rounding above).
TEST_F(Bf16Products, LeaveOtherLayoutsTypesAndEmptyProductsToLibTorch) {
    torch::manual_seed(9);
    const torch::Tensor strided = matrix(33, 70, Layout::Strided);
    const torch::Tensor right = matrix(70, 19, Layout::Contiguous);
    EXPECT_TRUE(torch::equal(torch::mm(strided, right), at::cpu::mm(strided, right)));
    const torch::Tensor a = torch::randn({5, 7});
    const torch::Tensor b = torch::randn({7, 3});
    EXPECT_TRUE(torch::equal(torch::mm(a, b), at::cpu::mm(a, b)));
    const torch::Tensor none =
        torch::mm(torch::zeros({4, 0}, torch::kBFloat16), torch::zeros({0, 3}, torch::kBFloat16));
    EXPECT_TRUE(torch::equal(none, torch::zeros({4, 3}, torch::kBFloat16)));
    EXPECT_THROW(
        torch::mm(torch::zeros({2, 4}, torch::kBFloat16), torch::zeros({5, 3}, torch::kBFloat16)),
        c10::Error);
}

}  // namespace
}  // namespace oomlab::model
