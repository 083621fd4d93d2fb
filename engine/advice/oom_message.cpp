// What the figures of one out-of-memory message mean (oom_message_reader.cpp reads them).
#include "oomlab/advice/oom_message.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "oomlab/common/format.h"

namespace oomlab {
namespace {

std::string bytes(std::optional<std::int64_t> value) {
    return value ? format_bytes(*value) : "(not given)";
}

// "asked for 20.0 MiB on GPU 0 of 79.14 GiB, of which 3.6 MiB was free": the figures given.
std::string asked_on(const OomMessage& m, const std::string& gpu) {
    std::string fact = m.requested ? "asked for " + format_bytes(*m.requested)
                                   : std::string("asked for an allocation (its size is not given)");
    fact += " on " + gpu;
    if (m.total) {
        fact += " of " + format_bytes(*m.total);
    }
    if (m.free) {
        fact += (m.total ? ", of which " : "; ") + format_bytes(*m.free) + " was free";
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

void explain_driver_level(OomExplanation& e, const std::string& gpu) {
    const OomMessage& m = e.message;
    e.verdict = OomVerdict::OutsideAllocator;
    e.facts.push_back("the " + m.backend + " driver refused an allocation of its own on " + gpu +
                      ", outside PyTorch's caching allocator: this message gives no figures");
    e.summary = "Out of memory outside PyTorch's allocator: the " + m.backend +
                " driver could not allocate for itself (creating the context, cuBLAS or cuDNN "
                "workspaces, NCCL's buffers, a kernel's own memory) because the GPU was full: "
                "of this process's tensors and cache, or of another process.";
    e.tries.push_back(
        "see what holds the GPU: nvidia-smi (rocm-smi) lists each process and its memory; a "
        "process left from an earlier run, or every rank making a context on GPU 0, is common");
    e.tries.push_back(
        "give each process its own GPU before any CUDA call: torch.cuda.set_device(local_rank), "
        "or CUDA_VISIBLE_DEVICES");
    e.tries.push_back(
        "leave room for the libraries: a smaller batch, or "
        "torch.cuda.set_per_process_memory_fraction(0.9) so the caching allocator stops short "
        "of the whole GPU");
    e.tries.push_back(
        "find the call that failed: errors are reported at a later call, so run once with "
        "CUDA_LAUNCH_BLOCKING=1");
}

void explain_cuda(OomExplanation& e) {
    const OomMessage& m = e.message;
    const std::string gpu =
        m.device_index >= 0 ? "GPU " + std::to_string(m.device_index) : "the GPU";
    for (const std::string& figure : m.set_aside) {
        e.facts.push_back("set aside: " + figure +
                          " (PyTorch printed a counter gone wrong); the other figures are used");
    }
    if (m.driver_level) {
        explain_driver_level(e, gpu);
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
    const std::int64_t elsewhere =
        known_elsewhere ? std::max<std::int64_t>(*m.total - *m.free - reserved, 0) : 0;
    const std::int64_t limit = m.allowed.value_or(m.total.value_or(0));

    e.facts.push_back(asked_on(m, gpu));
    if (m.allocated && m.reserved) {
        e.facts.push_back("PyTorch's tensors held " + format_bytes(*m.allocated) +
                          "; its allocator " + format_bytes(*m.reserved) + " in all, " +
                          format_bytes(unallocated) +
                          " of it cached but free (reserved, unallocated)");
    } else if (m.allocated || m.reserved) {
        e.facts.push_back(m.allocated ? "PyTorch's tensors held " + format_bytes(*m.allocated)
                                      : "PyTorch's allocator held " + format_bytes(*m.reserved));
    }
    if (m.allocated && m.reserved && *m.reserved < *m.allocated) {
        e.facts.push_back(
            "the figures do not add up: the allocator reserved less than its "
            "tensors held; read as " +
            format_bytes(allocated) + " reserved");
    }
    if (known_elsewhere && *m.free > *m.total) {
        e.facts.push_back("the figures do not add up: more was free than the GPU holds");
    }
    if (m.allowed) {
        e.facts.push_back("this process may use " + format_bytes(*m.allowed) +
                          " (torch.cuda.set_per_process_memory_fraction)");
    }
    if (known_elsewhere) {
        e.facts.push_back(format_bytes(elsewhere) +
                          " of the GPU was held outside PyTorch's allocator in this process: the "
                          "CUDA context (a few hundred MiB), other libraries, other processes");
    }
    if (m.private_pools && *m.private_pools > 0) {
        e.facts.push_back(format_bytes(*m.private_pools) +
                          " of the tensors' memory was in private pools (CUDA graphs, "
                          "torch.cuda.MemPool), whose cached memory serves only their own "
                          "requests");
    }
    for (const auto& [pid, held] : m.processes) {
        e.facts.push_back("process " + std::to_string(pid) + " held " + format_bytes(held));
    }
    // A process the driver lists but PyTorch did not call "this process" (a container's own
    // process ids) is this one where it holds what PyTorch reserved and a context beside it.
    constexpr std::int64_t kMostContext = std::int64_t(2) << 30;
    if (m.processes.size() == 1 && !m.this_process && m.reserved &&
        m.processes[0].second >= reserved && m.processes[0].second - reserved <= kMostContext) {
        e.facts.push_back("process " + std::to_string(m.processes[0].first) +
                          " is most likely this one (seen from a container, its id differs): it "
                          "held what PyTorch reserved and " +
                          format_bytes(m.processes[0].second - reserved) +
                          " more, a CUDA context and libraries");
    }

    if (m.most_at_once && requested > *m.most_at_once) {
        e.verdict = OomVerdict::TooLarge;
        e.summary = "One allocation of " + format_bytes(requested) + " is larger than the " +
                    format_bytes(*m.most_at_once) + " this " + m.backend +
                    " platform allocates at once, whatever is free.";
        e.tries.push_back(
            "split the tensor that needs it: process the batch in chunks, or the sequence in "
            "pieces, so that no one tensor passes " +
            format_bytes(*m.most_at_once));
        e.tries.push_back(
            "a newer driver and PyTorch: the limit on one allocation is the driver's, and "
            "newer ones allow larger allocations");
        return;
    }
    if (limit > 0 && requested > limit) {
        e.verdict = OomVerdict::TooLarge;
        e.summary = "One allocation of " + format_bytes(requested) + " is larger than " +
                    (m.allowed ? "what this process may use" : "the whole GPU") + " (" +
                    format_bytes(limit) + "): no setting of the allocator can hold it.";
        e.tries.push_back(
            "make that tensor smaller: a smaller batch or sequence length (it is "
            "likely an activation or a logits tensor of batch x length x width)");
        e.tries.push_back(
            "split the work that makes it: process the batch in chunks, or compute "
            "the loss over the vocabulary in pieces");
        return;
    }
    const std::int64_t needed = requested > 0 ? segment_for(requested) : 0;
    // A limit on the process, reached: what it reserved and the segment the request needs pass
    // it, though the device itself may have had more.
    if (m.allowed && needed > 0 && reserved + needed > *m.allowed &&
        (!m.total || *m.allowed < *m.total)) {
        e.verdict = OomVerdict::LimitReached;
        e.summary = "This process reached the limit set on it: PyTorch held " +
                    format_bytes(reserved) + " of the " + format_bytes(*m.allowed) +
                    " it may use, and the " + format_bytes(requested) + " asked for did not fit" +
                    (m.total ? " (the GPU holds " + format_bytes(*m.total) + ")" : "") + ".";
        e.tries.push_back(
            "raise or remove the limit: torch.cuda.set_per_process_memory_fraction (or the "
            "framework's setting that calls it, such as a memory fraction in its config)");
        if (unallocated >= requested) {
            e.tries.push_back(
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: " + format_bytes(unallocated) +
                " of what it held was cached but free, in pieces too small for the request");
        }
        e.tries.push_back("or make the work fit the limit: a smaller batch, mixed precision");
        return;
    }
    // The device had room for the request and the segment it opens: the device was not full.
    if (m.free && needed > 0 && *m.free >= needed) {
        e.verdict = OomVerdict::DeviceNotFull;
        e.summary = "The device was not full: " + format_bytes(*m.free) + " was free when " +
                    format_bytes(requested) +
                    " was asked for, so the GPU's memory was not what ran out. What refuses an "
                    "allocation then: a limit on this process, memory another process took "
                    "between the failure and the message, Windows' display driver, or a fault "
                    "of the driver.";
        e.tries.push_back(
            "a limit on this process: look for torch.cuda.set_per_process_memory_fraction (or "
            "a framework's memory fraction setting), and for a limit on the container or a "
            "MIG or vGPU slice smaller than the GPU");
        e.tries.push_back(
            "another process: run nvidia-smi while it runs; several processes starting at once "
            "(ranks, data-loading workers touching CUDA) take memory between the failure and "
            "the message");
        e.tries.push_back(
            "on Windows, the display driver (WDDM) limits and moves what one process may hold: "
            "close other programs that use the GPU, or use a GPU that drives no display");
        e.tries.push_back(
            "a driver fault: update the driver, and run once with CUDA_LAUNCH_BLOCKING=1 to "
            "find the call that failed");
        return;
    }
    const bool fragmented = unallocated >= requested && requested > 0;
    const auto fragmentation_tries = [&] {
        if (m.pytorch_major != 1) {
            e.tries.push_back(
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch 2.0 and later): "
                "segments grow in place, so freed memory joins into large blocks");
        }
        if (m.pytorch_major != 2) {
            e.tries.push_back(
                "on PyTorch 1.x, PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128: "
                "large blocks are not split for small tensors");
        }
    };
    // Others holding more of the GPU than this run's PyTorch is the first thing to change.
    if (known_elsewhere && elsewhere > reserved &&
        elsewhere > std::max<std::int64_t>(*m.total / 10, 1LL << 30)) {
        e.verdict = OomVerdict::HeldElsewhere;
        e.summary = format_bytes(elsewhere) +
                    " of the GPU was held outside PyTorch's allocator in this process, more than "
                    "this run's PyTorch held: another process, or another library here, holds "
                    "memory this run needed.";
        e.tries.push_back("see what holds it: nvidia-smi lists each process and its memory");
        e.tries.push_back(
            "stop the other process (a notebook kernel, an earlier run, a server), "
            "or use another GPU (CUDA_VISIBLE_DEVICES)");
        if (fragmented) {
            fragmentation_tries();  // also: the cached memory would have held this request
        }
        return;
    }
    if (fragmented) {
        e.verdict = OomVerdict::Fragmentation;
        e.summary = "Fragmentation: PyTorch's allocator held " + format_bytes(unallocated) +
                    " cached but free, more than the " + format_bytes(requested) +
                    " asked for, but in pieces none of which is large enough.";
        fragmentation_tries();
        e.tries.push_back(
            "keep tensor sizes steady from step to step (pad to a fixed or bucketed "
            "length): blocks of one size are reused whole");
        return;
    }
    e.verdict = OomVerdict::OutOfMemory;
    e.summary =
        std::string("Out of memory: ") +
        (m.allocated ? "the tensors alive held " + format_bytes(*m.allocated) + ", and " : "") +
        (m.requested ? "the next " + format_bytes(*m.requested)
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

void explain_host(OomExplanation& e) {
    const OomMessage& m = e.message;
    for (const std::string& figure : m.set_aside) {
        e.facts.push_back("set aside: " + figure + "; the other figures are used");
    }
    const char* where = m.device == OomMessage::Device::Mps ? "the Apple GPU (MPS)" : "the host";
    e.facts.push_back(
        "asked " + std::string(where) + " for " +
        (m.requested ? format_bytes(*m.requested) : std::string("memory (the size is not given)")) +
        (m.system_error ? " and was refused: " + *m.system_error : ""));
    if (m.device == OomMessage::Device::Mps) {
        e.facts.push_back("MPS held " + bytes(m.allocated) + " of the " + bytes(m.allowed) +
                          " it may use; this process " + bytes(m.this_process) + " in all");
    }
    const bool huge = m.requested && *m.requested > (1LL << 40);
    e.verdict = huge ? OomVerdict::TooLarge : OomVerdict::OutOfMemory;
    e.summary = huge ? "One allocation of " + format_bytes(*m.requested) +
                           " is larger than any machine's memory: a size computed wrong (a "
                           "shape multiplied out, a negative size read as unsigned)."
                     : std::string("Out of memory on ") + where +
                           ": the process asked for more "
                           "than the system would give.";
    e.tries.push_back(huge ? "print the shapes of the tensors made just before: one of them is "
                             "not what you meant"
                           : "a smaller batch, or fewer data-loading workers (each holds its "
                             "own copies)");
    if (m.device == OomMessage::Device::Mps) {
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
