// An accelerator's out-of-memory message read as one, and its figures with what they mean
// (oom_explain.h).
#include <algorithm>

#include "oom_explain.h"

namespace oomlab::oom_explain {

DeviceReading device_reading(const OomMessage& m) {
    const std::int64_t requested = m.requested.value_or(0);
    const std::int64_t allocated = m.allocated.value_or(0);
    const std::int64_t reserved = std::max(m.reserved.value_or(allocated), allocated);
    // What neither PyTorch's blocks nor the free memory account for: the CUDA context, other
    // libraries in this process, other processes. Known where the device's figures and
    // PyTorch's are given and add up (a message cut before PyTorch's, or one whose tensors
    // passed the device on Windows' shared memory, tells nothing of it).
    const bool known_elsewhere = m.total && m.free && (m.allocated || m.reserved) &&
                                 reserved <= *m.total && *m.free <= *m.total;
    // The cudaMallocAsync backend asks its pool for the request itself, not a segment.
    const std::int64_t needed = requested <= 0 ? 0
                                : m.async_pool ? requested
                                               : segment_for(requested);
    return DeviceReading{m,
                         backend_of(m),
                         requested,
                         allocated,
                         reserved,
                         m.allocated ? reserved - allocated : 0,
                         known_elsewhere,
                         known_elsewhere ? elsewhere_of(m, reserved) : Elsewhere{},
                         m.allowed.value_or(m.total.value_or(0)),
                         needed};
}

std::string tensors_held(const OomMessage& m) {
    const std::int64_t pools = m.private_pools.value_or(0);
    if (pools <= 0 || pools > *m.allocated) {
        return printed_size(*m.allocated);
    }
    // PyTorch prints its tensors and its private pools' free blocks together as "allocated".
    return "about " + printed_size(*m.allocated - pools);
}

void add_device_facts(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    e.facts.push_back(asked_on(m, r.on.device));
    if (m.allocated && m.reserved) {
        e.facts.push_back("PyTorch's tensors held " + tensors_held(m) + "; its allocator " +
                          printed_size(*m.reserved) + " in all, " +
                          (m.reserved_from_total
                               ? difference(r.unallocated, reserved_rounding(m, r.reserved))
                               : printed_size(r.unallocated)) +
                          " of it cached but free (reserved, unallocated)");
    } else if (m.allocated || m.reserved) {
        e.facts.push_back(m.allocated ? "PyTorch's tensors held " + tensors_held(m)
                                      : "PyTorch's allocator held " + printed_size(*m.reserved));
    }
    if (m.allocated && m.reserved && *m.reserved < *m.allocated) {
        e.facts.push_back(
            "the figures do not add up: the allocator reserved less than its "
            "tensors held; read as " +
            printed_size(r.allocated) + " reserved");
    }
    if (m.total && m.free && *m.free > *m.total) {
        e.facts.push_back("the figures do not add up: more was free than the GPU holds");
    }
    if (m.total && r.allocated > *m.total) {
        e.facts.push_back(
            "the figures do not add up: PyTorch's tensors held more than the GPU holds (on "
            "Windows the driver lends the GPU the host's memory, shared GPU memory, when its "
            "own is full)");
    }
    if (m.allowed) {
        e.facts.push_back("this process may use " + printed_size(*m.allowed) + " (" + r.on.module +
                          ".set_per_process_memory_fraction)");
    }
    if (r.known_elsewhere) {
        e.facts.push_back(elsewhere_fact(m, r.where));
    }
    if (m.this_process && *m.this_process < r.reserved) {
        e.facts.push_back("this process's own figure, " + printed_size(*m.this_process) +
                          ", is less than PyTorch reserved in it: the driver could not see this "
                          "process (a container, WSL), so what is held outside PyTorch is not "
                          "split between it and others");
    }
    if (m.private_pools && *m.private_pools > 0) {
        e.facts.push_back(printed_size(*m.private_pools) + " of the " + printed_size(*m.allocated) +
                          " printed as allocated was free blocks kept in private pools (CUDA "
                          "graphs, torch.cuda.MemPool), not tensors: only those pools' own "
                          "requests can use it");
    }
    for (const auto& [pid, held] : m.processes) {
        e.facts.push_back("process " + std::to_string(pid) + " held " + printed_size(held));
    }
    // A process the driver lists but PyTorch did not call "this process" (a container's own
    // process ids) is this one where it holds what PyTorch reserved and a context beside it.
    if (r.where.listed != 0) {
        e.facts.push_back("process " + std::to_string(r.where.listed) +
                          " is most likely this one (seen from a container, its id differs): it "
                          "held what PyTorch reserved and " +
                          printed_size(r.where.this_process) +
                          (r.where.this_process > (std::int64_t(2) << 30)
                               ? " more, far more than a context: other libraries or allocators "
                                 "in this process (NCCL, cuBLAS, a serving engine's own)"
                               : " more, a CUDA context and libraries"));
    }
}

}  // namespace oomlab::oom_explain
