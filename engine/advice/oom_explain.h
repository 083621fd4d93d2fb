// The parts an out-of-memory message's explanation is made of (explain_oom puts them
// together): its figures in PyTorch's own words (oom_words.cpp), where the memory outside
// PyTorch went (oom_elsewhere.cpp), the explanation of an accelerator's message (its figures,
// oom_device_facts.cpp; its verdict, oom_device_verdicts.cpp) and of the host's (oom_host.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "oomlab/advice/oom_message.h"

namespace oomlab::oom_explain {

// A size as PyTorch's messages print one (c10's format_size): two decimals, in bytes up to 1 KiB,
// KiB up to 1 MiB, MiB up to 1 GiB, else GiB. The facts then quote the message's own figures.
std::string printed_size(std::int64_t value);
// The same, or "(not given)".
std::string printed_or_not_given(std::optional<std::int64_t> value);

// Half the last digit of a figure PyTorch printed (two decimals of its unit): how far a
// difference of printed figures may be from the true one.
std::int64_t rounding_of(std::int64_t printed);
// A difference of printed figures: within their rounding, said so ("at most 15.36 MiB (the
// printed figures' rounding)"), not as the "1 bytes" the subtraction leaves.
std::string difference(std::int64_t value, std::int64_t rounding);

// What the message's backend calls its devices and the tools that go with it.
struct Backend {
    std::string device;      // "GPU 0", "XPU 0", "NPU 3"; "the GPU" when no number is given
    std::string smi;         // what lists the processes on a device and their memory
    std::string visible;     // the variable that picks the devices a process sees
    std::string alloc_conf;  // the variable the caching allocator's settings are read from
    std::string blocking;    // what makes kernels report their errors where they fail; "" none
    bool nvidia = false;     // CUDA itself: MIG and vGPU slices, Windows' display driver
    std::string module = "torch.cuda";  // its Python module: torch.xpu, torch.npu (ROCm's: cuda)
};
Backend backend_of(const OomMessage& m);

// "asked for 20.00 MiB on GPU 0 of 79.14 GiB, of which 3.56 MiB was free": the figures given.
std::string asked_on(const OomMessage& m, const std::string& device);

// The segment PyTorch's caching allocator opens for a request nothing cached holds
// (CUDACachingAllocator's allocation size): 2 MiB for up to 1 MiB, 20 MiB below 10 MiB, else
// the request rounded up to 2 MiB. What "free" must hold for the request to fit.
std::int64_t segment_for(std::int64_t requested);

// Where the memory that neither PyTorch's blocks nor the free memory account for went, as far
// as the message tells: this process outside PyTorch, other processes, or (not told apart) both.
struct Elsewhere {
    std::int64_t all = 0;           // total - free - what PyTorch reserved
    std::int64_t this_process = 0;  // of it, in this process outside PyTorch's allocator
    std::int64_t others = 0;        // of it, in other processes
    // The message printed this process's own figure (`whole`), or listed it among the
    // processes (`listed`: its pid there, seen from a container).
    bool split = false;
    std::int64_t whole = 0;
    int listed = 0;
    // How far each may be from the truth: differences of rounded figures.
    std::int64_t all_rounding = 0, this_process_rounding = 0, others_rounding = 0;
};
// Of a message that gives the device's total and free memory.
Elsewhere elsewhere_of(const OomMessage& m, std::int64_t reserved);
// The one process a message lists (without "this process has") that holds what PyTorch
// reserved and a context beside it: this one, its id a container's; 0 where none or several.
int listed_as_this_process(const OomMessage& m, std::int64_t reserved);
// How far what PyTorch reserved may be from its printed figures' sum.
std::int64_t reserved_rounding(const OomMessage& m, std::int64_t reserved);
std::string elsewhere_fact(const OomMessage& m, const Elsewhere& where);
// The memory held outside this run's PyTorch, said as the message lets it be split.
std::string held_elsewhere_summary(const OomMessage& m, const Elsewhere& where,
                                   std::int64_t reserved);

// An accelerator's message read as one: figures that do not add up (more allocated than
// reserved, more free than the whole device) read so that no share comes out negative.
struct DeviceReading {
    const OomMessage& m;
    Backend on;
    std::int64_t requested = 0;
    std::int64_t allocated = 0;
    std::int64_t reserved = 0;
    std::int64_t unallocated = 0;  // cached but free
    bool known_elsewhere = false;  // the total and the free memory are given
    Elsewhere where;
    std::int64_t limit = 0;   // what the process may use: its allowance, else the device
    std::int64_t needed = 0;  // what the device must have free for the request
};
DeviceReading device_reading(const OomMessage& m);
// Several other processes of one small size: most often the other ranks' contexts, said so.
std::optional<std::string> ranks_contexts(const DeviceReading& r);
// Memory others held that would have made room for the request: said, and what to do first.
void others_made_the_difference(OomExplanation& e, const DeviceReading& r);
// Away from the cudaMallocAsync backend, whose message cannot tell its cache from the rest.
std::string native_allocator_try(const DeviceReading& r);
// What the tensors held, said from `allocated` (known): what PyTorch printed as allocated less
// its private pools' free blocks, which it prints among them.
std::string tensors_held(const OomMessage& m);
// The figures, each with what it means.
void add_device_facts(OomExplanation& e, const DeviceReading& r);
// What makes the run hold less (oom_hold_less.cpp), as the text tells what it was doing
// (OomMessage::work): a training step's, inference's, or its weights' tries; and the same in
// a few words.
void hold_less_tries(OomExplanation& e, const DeviceReading& r);
std::string hold_less_words(const OomMessage& m);
// The verdict, its summary and what to try: driver-level and Triton's failures first, then
// too large, a limit reached, the device not full, memory held elsewhere, fragmentation, or
// out of memory.
void explain_device(OomExplanation& e);

// The failures outside the caching allocator (oom_outside_allocator.cpp): a driver's or a
// library's own allocation (`on` its backend), and Triton's shared memory per block.
void explain_driver_level(OomExplanation& e, const Backend& on);
void explain_pinned(OomExplanation& e, const Backend& on);
void explain_shared_memory(OomExplanation& e);

// The host's (the CPU's) and Apple's GPU's (MPS) messages.
void explain_host(OomExplanation& e);

// An inference application's log (OomMessage::inference_app): what its options do to its
// memory.
void add_inference_app_tries(OomExplanation& e);

}  // namespace oomlab::oom_explain
