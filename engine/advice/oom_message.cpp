// What the figures of one out-of-memory message mean (oom_message_reader.cpp reads them).
#include "oomlab/advice/oom_message.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

namespace oomlab {
namespace {

// A size as PyTorch's messages print one (c10's format_size): two decimals, in bytes up to 1 KiB,
// KiB up to 1 MiB, MiB up to 1 GiB, else GiB. The facts then quote the message's own figures.
std::string printed_size(std::int64_t value) {
    constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
    const double magnitude = std::fabs(static_cast<double>(value));
    if (magnitude <= kKiB) {
        return std::to_string(value) + " bytes";
    }
    const auto [scale, unit] = magnitude <= kMiB   ? std::pair{kKiB, "KiB"}
                               : magnitude <= kGiB ? std::pair{kMiB, "MiB"}
                                                   : std::pair{kGiB, "GiB"};
    char text[48];
    std::snprintf(text, sizeof text, "%.2f %s", static_cast<double>(value) / scale, unit);
    return text;
}

std::string bytes(std::optional<std::int64_t> value) {
    return value ? printed_size(*value) : "(not given)";
}

// What the message's backend calls its devices and the tools that go with it.
struct Backend {
    std::string device;      // "GPU 0", "XPU 0", "NPU 3"; "the GPU" when no number is given
    std::string smi;         // what lists the processes on a device and their memory
    std::string visible;     // the variable that picks the devices a process sees
    std::string alloc_conf;  // the variable the caching allocator's settings are read from
    std::string blocking;    // what makes kernels report their errors where they fail; "" none
    bool nvidia = false;     // CUDA itself: MIG and vGPU slices, Windows' display driver
};

Backend backend_of(const OomMessage& m) {
    const bool xpu = m.backend == "XPU", npu = m.backend == "NPU", hip = m.backend == "HIP";
    const std::string kind = xpu ? "XPU" : npu ? "NPU" : "GPU";
    return {m.device_index >= 0 ? kind + " " + std::to_string(m.device_index) : "the " + kind,
            xpu   ? "xpu-smi"
            : npu ? "npu-smi info"
            : hip ? "rocm-smi"
                  : "nvidia-smi",
            xpu   ? "ZE_AFFINITY_MASK"
            : npu ? "ASCEND_RT_VISIBLE_DEVICES"
            : hip ? "HIP_VISIBLE_DEVICES"
                  : "CUDA_VISIBLE_DEVICES",
            // torch_npu reads its own; ROCm's PyTorch reads CUDA's name too.
            npu ? "PYTORCH_NPU_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF",
            hip          ? "AMD_SERIALIZE_KERNEL=3"
            : xpu || npu ? ""
                         : "CUDA_LAUNCH_BLOCKING=1",
            !xpu && !npu && !hip};
}

// Half the last digit of a figure PyTorch printed (two decimals of its unit): how far a
// difference of printed figures may be from the true one.
std::int64_t rounding_of(std::int64_t printed) {
    constexpr std::int64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
    return printed <= kKiB   ? 0
           : printed <= kMiB ? kKiB / 200
           : printed <= kGiB ? kMiB / 200
                             : kGiB / 200;
}

// A difference of printed figures: said as none where it is within their rounding, not as the
// "1 bytes" the subtraction leaves.
std::string difference(std::int64_t value, std::int64_t rounding) {
    return value > rounding ? printed_size(value)
                            : "at most " + printed_size(std::max<std::int64_t>(rounding, 1)) +
                                  " (the printed figures' rounding)";
}

// "asked for 20.00 MiB on GPU 0 of 79.14 GiB, of which 3.56 MiB was free": the figures given.
std::string asked_on(const OomMessage& m, const std::string& gpu) {
    std::string fact = m.requested ? "asked for " + printed_size(*m.requested)
                                   : std::string("asked for an allocation (its size is not given)");
    fact += " on " + gpu;
    if (m.total) {
        fact += " of " + printed_size(*m.total);
    }
    if (m.free) {
        fact += (m.total ? ", of which " : "; ") + printed_size(*m.free) + " was free";
    }
    return fact;
}

// The segment PyTorch's caching allocator opens for a request nothing cached holds
// (CUDACachingAllocator's allocation size): 2 MiB for up to 1 MiB, 20 MiB below 10 MiB, else
// the request rounded up to 2 MiB. What "free" must hold for the request to fit.
std::int64_t segment_for(std::int64_t requested) {
    constexpr std::int64_t kMiB = 1 << 20;
    if (requested <= kMiB) {
        return 2 * kMiB;
    }
    if (requested < 10 * kMiB) {
        return 20 * kMiB;
    }
    return (requested + 2 * kMiB - 1) / (2 * kMiB) * (2 * kMiB);
}

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
    e.summary = "Out of memory outside PyTorch's allocator: " + failure + ", because " + on.device +
                " was full: of this process's tensors and cache, or of another process. The "
                "driver and the libraries allocate for themselves (the context, handles, "
                "workspaces, buffers), beside PyTorch's allocator.";
    e.tries.push_back("see what holds " + on.device + ": " + on.smi +
                      " lists each process and its memory; a process left from an earlier "
                      "run, or every rank making a context on device 0, is common");
    e.tries.push_back(
        "give each process its own device before it first uses one: "
        "torch.cuda.set_device(local_rank) (torch.xpu, torch.npu), or " +
        on.visible);
    e.tries.push_back(
        "leave room for the libraries: a smaller batch, or "
        "torch.cuda.set_per_process_memory_fraction(0.9) so the caching allocator stops short "
        "of the whole device");
    e.tries.push_back(
        "find the call that failed: errors are reported at a later call, so run once with "
        "CUDA_LAUNCH_BLOCKING=1");
}

// Where the memory that neither PyTorch's blocks nor the free memory account for went, as far
// as the message tells: this process outside PyTorch, other processes, or (not told apart) both.
struct Elsewhere {
    std::int64_t all = 0;           // total - free - what PyTorch reserved
    std::int64_t this_process = 0;  // of it, in this process outside PyTorch's allocator
    std::int64_t others = 0;        // of it, in other processes
    bool split = false;             // the message printed this process's own figure
    // How far each may be from the truth: differences of rounded figures.
    std::int64_t all_rounding = 0, this_process_rounding = 0, others_rounding = 0;
};

// How far what PyTorch reserved may be from its printed figures' sum.
std::int64_t reserved_rounding(const OomMessage& m, std::int64_t reserved) {
    const std::int64_t allocated = m.allocated.value_or(0);
    return m.reserved_from_total ? rounding_of(reserved)
                                 : rounding_of(allocated) + rounding_of(reserved - allocated);
}

Elsewhere elsewhere_of(const OomMessage& m, std::int64_t reserved) {
    Elsewhere where;
    where.all = std::max<std::int64_t>(*m.total - *m.free - reserved, 0);
    const std::int64_t device_rounding = rounding_of(*m.total) + rounding_of(*m.free);
    where.all_rounding = device_rounding + reserved_rounding(m, reserved);
    if (m.this_process && *m.this_process >= reserved && *m.this_process <= *m.total) {
        where.split = true;
        where.this_process = *m.this_process - reserved;
        where.this_process_rounding = rounding_of(*m.this_process) + reserved_rounding(m, reserved);
        // The processes the message lists are its own figures for the others; without them,
        // what the device's figures leave.
        where.others = std::max<std::int64_t>(*m.total - *m.free - *m.this_process, 0);
        where.others_rounding = device_rounding + rounding_of(*m.this_process);
        if (!m.processes.empty()) {
            where.others = where.others_rounding = 0;
            for (const auto& process : m.processes) {
                where.others += process.second;
            }
        }
    }
    return where;
}

std::string elsewhere_fact(const OomMessage& m, const Elsewhere& where) {
    const std::string context = "the " + m.backend + " context";
    if (where.split) {
        return "this process held " + printed_size(*m.this_process) + " in all, " +
               difference(where.this_process, where.this_process_rounding) +
               " of it outside PyTorch's allocator (" + context +
               ", a few hundred MiB, and other libraries); other processes held " +
               difference(where.others, where.others_rounding);
    }
    if (m.async_pool) {
        return difference(where.all, where.all_rounding) +
               " of the GPU was not held by PyTorch's tensors: the cudaMallocAsync pool's "
               "cached memory, " +
               context +
               ", other libraries, other processes (the message does not tell them apart)";
    }
    return difference(where.all, where.all_rounding) + " of " + m.backend +
           " memory was held outside PyTorch's allocator: " + context +
           " (a few hundred MiB) and other libraries in this process, and other "
           "processes";
}

// The memory held outside this run's PyTorch, said as the message lets it be split.
std::string held_elsewhere_summary(const OomMessage& m, const Elsewhere& where,
                                   std::int64_t reserved) {
    const std::string more = ", more than this run's PyTorch held (" + printed_size(reserved) + ")";
    if (where.split) {
        return printed_size(where.all) + " of " + m.backend +
               " memory was held outside this run's PyTorch" + more + ": " +
               printed_size(where.others) + " by other processes, " +
               printed_size(where.this_process) +
               " by this process outside PyTorch's allocator (its context, other libraries).";
    }
    if (m.async_pool) {
        return printed_size(where.all) + " of " + m.backend +
               " memory was not held by PyTorch's tensors" + more +
               ": another process, another library in this process, or the cudaMallocAsync "
               "pool's cached memory holds memory this run needed.";
    }
    return printed_size(where.all) + " of " + m.backend +
           " memory was held outside PyTorch's allocator" + more +
           ": another process, or another library in this process, holds memory this "
           "run needed.";
}

// Triton's kernel asked more shared memory of one block than the GPU has: its autotuning
// (torch.compile's) tries configurations, and drops those that do not fit.
void explain_shared_memory(OomExplanation& e) {
    const OomMessage& m = e.message;
    e.verdict = OomVerdict::TooLarge;
    const std::string figures = m.requested && m.most_at_once
                                    ? " (" + std::to_string(*m.requested) + " bytes, of " +
                                          std::to_string(*m.most_at_once) + " a block has)"
                                    : "";
    e.facts.push_back(m.failure + figures);
    e.summary = "Not the GPU's memory: " + m.failure + figures +
                ". No batch size or allocator setting changes it; while torch.compile's autotuning "
                "tries kernels, such a configuration is skipped and another one runs.";
    e.tries.push_back(
        "if the program went on, nothing: the autotuner logs the configurations it drops");
    e.tries.push_back(
        "if it stopped there: smaller block sizes or num_stages for that kernel (its own "
        "message names them), or torch.compile without mode=\"max-autotune\"");
}

void explain_cuda(OomExplanation& e) {
    const OomMessage& m = e.message;
    const Backend on = backend_of(m);
    const std::string& gpu = on.device;
    for (const std::string& figure : m.set_aside) {
        e.facts.push_back("set aside: " + figure +
                          " (PyTorch printed a counter gone wrong); the other figures are used");
    }
    if (m.driver_level) {
        explain_driver_level(e, on);
        return;
    }
    if (m.shared_memory) {
        explain_shared_memory(e);
        return;
    }
    const std::int64_t requested = m.requested.value_or(0);
    // Figures that do not add up (more allocated than reserved, more free than the whole GPU)
    // are said to, and read so that no share comes out negative.
    const std::int64_t allocated = m.allocated.value_or(0);
    const std::int64_t reserved = std::max(m.reserved.value_or(allocated), allocated);
    const std::int64_t unallocated = m.allocated ? reserved - allocated : 0;
    // What neither PyTorch's blocks nor the free memory account for: the CUDA context, other
    // libraries in this process, other processes.
    const bool known_elsewhere = m.total.has_value() && m.free.has_value();
    const Elsewhere where = known_elsewhere ? elsewhere_of(m, reserved) : Elsewhere{};
    const std::int64_t elsewhere = where.all;
    const std::int64_t limit = m.allowed.value_or(m.total.value_or(0));

    e.facts.push_back(asked_on(m, gpu));
    if (m.allocated && m.reserved) {
        e.facts.push_back("PyTorch's tensors held " + printed_size(*m.allocated) +
                          "; its allocator " + printed_size(*m.reserved) + " in all, " +
                          (m.reserved_from_total
                               ? difference(unallocated, reserved_rounding(m, reserved))
                               : printed_size(unallocated)) +
                          " of it cached but free (reserved, unallocated)");
    } else if (m.allocated || m.reserved) {
        e.facts.push_back(m.allocated ? "PyTorch's tensors held " + printed_size(*m.allocated)
                                      : "PyTorch's allocator held " + printed_size(*m.reserved));
    }
    if (m.allocated && m.reserved && *m.reserved < *m.allocated) {
        e.facts.push_back(
            "the figures do not add up: the allocator reserved less than its "
            "tensors held; read as " +
            printed_size(allocated) + " reserved");
    }
    if (known_elsewhere && *m.free > *m.total) {
        e.facts.push_back("the figures do not add up: more was free than the GPU holds");
    }
    if (m.total && allocated > *m.total) {
        e.facts.push_back(
            "the figures do not add up: PyTorch's tensors held more than the GPU holds (on "
            "Windows the driver lends the GPU the host's memory, shared GPU memory, when its "
            "own is full)");
    }
    if (m.allowed) {
        e.facts.push_back("this process may use " + printed_size(*m.allowed) +
                          " (torch.cuda.set_per_process_memory_fraction)");
    }
    if (known_elsewhere) {
        e.facts.push_back(elsewhere_fact(m, where));
    }
    if (m.this_process && *m.this_process < reserved) {
        e.facts.push_back("this process's own figure, " + printed_size(*m.this_process) +
                          ", is less than PyTorch reserved in it: the driver could not see this "
                          "process (a container, WSL), so what is held outside PyTorch is not "
                          "split between it and others");
    }
    if (m.private_pools && *m.private_pools > 0) {
        e.facts.push_back(printed_size(*m.private_pools) +
                          " of the tensors' memory was in private pools (CUDA graphs, "
                          "torch.cuda.MemPool), whose cached memory serves only their own "
                          "requests");
    }
    for (const auto& [pid, held] : m.processes) {
        e.facts.push_back("process " + std::to_string(pid) + " held " + printed_size(held));
    }
    // A process the driver lists but PyTorch did not call "this process" (a container's own
    // process ids) is this one where it holds what PyTorch reserved and a context beside it.
    constexpr std::int64_t kMostContext = std::int64_t(2) << 30;
    if (m.processes.size() == 1 && !m.this_process && m.reserved &&
        m.processes[0].second >= reserved && m.processes[0].second - reserved <= kMostContext) {
        e.facts.push_back("process " + std::to_string(m.processes[0].first) +
                          " is most likely this one (seen from a container, its id differs): it "
                          "held what PyTorch reserved and " +
                          printed_size(m.processes[0].second - reserved) +
                          " more, a CUDA context and libraries");
    }

    if (m.most_at_once && requested > *m.most_at_once) {
        e.verdict = OomVerdict::TooLarge;
        e.summary = "One allocation of " + printed_size(requested) + " is larger than the " +
                    printed_size(*m.most_at_once) + " this " + m.backend +
                    " platform allocates at once, whatever is free.";
        e.tries.push_back(
            "split the tensor that needs it: process the batch in chunks, or the sequence in "
            "pieces, so that no one tensor passes " +
            printed_size(*m.most_at_once));
        e.tries.push_back(
            "a newer driver and PyTorch: the limit on one allocation is the driver's, and "
            "newer ones allow larger allocations");
        return;
    }
    if (limit > 0 && requested > limit) {
        e.verdict = OomVerdict::TooLarge;
        e.summary = "One allocation of " + printed_size(requested) + " is larger than " +
                    (m.allowed ? "what this process may use" : "the whole GPU") + " (" +
                    printed_size(limit) + "): no setting of the allocator can hold it.";
        e.tries.push_back(
            "make that tensor smaller: a smaller batch or sequence length (it is "
            "likely an activation or a logits tensor of batch x length x width)");
        e.tries.push_back(
            "split the work that makes it: process the batch in chunks, or compute "
            "the loss over the vocabulary in pieces");
        return;
    }
    // The cudaMallocAsync backend asks its pool for the request itself, not a segment.
    const std::int64_t needed = requested <= 0 ? 0
                                : m.async_pool ? requested
                                               : segment_for(requested);
    // A limit on the process, reached: what it reserved and the segment the request needs pass
    // it, though the device itself may have had more.
    if (m.allowed && needed > 0 && reserved + needed > *m.allowed &&
        (!m.total || *m.allowed < *m.total)) {
        e.verdict = OomVerdict::LimitReached;
        e.summary = "This process reached the limit set on it: PyTorch held " +
                    printed_size(reserved) + " of the " + printed_size(*m.allowed) +
                    " it may use, and the " + printed_size(requested) + " asked for did not fit" +
                    (m.total ? " (the GPU holds " + printed_size(*m.total) + ")" : "") + ".";
        e.tries.push_back(
            "raise or remove the limit: torch.cuda.set_per_process_memory_fraction (or the "
            "framework's setting that calls it, such as a memory fraction in its config)");
        if (unallocated >= requested) {
            e.tries.push_back(
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: " + printed_size(unallocated) +
                " of what it held was cached but free, in pieces too small for the request");
        }
        e.tries.push_back("or make the work fit the limit: a smaller batch, mixed precision");
        return;
    }
    // The device had room for the request and the segment it opens: the device was not full.
    if (m.free && needed > 0 && *m.free >= needed) {
        e.verdict = OomVerdict::DeviceNotFull;
        e.summary = "The device was not full: " + printed_size(*m.free) + " was free when " +
                    printed_size(requested) +
                    " was asked for, so the device's memory was not what ran out. What refuses an "
                    "allocation then: a limit on this process, memory another process took "
                    "between the failure and the message, Windows' display driver, or a fault "
                    "of the driver.";
        // The driver maps memory in 2 MiB pages and keeps some for itself: at a margin of a
        // few MiB the device may have been full after all.
        constexpr std::int64_t kSmallMargin = std::int64_t(8) << 20;
        if (*m.free - needed < kSmallMargin) {
            e.summary += " The margin was only " + printed_size(*m.free - needed) +
                         " over the segment of " + printed_size(needed) +
                         " the request opens: the driver's own needs may have taken it.";
        }
        if (m.total && where.others > *m.total / 10) {
            e.summary += " Other processes held " + printed_size(where.others) + " of the " +
                         printed_size(*m.total) + ": what they took is the likeliest cause.";
        }
        // Intel's GPUs allocate at most 4 GiB at once unless the program asks for more.
        constexpr std::int64_t kXpuMostAtOnce = std::int64_t(4) << 30;
        if (m.backend == "XPU" && requested >= kXpuMostAtOnce) {
            e.tries.push_back(
                "Intel's GPUs allocate at most 4 GiB at once by default, whatever is free: "
                "UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 lifts it, or split the tensor that "
                "needs " +
                printed_size(requested));
        }
        e.tries.push_back(
            "a limit on this process: look for torch.cuda.set_per_process_memory_fraction (or "
            "a framework's memory fraction setting), and for a limit on the container" +
            std::string(on.nvidia ? " or a MIG or vGPU slice smaller than the GPU" : ""));
        e.tries.push_back(
            "another process: run " + on.smi +
            " while it runs; several processes starting at once "
            "(ranks, data-loading workers touching CUDA) take memory between the failure and "
            "the message");
        if (on.nvidia) {
            e.tries.push_back(
                "on Windows, the display driver (WDDM) limits and moves what one process may "
                "hold: close other programs that use the GPU, or use a GPU that drives no "
                "display");
        }
        e.tries.push_back("a driver fault: update the driver" +
                          (on.blocking.empty() ? std::string()
                                               : ", and run once with " + on.blocking +
                                                     " to find the call that failed"));
        return;
    }
    const bool fragmented = unallocated >= requested && requested > 0;
    const auto fragmentation_tries = [&] {
        if (m.cached_wording) {  // 1.0 to 1.4, by its wording: neither setting yet
            e.tries.push_back(
                "a newer PyTorch: 1.10 and later take PYTORCH_CUDA_ALLOC_CONF="
                "max_split_size_mb:128 (large blocks are not split for small tensors), 2.0 and "
                "later expandable_segments:True (freed memory joins into large blocks)");
            return;
        }
        if (m.pytorch_major != 1 || m.backend == "NPU") {  // torch_npu words it as 1.x did
            e.tries.push_back(on.alloc_conf +
                              "=expandable_segments:True (PyTorch 2.0 and later): segments "
                              "grow in place, so freed memory joins into large blocks");
        }
        if (m.pytorch_major != 2 && on.alloc_conf == "PYTORCH_CUDA_ALLOC_CONF") {
            e.tries.push_back(
                "on PyTorch 1.10 to 1.13, PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128: "
                "large blocks are not split for small tensors");
        }
    };
    // Others holding more of the GPU than this run's PyTorch is the first thing to change; more
    // than a CUDA context and libraries hold (1 GiB, or a quarter of a smaller device).
    if (known_elsewhere && elsewhere > reserved &&
        elsewhere > std::max<std::int64_t>(*m.total / 10,
                                           std::min<std::int64_t>(1LL << 30, *m.total / 4))) {
        e.verdict = OomVerdict::HeldElsewhere;
        e.summary = held_elsewhere_summary(m, where, reserved);
        e.tries.push_back("see what holds it: " + on.smi + " lists each process and its memory");
        e.tries.push_back(
            "stop the other process (a notebook kernel, an earlier run, a server), "
            "or use another device (" +
            on.visible + ")");
        if (m.async_pool) {
            e.tries.push_back(
                "torch.cuda.empty_cache() gives the cudaMallocAsync pool's cached memory back to "
                "the device, if that is where it is");
        }
        if (fragmented) {
            fragmentation_tries();  // also: the cached memory would have held this request
        }
        return;
    }
    // More than this process could have had with every tensor freed: no setting and no smaller
    // batch of the rest makes room for it.
    if (known_elsewhere && m.reserved && requested > *m.free + reserved) {
        e.verdict = OomVerdict::TooLarge;
        e.summary = "One allocation of " + printed_size(requested) +
                    " is more than this process could have had with every tensor freed: " +
                    printed_size(*m.free) + " free and the " + printed_size(reserved) +
                    " PyTorch held; the rest of the " + printed_size(*m.total) +
                    " was the context, libraries and other processes'.";
        e.tries.push_back(
            "make that tensor smaller: a smaller batch or sequence length (it is likely an "
            "activation or a logits tensor of batch x length x width)");
        e.tries.push_back(
            "split the work that makes it: process the batch in chunks, or compute the loss "
            "over the vocabulary in pieces");
        return;
    }
    if (fragmented) {
        e.verdict = OomVerdict::Fragmentation;
        e.summary = "Fragmentation: PyTorch's allocator held " + printed_size(unallocated) +
                    " cached but free, more than the " + printed_size(requested) +
                    " asked for, but in pieces none of which is large enough.";
        fragmentation_tries();
        e.tries.push_back(
            "keep tensor sizes steady from step to step (pad to a fixed or bucketed "
            "length): blocks of one size are reused whole");
        return;
    }
    e.verdict = OomVerdict::OutOfMemory;
    e.summary =
        !m.failure.empty()
            ? "Out of memory, most likely: " + m.failure + "."
            : std::string("Out of memory: ") +
                  (m.allocated ? "the tensors alive held " + printed_size(*m.allocated) + ", and "
                               : "") +
                  (m.requested ? "the next " + printed_size(*m.requested)
                               : "the next allocation (its size is not given)") +
                  " did not fit in what was left.";
    e.tries.push_back(
        "a smaller batch: activations grow with it (keep the effective batch with "
        "gradient accumulation)");
    e.tries.push_back(
        "mixed precision (bf16, or fp16 with a grad scaler): activations take half "
        "the memory");
    e.tries.push_back(
        "activation checkpointing: blocks keep only their inputs and recompute in "
        "backward");
    e.tries.push_back(
        "measure where it goes: oomlab-cli estimate and run show the breakdown for "
        "its own models, and torch.cuda.memory._record_memory_history for yours");
}

// MPS's size as it printed it: 1024-based, named "GB" and "MB" by older builds.
std::string mps_size(const OomMessage& m, std::optional<std::int64_t> value) {
    std::string text = bytes(value);
    if (m.decimal_unit_names && value) {
        const std::size_t unit = text.find("iB");
        text = unit == std::string::npos ? text : text.erase(unit, 1);
    }
    return text;
}

void explain_host(OomExplanation& e) {
    const OomMessage& m = e.message;
    const bool mps = m.device == OomMessage::Device::Mps;
    for (const std::string& figure : m.set_aside) {
        e.facts.push_back("set aside: " + figure + "; the other figures are used");
    }
    const char* where = mps ? "the Apple GPU (MPS)" : "the host";
    // The CPU's allocator prints its request in bytes: quoted so, and in a unit beside it.
    const std::string asked =
        !m.requested ? std::string("memory (the size is not given)")
        : mps        ? mps_size(m, m.requested)
                     : std::to_string(*m.requested) + " bytes (" + printed_size(*m.requested) + ")";
    e.facts.push_back("asked " + std::string(where) + " for " + asked +
                      (m.system_error ? " and was refused: " + *m.system_error : ""));
    if (mps) {
        e.facts.push_back("MPS held " + mps_size(m, m.allocated) + " of the " +
                          mps_size(m, m.allowed) + " it may use; other allocations " +
                          mps_size(m, m.other_allocations) +
                          " (what Metal holds for this "
                          "process beyond the tensors: PyTorch's MPS cache and Metal's own)");
    }
    const bool huge = m.requested && *m.requested > (1LL << 40);
    // On MPS, other allocations holding more than the tensors are what to look at first.
    const bool others_lead =
        mps && m.other_allocations && m.allocated && *m.other_allocations > *m.allocated;
    e.verdict = huge ? OomVerdict::TooLarge : OomVerdict::OutOfMemory;
    e.summary = huge ? "One allocation of " + printed_size(*m.requested) +
                           " is larger than any machine's memory: a size computed wrong (a "
                           "shape multiplied out, a negative size read as unsigned)."
                : others_lead
                    ? "Out of memory on the Apple GPU (MPS): other allocations held " +
                          mps_size(m, m.other_allocations) + " of the " + mps_size(m, m.allowed) +
                          " it may use, more than the tensors' " + mps_size(m, m.allocated) +
                          ": memory Metal holds for this process outside its live tensors "
                          "(PyTorch's MPS cache and Metal's own)."
                    : std::string("Out of memory on ") + where +
                          ": the process asked for more than the system would give.";
    if (others_lead) {
        e.tries.push_back(
            "torch.mps.empty_cache() returns PyTorch's MPS cache; if other allocations stay, "
            "print torch.mps.driver_allocated_memory() step by step to see when they grow");
    }
    e.tries.push_back(huge ? "print the shapes of the tensors made just before: one of them is "
                             "not what you meant"
                           : "a smaller batch, or fewer data-loading workers (each holds its "
                             "own copies)");
    if (m.windows_host && !huge) {
        e.tries.push_back(
            "on Windows, a larger page file (System → Advanced system settings → Performance → "
            "Virtual memory): an allocation is refused when memory and the page file are full");
    }
    if (mps) {
        e.tries.push_back(
            "PYTORCH_MPS_HIGH_WATERMARK_RATIO raises the limit (0.0 removes it, "
            "at the risk of the whole system slowing)");
    }
}

// A size asked for past any device's memory (set aside by the reader): a size computed wrong.
bool explain_impossible_request(OomExplanation& e) {
    const OomMessage& m = e.message;
    const auto request = std::find_if(m.set_aside.begin(), m.set_aside.end(), [](const auto& item) {
        return item.rfind("the size asked for", 0) == 0;
    });
    if (m.requested || request == m.set_aside.end()) {
        return false;
    }
    e.verdict = OomVerdict::TooLarge;
    e.facts.push_back(*request);
    e.summary =
        "The allocation asked for is larger than any machine's memory: a size computed wrong (a "
        "shape multiplied out, a negative size read as unsigned).";
    e.tries.push_back(
        "print the shapes of the tensors made just before: one of them is not what "
        "you meant");
    return true;
}

}  // namespace

OomExplanation explain_oom(const OomMessage& message) {
    OomExplanation explanation;
    explanation.message = message;
    if (explain_impossible_request(explanation)) {
        return explanation;
    }
    if (message.device == OomMessage::Device::Cuda) {
        explain_cuda(explanation);
    } else {
        explain_host(explanation);
    }
    return explanation;
}

const char* oom_verdict_name(OomVerdict verdict) {
    switch (verdict) {
        case OomVerdict::Fragmentation:
            return "fragmentation";
        case OomVerdict::HeldElsewhere:
            return "held_elsewhere";
        case OomVerdict::TooLarge:
            return "too_large";
        case OomVerdict::LimitReached:
            return "limit_reached";
        case OomVerdict::DeviceNotFull:
            return "device_not_full";
        case OomVerdict::OutsideAllocator:
            return "outside_allocator";
        case OomVerdict::OutOfMemory:
            break;
    }
    return "out_of_memory";
}

std::string oom_explanation_json(const OomExplanation& e) {
    using OrderedJson = nlohmann::ordered_json;
    const auto figure = [](const std::optional<std::int64_t>& value) {
        return value ? OrderedJson(*value) : OrderedJson(nullptr);
    };
    const OomMessage& m = e.message;
    OrderedJson processes = OrderedJson::array();
    for (const auto& [pid, held] : m.processes) {
        processes.push_back({{"pid", pid}, {"bytes", held}});
    }
    const char* device = m.device == OomMessage::Device::Cuda  ? "cuda"
                         : m.device == OomMessage::Device::Mps ? "mps"
                                                               : "cpu";
    const OrderedJson document = {{"verdict", oom_verdict_name(e.verdict)},
                                  {"pytorch_major", m.pytorch_major},
                                  {"backend", m.backend},
                                  {"driver_level", m.driver_level},
                                  {"summary", e.summary},
                                  {"device", device},
                                  {"device_index", m.device_index},
                                  {"requested_bytes", figure(m.requested)},
                                  {"total_bytes", figure(m.total)},
                                  {"free_bytes", figure(m.free)},
                                  {"allocated_bytes", figure(m.allocated)},
                                  {"reserved_bytes", figure(m.reserved)},
                                  {"allowed_bytes", figure(m.allowed)},
                                  {"private_pools_bytes", figure(m.private_pools)},
                                  {"this_process_bytes", figure(m.this_process)},
                                  {"processes", processes},
                                  {"set_aside", m.set_aside},
                                  {"facts", e.facts},
                                  {"tries", e.tries}};
    return document.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

}  // namespace oomlab
