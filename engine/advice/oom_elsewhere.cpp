// Where the memory outside PyTorch's allocator went, as far as a message tells (oom_explain.h).
#include <algorithm>

#include "oom_explain.h"

namespace oomlab::oom_explain {
namespace {

constexpr std::int64_t kDisplaySized = std::int64_t(256) << 20;
constexpr std::int64_t kMostLibraries = std::int64_t(8) << 30;

}  // namespace

std::int64_t reserved_rounding(const OomMessage& m, std::int64_t reserved) {
    const std::int64_t allocated = m.allocated.value_or(0);
    return m.reserved_from_total ? rounding_of(reserved)
                                 : rounding_of(allocated) + rounding_of(reserved - allocated);
}

int listed_as_this_process(const OomMessage& m, std::int64_t reserved) {
    if (m.this_process || reserved <= 0) {
        return 0;
    }
    // A context and libraries beside PyTorch: 2 GiB, or a tenth of a larger device (cuDNN's
    // and NCCL's workspaces on an 80 GiB GPU).
    const std::int64_t most_beside =
        std::max<std::int64_t>(std::int64_t(2) << 30, m.total.value_or(0) / 10);
    // Or one that, were it another's, leaves less than PyTorch reserved of what was in use.
    const std::int64_t in_use =
        m.total && m.free ? *m.total - *m.free + rounding_of(*m.total) + rounding_of(*m.free) : -1;
    int found = 0;
    for (const auto& [pid, held] : m.processes) {
        if (held >= reserved &&
            (held - reserved <= most_beside || (in_use >= 0 && held + reserved > in_use))) {
            if (found != 0) {
                return 0;  // two could be: neither is said to be
            }
            found = pid;
        }
    }
    return found;
}

Elsewhere elsewhere_of(const OomMessage& m, std::int64_t reserved) {
    Elsewhere where;
    where.all = std::max<std::int64_t>(*m.total - *m.free - reserved, 0);
    const std::int64_t device_rounding = rounding_of(*m.total) + rounding_of(*m.free);
    where.all_rounding = device_rounding + reserved_rounding(m, reserved);
    where.listed = listed_as_this_process(m, reserved);
    for (const auto& [pid, held] : m.processes) {
        where.whole = pid == where.listed ? held : where.whole;
    }
    where.whole = m.this_process.value_or(where.whole);
    if (where.whole >= reserved && where.whole > 0 && where.whole <= *m.total) {
        where.split = true;
        where.this_process = where.whole - reserved;
        where.this_process_rounding = rounding_of(where.whole) + reserved_rounding(m, reserved);
        // The processes the message lists are its own figures for the others; without them,
        // what the device's figures leave.
        where.others = std::max<std::int64_t>(*m.total - *m.free - where.whole, 0);
        where.others_rounding = device_rounding + rounding_of(where.whole);
        if (!m.processes.empty()) {
            where.others = where.others_rounding = 0;
            for (const auto& [pid, held] : m.processes) {
                where.others += pid == where.listed ? 0 : held;
            }
        }
    }
    return where;
}

std::string elsewhere_fact(const OomMessage& m, const Elsewhere& where) {
    const std::string context = "the " + m.backend + " context";
    if (where.split) {
        const bool none_listed = where.listed != 0 && m.processes.size() == 1;
        return "this process held " + printed_size(where.whole) + " in all, " +
               difference(where.this_process, where.this_process_rounding) +
               " of it outside PyTorch's allocator (" + context +
               ", a few hundred MiB, and other libraries); " +
               (none_listed
                    ? "no other process was listed"
                    : "other processes held " + difference(where.others, where.others_rounding));
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

std::string held_elsewhere_summary(const OomMessage& m, const Elsewhere& where,
                                   std::int64_t reserved) {
    const std::string more = ", more than this run's PyTorch held (" + printed_size(reserved) + ")";
    if (where.split) {
        return printed_size(where.all) + " of " + m.backend +
               " memory was held outside this run's PyTorch" + more + ": " +
               difference(where.others, where.others_rounding) + " by other processes, " +
               difference(where.this_process, where.this_process_rounding) +
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

// Several other processes of one size, no more than a context's 2 GiB each: most often the
// other ranks' contexts on this device, each made before its rank chose its own.
std::optional<std::string> ranks_contexts(const DeviceReading& r) {
    constexpr std::int64_t kMostContext = std::int64_t(2) << 30;
    std::size_t alike = 0;
    std::int64_t size = 0;
    for (const auto& [pid, held] : r.m.processes) {
        if (pid != r.where.listed && held <= kMostContext && (size == 0 || held == size)) {
            size = held;
            ++alike;
        }
    }
    if (alike < 2) {
        return std::nullopt;
    }
    return "the " + std::to_string(alike) + " processes of " + printed_size(size) +
           " each are most likely other ranks' contexts on this device: each rank calls " +
           r.on.module + ".set_device(local_rank) before its first CUDA call";
}

// Memory others held that would have made room for the request: said, and what to do first.
// Several processes of one small size on this device are most often other ranks' contexts.
void others_made_the_difference(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    if (!r.known_elsewhere || r.needed <= *m.free) {
        return;
    }
    // Without this process's own figure, a context and libraries may hold up to 1.5 GiB (a
    // quarter of a small device) of what is outside PyTorch: PyTorch's kernels loaded whole,
    // before CUDA 11.7's lazy loading, took over 1 GiB on one process (the real messages 967
    // and 969: 1.35 GiB on a V100, 1.32 GiB on an A100, one process each). The cudaMallocAsync
    // pool's cache is among what it does not split: 1 GiB there.
    const std::int64_t most_context = m.async_pool ? std::int64_t(1) << 30 : std::int64_t(3) << 29;
    const std::int64_t context = std::min<std::int64_t>(most_context, *m.total / 4);
    const std::int64_t lacked = r.needed - *m.free;
    const std::int64_t others = r.where.split ? r.where.others : r.where.all - context;
    if (others < lacked) {
        return;
    }
    // A desktop's display server or a monitor holds tens of MiB: on a device full to its last
    // MiB, said, but not what to stop.
    if (r.where.split && others < kDisplaySized) {
        e.facts.push_back("other processes held " + printed_size(others) +
                          " (a desktop's or a monitor's size), more than the " +
                          printed_size(lacked) +
                          " the request lacked: the device was full to its last MiB");
        return;
    }
    if (m.async_pool) {  // the pool's own cache is among what the tensors did not hold
        e.tries.insert(e.tries.begin(),
                       "torch.cuda.empty_cache() before the step that failed: the "
                       "cudaMallocAsync pool's cached memory goes back to the device, and " +
                           r.on.smi + " shows what else holds it");
        e.tries.insert(e.tries.begin() + 1, native_allocator_try(r));
        return;
    }
    const std::string held =
        r.where.split ? "other processes held " + printed_size(others)
                      : printed_size(r.where.all) + " was held outside PyTorch's allocator";
    // NCCL's buffers and the math libraries' workspaces can take a few GiB beside a context:
    // up to kMostLibraries, where the message does not split them, both are said.
    const std::string beyond_context = r.where.split ? ""
                                       : r.where.all >= kMostLibraries
                                           ? ", far more than a context and libraries hold"
                                           : " (other processes', or this process's libraries': "
                                             "NCCL's buffers, the math libraries' workspaces; the "
                                             "message does not tell them apart)";
    e.facts.push_back(held + beyond_context + ", more than the " + printed_size(lacked) +
                      " the request lacked: without them it would have fit");
    e.summary += " Yet " + held + ", more than it lacked" + beyond_context + ".";
    e.tries.insert(e.tries.begin(),
                   ranks_contexts(r).value_or("see what else holds the device: " + r.on.smi +
                                              " lists each process; stop it, or use another "
                                              "device (" +
                                              r.on.visible + ")"));
}

}  // namespace oomlab::oom_explain
