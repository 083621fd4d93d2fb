// The host's (the CPU's) and Apple's GPU's (MPS) out-of-memory messages explained
// (oom_explain.h).
#include "oom_explain.h"

namespace oomlab::oom_explain {
namespace {

// MPS's size as it printed it: 1024-based, named "GB" and "MB" by older builds.
std::string mps_size(const OomMessage& m, std::optional<std::int64_t> value) {
    std::string text = printed_or_not_given(value);
    if (m.decimal_unit_names && value) {
        const std::size_t unit = text.find("iB");
        text = unit == std::string::npos ? text : text.erase(unit, 1);
    }
    return text;
}

// One Metal buffer past the device's maxBufferLength: the pool was not full, and no watermark
// ratio moves that limit.
void explain_mps_buffer(OomExplanation& e, const std::string& asked) {
    e.verdict = OomVerdict::TooLarge;
    e.summary = "One tensor of " + asked +
                " is larger than the largest buffer Metal allows on this Mac's GPU (its "
                "maxBufferLength, which depends on the Mac): how full the memory was does not "
                "matter, and PYTORCH_MPS_HIGH_WATERMARK_RATIO does not change this limit.";
    e.tries.push_back(
        "make that one tensor smaller: the operation in the traceback on fewer items at a time "
        "(a smaller batch, image size or number of frames; attention in slices; a VAE decoded "
        "in tiles)");
    e.tries.push_back("half precision (float16), where the model allows: the tensor halves");
    e.tries.push_back(
        "run that step on the CPU (.to(\"cpu\")), where the machine's memory holds it: the CPU "
        "has no such limit on one tensor");
}

// The sum that passed MPS's limit, where the message gives its parts.
std::string mps_sum(const OomMessage& m) {
    if (!m.allocated || !m.other_allocations || !m.requested || !m.allowed) {
        return "";
    }
    const std::int64_t sum = *m.allocated + *m.other_allocations + *m.requested;
    return ": " + mps_size(m, m.allocated) + " allocated, " + mps_size(m, m.other_allocations) +
           " other allocations and the " + mps_size(m, m.requested) + " asked for make " +
           mps_size(m, sum) + ", past the " + mps_size(m, m.allowed) +
           " PyTorch's MPS allocator allows (its high watermark)";
}

}  // namespace

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
        : !m.requested_printed.empty()
            ? m.requested_printed + " (" + std::to_string(*m.requested) + " bytes)"
            : std::to_string(*m.requested) + " bytes (" + printed_size(*m.requested) + ")";
    e.facts.push_back("asked " + std::string(where) + " for " + asked +
                      (m.system_error ? " and was refused: " + *m.system_error : ""));
    if (mps && !m.failure.empty()) {
        explain_mps_buffer(e, asked);
        return;
    }
    if (mps) {
        // "MPS allocated" is PyTorch's heaps (it gives its cache back before it fails); "other
        // allocations" is Metal's memory for the process outside them.
        e.facts.push_back("PyTorch's MPS allocator held " + mps_size(m, m.allocated) +
                          " (its tensors: it returned its cache before failing) of the " +
                          mps_size(m, m.allowed) + " it may use; other allocations " +
                          mps_size(m, m.other_allocations) +
                          " (Metal's memory for this process outside PyTorch's allocator: "
                          "MPSGraph's and other libraries')");
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
                          ": Metal's memory for this process outside PyTorch's allocator "
                          "(MPSGraph's and other libraries'), which torch.mps.empty_cache() "
                          "does not return."
                : mps && !mps_sum(m).empty()
                    ? "Out of memory on the Apple GPU (MPS)" + mps_sum(m) + "."
                    : std::string("Out of memory on ") + where +
                          ": the process asked for more than the system would give.";
    if (others_lead) {
        e.tries.push_back(
            "print torch.mps.driver_allocated_memory() beside "
            "torch.mps.current_allocated_memory() step by step: their difference is Metal's "
            "memory beyond PyTorch's tensors, and the step that makes it grow is what to "
            "change");
    }
    e.tries.push_back(huge  ? "print the shapes of the tensors made just before: one of them is "
                              "not what you meant"
                      : mps ? "a smaller batch, image size or sequence length"
                            : "a smaller batch, or fewer data-loading workers (each holds its "
                              "own copies)");
    if (m.windows_host && !huge) {
        e.tries.push_back(
            "on Windows, a larger page file (System → Advanced system settings → Performance → "
            "Virtual memory): an allocation is refused when memory and the page file are full");
    }
    if (mps) {
        // PyTorch prints "max allowed" only where the ratio is above 0.0, and reads it once.
        e.tries.push_back(
            "PYTORCH_MPS_HIGH_WATERMARK_RATIO raises the limit (0.0 removes it, at the risk of "
            "the whole system slowing)" +
            std::string(m.allowed ? "; this message printed a limit, so the ratio here was above "
                                    "0.0: set it in the environment before Python starts"
                                  : ""));
    }
}

}  // namespace oomlab::oom_explain
