// ATen's CPU kernels of some operators replaced by the engine's own, for the life of the
// process (bf16_products.h, bernoulli_draws.h).
#pragma once

#include <torch/library.h>

#include <cstdint>

#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::model {

// A library of `aten` kernels for the CPU, named after `file` and `line` in the dispatcher's
// table, in which `define` registers each kernel (`library.impl(name, TORCH_FN(f))`). Never
// destroyed: that would take the kernels away while a thread may still be in one. Call it when
// the library that defines the kernels loads: LibTorch's own are registered by then, and no
// thread can be inside one of these operators while the dispatcher's table changes.
template <typename Define>
const torch::Library* replace_cpu_kernels(const char* file, std::uint32_t line, Define define) {
    // Registering a kernel for a key that has one replaces it, with a warning for those who
    // did so by mistake.
    const compat::QuietWarnings quiet;
    auto* library =
        new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::CPU, file, line);
    define(*library);
    return library;
}

}  // namespace oomlab::model
