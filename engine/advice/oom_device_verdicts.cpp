// The verdict of an accelerator's out-of-memory message, what it says and what to try first
// (oom_explain.h): each verdict in turn, the first whose figures hold.
#include <algorithm>
#include <optional>

#include "oom_explain.h"

namespace oomlab::oom_explain {
namespace {

constexpr std::int64_t kDriverPage = std::int64_t(2) << 20;

// What the backend calls its devices: ROCm's are GPUs too.
std::string device_kind(const OomMessage& m) {
    return m.backend == "NPU" || m.backend == "XPU" ? m.backend : "GPU";
}

void too_large_tries(OomExplanation& e) {
    const OomMessage& m = e.message;
    e.verdict = OomVerdict::TooLarge;
    if (!m.inference_app.empty()) {
        return;  // an inference application's sizes are its options' (add_inference_app_tries)
    }
    if (m.work == OomMessage::Work::LoadingWeights) {  // a weight or a buffer of the model's
        e.tries.push_back(
            "that tensor is the model's own, put on the device with it (a weight, or a buffer "
            "such as a dense matrix it keeps): in fewer bytes (bf16, quantized, sparse), split "
            "over several devices, or kept in the host's memory");
        return;
    }
    e.tries.push_back(
        "make that tensor smaller: it grows with the batch and with what each item holds (a "
        "sequence's length, an image's size, a graph's nodes); it is likely an activation or an "
        "attention matrix" +
        std::string(m.language_model ? ", or a logits tensor of batch x length x vocabulary" : ""));
    e.tries.push_back(
        "split the work that makes it: the batch in chunks, a long sequence or a large input in "
        "pieces" +
        std::string(m.language_model ? ", or the loss over the vocabulary in pieces" : ""));
}

// One request larger than the platform allocates at once, than the device, or than what the
// process may use.
bool past_the_device(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    // The platform's own words say that one allocation passed its limit, its size given or not.
    if (m.most_at_once && (!m.requested || r.requested > *m.most_at_once)) {
        e.verdict = OomVerdict::TooLarge;
        e.summary = "One allocation" +
                    (m.requested ? " of " + printed_size(r.requested) : std::string()) +
                    " is larger than the " + printed_size(*m.most_at_once) + " this " + m.backend +
                    " platform allocates at once, whatever is free" +
                    (m.requested ? "." : " (the message gives no size).");
        e.tries.push_back(
            "split the tensor that needs it: process the batch in chunks, or the sequence in "
            "pieces, so that no one tensor passes " +
            printed_size(*m.most_at_once));
        e.tries.push_back(
            m.backend == "XPU"
                ? "a newer driver and PyTorch with UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1: "
                  "Intel's extension (IPEX) on its first GPUs (Arc Alchemist) keeps the limit"
                : "a newer driver and PyTorch: the limit on one allocation is the driver's, and "
                  "newer ones allow larger allocations");
        return true;
    }
    if (r.limit <= 0 || r.requested <= r.limit) {
        return false;
    }
    const bool lent = m.windows_host && m.total && r.allocated > *m.total;
    e.summary = "One allocation of " + printed_size(r.requested) + " is larger than " +
                (m.allowed ? "what this process may use" : "the whole " + device_kind(m)) + " (" +
                printed_size(r.limit) + ")" +
                (lent ? ". Windows' driver lends the GPU the host's memory (shared GPU memory: "
                        "the tensors already held " +
                            printed_size(r.allocated) +
                            "), but slowly and not without end: make the tensor smaller."
                      : ": no setting of the allocator can hold it.");
    too_large_tries(e);
    return true;
}

// More than this process could have had with every tensor freed: no setting and no smaller
// batch of the rest makes room for it.
bool beyond_reach(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    if (!r.known_elsewhere || !m.reserved || r.requested <= *m.free + r.reserved) {
        return false;
    }
    e.summary = "One allocation of " + printed_size(r.requested) +
                " is more than this process could have had with every tensor freed: " +
                printed_size(*m.free) + " free and the " + printed_size(r.reserved) +
                " PyTorch held; the rest of the " + printed_size(*m.total) +
                " was the context, libraries and other processes'.";
    too_large_tries(e);
    return true;
}

// A limit on the process, reached: what it reserved and the segment the request needs pass
// it, though the device itself may have had more.
bool limit_reached(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    if (!m.allowed || r.needed <= 0 || r.reserved + r.needed <= *m.allowed ||
        (m.total && *m.allowed >= *m.total)) {
        return false;
    }
    e.verdict = OomVerdict::LimitReached;
    e.summary = "This process reached the limit set on it: PyTorch held " +
                printed_size(r.reserved) + " of the " + printed_size(*m.allowed) +
                " it may use, and the " + printed_size(r.requested) + " asked for did not fit" +
                (m.total ? " (the GPU holds " + printed_size(*m.total) + ")" : "") + ".";
    e.tries.push_back(
        "raise or remove the limit: " + r.on.module +
        ".set_per_process_memory_fraction (or the "
        "framework's setting that calls it, such as a memory fraction in its config)");
    if (r.unallocated >= r.requested) {
        e.tries.push_back(r.on.alloc_conf +
                          "=expandable_segments:True: " + printed_size(r.unallocated) +
                          " of what it held was cached but free, in pieces too small for the "
                          "request");
    }
    e.tries.push_back("or make the work fit the limit: " + hold_less_words(m));
    return true;
}

// Intel's GPUs allocate at most 4 GiB at once unless the program asks for more: said where a
// request reaches it, whatever the verdict.
void advise_xpu_limit(OomExplanation& e, const DeviceReading& r) {
    constexpr std::int64_t kXpuMostAtOnce = std::int64_t(4) << 30;
    if (r.m.backend == "XPU" && r.requested >= kXpuMostAtOnce) {
        e.tries.insert(e.tries.begin(),
                       "Intel's GPUs allocate at most 4 GiB at once by default, whatever is "
                       "free: UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1 lifts it, or split the "
                       "tensor that needs " +
                           printed_size(r.requested));
    }
}

// The device had room for the request and the segment it opens: its memory was not what ran
// out.
bool device_not_full(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    const Backend& on = r.on;
    if (!m.free || r.needed <= 0 || *m.free < r.needed) {
        return false;
    }
    // Less than one of the driver's 2 MiB pages over the segment: full in effect.
    if (*m.free - r.needed < kDriverPage) {
        e.facts.push_back(printed_size(*m.free) + " was free, " + printed_size(*m.free - r.needed) +
                          " more than the segment of " + printed_size(r.needed) +
                          " the request opens: less than one of the driver's 2 MiB pages, so "
                          "the device was full in effect");
        return false;
    }
    e.verdict = OomVerdict::DeviceNotFull;
    e.summary = "The device was not full: " + printed_size(*m.free) + " was free when " +
                printed_size(r.requested) +
                " was asked for, so the device's memory was not what ran out. What refuses an "
                "allocation then: a limit on this process, memory another process took "
                "between the failure and the message, " +
                std::string(on.nvidia ? "Windows' display driver, " : "") +
                "or a fault "
                "of the driver.";
    // The driver maps memory in 2 MiB pages and keeps some for itself: at a margin of a few
    // MiB the device may have been full after all.
    constexpr std::int64_t kSmallMargin = std::int64_t(8) << 20;
    if (*m.free - r.needed < kSmallMargin) {
        e.summary += " The margin was only " + printed_size(*m.free - r.needed) +
                     " over the segment of " + printed_size(r.needed) +
                     " the request opens: the driver's own needs may have taken it.";
    }
    if (m.total && r.where.split && r.where.others > *m.total / 10) {
        e.summary += " Other processes held " + printed_size(r.where.others) + " of the " +
                     printed_size(*m.total) + ": what they took is the likeliest cause.";
    } else if (m.total && !r.where.split && r.where.all > *m.total / 10 &&
               r.where.all > r.reserved) {
        e.summary += " " + printed_size(r.where.all) + " of the " + printed_size(*m.total) +
                     " was held outside PyTorch's allocator, more than a context's few hundred "
                     "MiB: another process is the likeliest cause.";
    }
    advise_xpu_limit(e, r);
    e.tries.push_back("a limit on this process: look for " + on.module +
                      ".set_per_process_memory_fraction (or "
                      "a framework's memory fraction setting), and for a limit on the container" +
                      std::string(on.nvidia ? " or a MIG or vGPU slice smaller than the GPU" : ""));
    e.tries.push_back("another process: run " + on.smi +
                      " while it runs; several processes starting at once (ranks, data-loading "
                      "workers touching the device) take memory between the failure and the "
                      "message");
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
    return true;
}

// How far the cache may be from its printed figure: 1.x prints what was reserved in all, and
// the cache is a difference of two rounded figures; 2.x prints the cache itself.
std::int64_t cache_rounding(const DeviceReading& r) {
    return r.m.reserved_from_total ? rounding_of(r.reserved) + rounding_of(r.allocated) : 0;
}

// PyTorch's tensors held more than the device has: on Windows the driver lends the GPU the
// host's memory (shared GPU memory) when its own is full.
bool past_the_whole_device(const DeviceReading& r) {
    return r.m.total && r.allocated > *r.m.total;
}

bool fragmented(const DeviceReading& r) {
    return r.requested > 0 && r.unallocated >= r.requested;
}

// The cache alone too small, the device's free memory too, but both together more than the
// segment the request opens (by a driver's page): the allocator gives back to the device only
// segments with no tensor left in them, so the cache's pieces lay in segments that still held
// some, and could not join the free memory.
bool fragmented_with_the_free(const DeviceReading& r) {
    return r.requested > 0 && r.m.free && !fragmented(r) && *r.m.free < r.needed &&
           r.unallocated >= kDriverPage &&
           r.unallocated + *r.m.free >= r.needed + kDriverPage + cache_rounding(r);
}

// Each setting from the release that brought it: max_split_size_mb from 1.10, expandable
// segments from 2.1 on CUDA and from 2.11 on ROCm (with ROCm 7), never on Windows' builds;
// torch_npu takes both; Intel's XPU allocator, neither. The wording before 2.1's tells only
// that the run was 2.0 or older.
void fragmentation_tries(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    if (m.backend == "XPU") {
        return;  // the steady sizes the caller adds are what there is
    }
    if (m.before_settings) {  // 1.0 to 1.9, by its wording: neither setting yet
        e.tries.push_back(
            "a newer PyTorch: 1.10 and later take PYTORCH_CUDA_ALLOC_CONF="
            "max_split_size_mb:128 (large blocks are not split for small tensors)" +
            std::string(m.windows_host ? ""
                                       : ", 2.1 and later expandable_segments:True (freed "
                                         "memory joins into large blocks)"));
        return;
    }
    const bool hip = m.backend == "HIP";
    const char* since = hip ? " (ROCm builds of PyTorch 2.11 and later, with ROCm 7)"
                        : m.backend == "NPU" ? ""
                                             : " (PyTorch 2.1 and later)";
    const std::string expandable = r.on.alloc_conf + "=expandable_segments:True" + since +
                                   ": segments grow in place, so freed memory joins into "
                                   "large blocks";
    const bool before_2_1 = m.pytorch_major == 1 && m.backend == "CUDA";
    const std::string split =
        r.on.alloc_conf + "=max_split_size_mb:128" +
        (before_2_1 ? " (PyTorch 1.10 and later; this message's wording is 2.0's or older)" : "") +
        ": large blocks are not split for small tensors";
    if (m.windows_host) {  // c10 maps no memory on Windows: expandable segments are ignored
        e.tries.push_back(split + " (expandable segments are not available on Windows)");
        return;
    }
    if (m.expandable_set) {  // the run had them: what is left is steadier sizes, or less
        e.facts.push_back(
            "the text sets expandable_segments:True for this run: where the build takes it, the "
            "pieces are free space inside segments that grew, which no allocator setting joins");
        return;
    }
    // Where expandable segments may not be there yet (a run of 2.0 or older, ROCm's builds
    // before 2.11, which ignore them), the split size first; where they are, they alone: the
    // message itself names them.
    const bool split_first = before_2_1 || hip;
    e.tries.push_back(split_first ? split : expandable);
    if (split_first) {
        e.tries.push_back(expandable);
    }
}

// Others holding more of the device than this run's PyTorch is the first thing to change; more
// than a context and libraries hold (1 GiB, or a quarter of a smaller device).
bool held_elsewhere(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    if (!r.known_elsewhere || r.where.all <= r.reserved ||
        r.where.all <= std::max<std::int64_t>(*m.total / 10,
                                              std::min<std::int64_t>(1LL << 30, *m.total / 4))) {
        return false;
    }
    e.verdict = OomVerdict::HeldElsewhere;
    e.summary = held_elsewhere_summary(m, r.where, r.reserved);
    if (const std::optional<std::string> ranks = ranks_contexts(r)) {
        e.tries.push_back(*ranks);
    }
    e.tries.push_back("see what holds it: " + r.on.smi + " lists each process and its memory");
    if (m.vllm_beside) {  // reinforcement learning's rollouts, colocated with training
        e.tries.push_back(
            "if the other process is the vLLM engine beside training (verl, OpenRLHF and SkyRL "
            "colocate rollouts with it), its gpu_memory_utilization is what it holds: lower it, "
            "or let the engine sleep while training (enable_sleep_mode=True, then llm.sleep())");
    }
    e.tries.push_back(
        "stop the other process (a notebook kernel, an earlier run, a server), "
        "or use another device (" +
        r.on.visible + ")");
    if (m.async_pool) {
        e.tries.push_back(
            "torch.cuda.empty_cache() gives the cudaMallocAsync pool's cached memory back to "
            "the device, if that is where it is");
    }
    if (fragmented(r)) {
        fragmentation_tries(e, r);  // also: the cached memory would have held this request
    }
    return true;
}

bool fragmentation(OomExplanation& e, const DeviceReading& r) {
    // Tensors past the whole device: whatever the cache's pieces, the work does not fit this
    // GPU (out_of_memory says by how much).
    const bool with_the_free = fragmented_with_the_free(r);
    if ((!fragmented(r) && !with_the_free) || past_the_whole_device(r)) {
        return false;
    }
    const OomMessage& m = r.m;
    e.verdict = OomVerdict::Fragmentation;
    e.summary =
        with_the_free
            ? "Fragmentation: PyTorch's allocator held " + printed_size(r.unallocated) +
                  " cached but free and the device " + printed_size(*m.free) +
                  " free, together more than the " + printed_size(r.requested) +
                  " asked for; but the cache's pieces lay in segments that still held tensors, "
                  "which the allocator cannot give back to join the free memory."
            : "Fragmentation: PyTorch's allocator held " + printed_size(r.unallocated) +
                  " cached but free, more than the " + printed_size(r.requested) +
                  " asked for, but in pieces none of which is large enough.";
    if (const std::int64_t rounding = cache_rounding(r);
        !with_the_free && r.unallocated - rounding < r.requested) {
        e.summary += " Within the printed figures' rounding (" + printed_size(rounding) +
                     ") the cache may have been smaller than the request: likely, not "
                     "certain.";
        e.tries.push_back("if it was not: " + hold_less_words(r.m));
    }
    // Joined, the cache would hold this request and little more: the device is nearly full.
    const std::int64_t left = r.unallocated + m.free.value_or(0) - r.requested;
    const bool nearly_full = m.total && m.free && left < *m.total / 50;
    e.nearly_full = nearly_full;
    if (nearly_full) {
        e.summary += " Joined, the cache and the free memory would leave " + printed_size(left) +
                     " of the " + printed_size(*m.total) + ": the device is nearly full.";
        e.facts.push_back("even in one piece, the cache and the free memory would leave " +
                          printed_size(left) + " of " + printed_size(*m.total) +
                          " after this request: the device is nearly full, and the next "
                          "allocations would fail as this one did");
    }
    // On a device nearly full, what holds less comes before the allocator's settings: joined,
    // the pieces leave no room for the next allocations. So while loading weights: the weights
    // still to come need room whatever the pieces. Where the text tells what else the program
    // was doing (an evaluation, inference, the optimizer's step), its tries follow them.
    const bool loading = m.work == OomMessage::Work::LoadingWeights;
    const bool hold_less_first = nearly_full || loading;
    const bool own_app = m.inference_app.empty();  // an application's options are its own tries
    if (hold_less_first && own_app) {
        hold_less_tries(e, r);
    }
    fragmentation_tries(e, r);
    others_made_the_difference(e, r);
    // An inference application's shapes are its requests'; weights being loaded have no steps.
    if (own_app && !loading) {
        e.tries.push_back(
            "keep tensor sizes steady from step to step (pad to a fixed or bucketed "
            "length): blocks of one size are reused whole");
    }
    if (!hold_less_first && own_app && m.work != OomMessage::Work::Unknown) {
        hold_less_tries(e, r);
    }
    return true;
}

void out_of_memory(OomExplanation& e, const DeviceReading& r) {
    const OomMessage& m = r.m;
    e.verdict = OomVerdict::OutOfMemory;
    e.summary =
        !m.failure.empty()
            ? "Out of memory: " + m.failure + "."
            : std::string("Out of memory: ") +
                  (m.allocated ? "the tensors alive held " + tensors_held(m) + ", and " : "") +
                  (m.requested ? "the next " + printed_size(*m.requested)
                               : "the next allocation (its size is not given)") +
                  " did not fit in what was left.";
    if (past_the_whole_device(r)) {
        e.summary += " The tensors alone were " + printed_size(r.allocated - *m.total) +
                     " past the " + printed_size(*m.total) +
                     " the GPU holds (Windows' driver lends the rest from the host's memory, "
                     "slowly): the work does not fit this GPU" +
                     (fragmented(r) ? ", and the " + printed_size(r.unallocated) +
                                          " its cache held are no way out."
                                    : std::string("."));
    }
    if (m.inference_app.empty()) {  // an inference application's sizes are its options'
        hold_less_tries(e, r);
    }
    if (m.async_pool && !m.requested && !m.allocated) {  // "Allocation on device", cut there
        e.facts.push_back("the cudaMallocAsync backend's message (backend:cudaMallocAsync in " +
                          r.on.alloc_conf +
                          "), cut after its first words: the whole log gives its figures");
        e.tries.insert(e.tries.begin(), native_allocator_try(r));
    }
    if (m.thc_random_state) {
        e.facts.push_back(
            "it failed making the random-number generator's state (THCTensorRandom), small "
            "and among the first things made on a GPU: the GPU was most likely full before "
            "this program put anything on it");
        e.tries.insert(e.tries.begin(), "see what holds the GPU: " + r.on.smi +
                                            " lists each process; stop it, or use another "
                                            "device (" +
                                            r.on.visible + ")");
    }
    others_made_the_difference(e, r);
    advise_xpu_limit(e, r);
    // Without the request's size (a message cut before "Tried to allocate"), a cache large
    // enough to have held a segment may have been the cause: said, with its settings. So too
    // where the cache, within the printed figures' rounding, may have been the request's size.
    constexpr std::int64_t kLeastSegment = 2LL << 20;
    const std::int64_t rounding = cache_rounding(r);
    if (!m.failure.empty() || r.unallocated <= 0 || past_the_whole_device(r)) {
        return;
    }
    if (!m.requested && r.unallocated >= kLeastSegment) {
        e.facts.push_back("the message gives no size for the request: had it been under the " +
                          printed_size(r.unallocated) +
                          " cached but free, the cache was in pieces too small for it "
                          "(fragmentation): the line with \"Tried to allocate\" says which");
        fragmentation_tries(e, r);
    } else if (m.requested && r.unallocated + rounding >= r.requested) {
        e.facts.push_back("the " + printed_size(r.unallocated) +
                          " cached but free may, within the printed figures' rounding (" +
                          printed_size(rounding) + "), have been as much as the " +
                          printed_size(r.requested) +
                          " asked for: whether this was fragmentation cannot be told from the "
                          "message");
        fragmentation_tries(e, r);
    }
}

}  // namespace

std::string native_allocator_try(const DeviceReading& r) {
    if (r.m.inference_app == "ComfyUI") {  // which turns the backend on itself
        return "ComfyUI started with --disable-cuda-malloc: PyTorch's own allocator, whose "
               "message prints what its cache holds";
    }
    return "PyTorch's own allocator (no backend:cudaMallocAsync in " + r.on.alloc_conf +
           "): its message prints what its cache holds, and expandable_segments:True lets "
           "freed memory serve larger tensors";
}

void explain_device(OomExplanation& e) {
    const OomMessage& m = e.message;
    for (const std::string& figure : m.set_aside) {
        e.facts.push_back("set aside: " + figure +
                          " (no device holds it: a counter, the driver's or PyTorch's, gone "
                          "below zero); the other figures are used");
    }
    if (!m.pinning.empty()) {
        explain_pinned(e, backend_of(m));
        return;
    }
    if (m.driver_level) {
        explain_driver_level(e, backend_of(m));
        return;
    }
    if (m.shared_memory) {
        explain_shared_memory(e);
        return;
    }
    const DeviceReading r = device_reading(m);
    add_device_facts(e, r);
    if (past_the_device(e, r) || limit_reached(e, r) || device_not_full(e, r) ||
        held_elsewhere(e, r) || beyond_reach(e, r) || fragmentation(e, r)) {
        return;
    }
    out_of_memory(e, r);
}

}  // namespace oomlab::oom_explain
