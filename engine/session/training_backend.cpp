// Finding and loading the training engine. It sits in the folder of this library (the build
// tree's lib/, or <prefix>/lib/oomlab once installed); OOMLAB_TRAIN_LIBRARY overrides it.
#include "oomlab/session/training_backend.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "oomlab/common/errors.h"
#include "oomlab/session/cpu_features.h"

namespace oomlab::session {
namespace {

std::string library_path() {
    if (const char* override_path = std::getenv("OOMLAB_TRAIN_LIBRARY");
        override_path && *override_path) {
        return override_path;
    }
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&training_backend), &self) == 0 || !self.dli_fname) {
        return kTrainingLibrary;  // let the dynamic loader search
    }
    const std::string own_path = self.dli_fname;
    const auto slash = own_path.rfind('/');
    return slash == std::string::npos ? kTrainingLibrary
                                      : own_path.substr(0, slash + 1) + kTrainingLibrary;
}

// OpenBLAS (the BLAS of Debian's LibTorch) picks its kernels for the processor when it is
// loaded, and takes a processor newer than it knows for an old one: Debian 12's 0.3.21 runs
// its SSE3 "Prescott" kernels on a Xeon of 2023, 2.7 times slower for the BiLSTM than its
// AVX-512 ones. Unless the user chose (OPENBLAS_CORETYPE), the kernels of what the processor
// can run are named for the load, and the variable is put back so that programs this process
// starts see their own environment. Other BLAS libraries (PyTorch's own builds use MKL) do not
// read it.
class BlasKernelsForThisProcessor {
public:
    BlasKernelsForThisProcessor() {
        if (std::getenv(kVariable)) {
            return;
        }
        const char* core = nullptr;
        if (cpu_has_avx512_core() && __builtin_cpu_supports("avx512cd")) {
            core = "SkylakeX";
        } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            core = "Haswell";
        }
        m_set = core && setenv(kVariable, core, /*overwrite=*/0) == 0;
    }
    ~BlasKernelsForThisProcessor() {
        if (m_set) {
            unsetenv(kVariable);
        }
    }
    BlasKernelsForThisProcessor(const BlasKernelsForThisProcessor&) = delete;
    BlasKernelsForThisProcessor& operator=(const BlasKernelsForThisProcessor&) = delete;

private:
    static constexpr const char* kVariable = "OPENBLAS_CORETYPE";
    bool m_set = false;
};

const TrainingBackend* load() {
    const std::string path = library_path();
    // Never unloaded: LibTorch registers global state (operators, allocators) on load.
    void* handle = nullptr;
    {
        const BlasKernelsForThisProcessor blas_kernels;
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    }
    if (!handle) {
        throw Error("cannot load the training engine " + path + ": " + dlerror() +
                    " (reinstall OOM Lab, or set OOMLAB_TRAIN_LIBRARY to the library)");
    }
    using EntryPoint = const TrainingBackend* (*)();
    const auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, kTrainingBackendSymbol));
    if (!entry) {
        throw Error("the training engine " + path + " has no entry point " +
                    kTrainingBackendSymbol + "; it belongs to another version of OOM Lab");
    }
    const TrainingBackend* backend = entry();
    if (!backend || backend->interface_version != kTrainingBackendVersion) {
        throw Error("the training engine " + path +
                    " belongs to another version of OOM Lab (interface " +
                    std::to_string(backend ? backend->interface_version : 0) + ", expected " +
                    std::to_string(kTrainingBackendVersion) + ")");
    }
    return backend;
}

}  // namespace

const TrainingBackend& training_backend() {
    // A failed load is retried on the next call (call_once does not complete on a throw).
    static std::once_flag once;
    static const TrainingBackend* backend = nullptr;
    std::call_once(once, [] { backend = load(); });
    return *backend;
}

}  // namespace oomlab::session
