// The failures outside PyTorch's caching allocator: a driver's or a library's own allocation,
// and a Triton kernel's shared memory (oom_explain.h).
#include "oom_explain.h"

namespace oomlab::oom_explain {

void explain_driver_level(OomExplanation& e, const Backend& on) {
    const OomMessage& m = e.message;
    e.verdict = OomVerdict::OutsideAllocator;
    const std::string failure =
        m.failure.empty() ? "the " + m.backend + " driver refused an allocation of its own"
                          : m.failure;
    e.facts.push_back(failure + " on " + on.device +
                      // NCCL prints its request in bytes: quoted so, and in MiB.
                      (m.requested ? " (" + std::to_string(*m.requested) + " bytes, " +
                                         printed_size(*m.requested) + ", asked for)"
                                   : "") +
                      ", outside PyTorch's caching allocator" +
                      (m.requested ? "" : ": this message gives no other figures"));
    if (m.backend == "DirectML") {  // its own allocator, on Windows: no ranks, no settings
        e.summary = "Out of memory outside PyTorch's allocator: " + failure +
                    ". torch-directml allocates each tensor through DirectX 12; none of "
                    "PyTorch's allocator settings apply.";
        e.tries.push_back("see what holds the GPU: " + on.smi +
                          "; close other programs that use it (games, browsers, other models)");
        e.tries.push_back(
            "make the work smaller: a smaller batch, image size or sequence length, or half "
            "precision where the model allows it");
        e.tries.push_back(
            "a GPU with more dedicated memory, or PyTorch's own CUDA or ROCm build where the GPU "
            "has one");
        return;
    }
    e.summary = "Out of memory outside PyTorch's allocator: " + failure + ", because " + on.device +
                " was full: of this process's tensors and cache, or of another process. The "
                "driver and the libraries allocate for themselves (the context, handles, "
                "workspaces, buffers), beside PyTorch's allocator.";
    e.tries.push_back("see what holds " + on.device + ": " + on.smi +
                      " lists each process and its memory; a process left from an earlier "
                      "run, or every rank making a context on device 0, is common");
    e.tries.push_back("give each process its own device before it first uses one: " + on.module +
                      ".set_device(local_rank), or " + on.visible);
    // The memory fraction came in 1.8: not for 0.x, and only "from 1.8" for 1.0 to 1.9.
    const std::string fraction = ", or " + on.module + ".set_per_process_memory_fraction(0.9)" +
                                 (m.before_settings ? " (PyTorch 1.8 and later)" : "") +
                                 " so the caching allocator stops short of the whole device";
    e.tries.push_back("leave room for the libraries: a smaller batch" +
                      (m.pytorch_0x ? std::string() : fraction));
    // cuDNN's own failure: its benchmark mode times every algorithm, the largest workspaces too.
    if (m.failure.find("CUDNN_STATUS_ALLOC_FAILED") != std::string::npos) {
        e.tries.push_back(
            "torch.backends.cudnn.benchmark = False: cuDNN then picks its algorithm without "
            "trying the ones whose workspaces are largest");
    }
    if (!on.blocking.empty()) {
        e.tries.push_back(
            "find the call that failed: errors are reported at a later call, so run once with " +
            on.blocking);
    }
}

// The driver could not pin host memory (page-locked, which copies to the device need to run
// asynchronously): it says "out of memory" for that too, though the device may have had room.
void explain_pinned(OomExplanation& e, const Backend& on) {
    const OomMessage& m = e.message;
    e.verdict = OomVerdict::OutsideAllocator;
    e.facts.push_back("it failed in " + m.pinning +
                      ": pinning host memory, which the driver refuses with the same words as "
                      "the device's memory");
    e.summary = "Out of pinned host memory, most likely, not " + on.device +
                "'s: the driver could not page-lock host memory for " + m.pinning +
                ". The host's memory that can be pinned is limited (under WSL 2 by far the "
                "most), and pinned batches add up with many workers.";
    e.tries.push_back(
        "pin_memory=False in the DataLoader (or no .pin_memory()): each copy to the device is "
        "then made from ordinary memory, a little slower");
    e.tries.push_back(
        "fewer batches pinned at once: fewer num_workers, a smaller prefetch_factor or batch");
    e.tries.push_back("if it still fails without pinning, " + on.device +
                      " itself was full: " + on.smi + " lists what holds it");
}

// Triton's kernel asked more shared memory of one block than the GPU has: an autotuner
// (torch.compile's, or a library's) tries configurations, and drops those that do not fit.
void explain_shared_memory(OomExplanation& e) {
    const OomMessage& m = e.message;
    e.verdict = OomVerdict::TooLarge;
    const std::string figures = m.requested && m.most_at_once
                                    ? " (" + std::to_string(*m.requested) + " bytes, of " +
                                          std::to_string(*m.most_at_once) + " a block has)"
                                    : "";
    e.facts.push_back(m.failure + figures);
    e.summary = "Not the GPU's memory: " + m.failure + figures +
                ". No batch size or allocator setting changes it. While an autotuner "
                "(torch.compile's, or Triton's @autotune in a library) tries kernels, such a "
                "configuration is skipped and another one runs; a kernel with one "
                "configuration fails.";
    if (m.no_config_fits) {  // Inductor tried them all: compiling stopped
        e.summary = "Not the GPU's memory: " + m.failure + figures +
                    ". Inductor tried each configuration of this kernel and none fit, so "
                    "compiling stopped. No batch size or allocator setting changes it.";
        if (m.kernel_kind == "persistent reduction") {
            e.tries.push_back(
                "torch._inductor.config.triton.persistent_reductions = False: this persistent "
                "reduction (triton_per_...) then loops over blocks instead of holding its whole "
                "row");
        } else if (m.kernel_kind == "matrix product") {
            e.tries.push_back(
                "torch.compile without mode=\"max-autotune\", or "
                "torch._inductor.config.max_autotune_gemm_backends = \"ATEN\": the matrix "
                "product runs as ATen's own (cuBLAS, hipBLAS), not as a Triton template");
        }
        e.tries.push_back(
            "leave the function that makes this kernel uncompiled "
            "(torch.compiler.disable), or try another PyTorch release: the configurations "
            "Inductor offers change between them");
        return;
    }
    e.tries.push_back(
        "if the program went on, nothing: the autotuner logs the configurations it drops");
    e.tries.push_back(
        "if it stopped there: smaller block sizes or num_stages for that kernel (its own "
        "message names them; for a library's kernel, a version built for this GPU), or "
        "torch.compile without mode=\"max-autotune\"");
}

}  // namespace oomlab::oom_explain
