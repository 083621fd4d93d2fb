// The out-of-memory message of any PyTorch program, read and explained: the figures it gives
// (what was asked, the device's capacity and free memory, what PyTorch held allocated and
// reserved, what other processes held), what they mean (true lack of memory, fragmentation,
// memory held outside this process's PyTorch) and what to try first. Reads the wordings of
// PyTorch 1.x and 2.x (CUDA's caching allocator, the CPU's DefaultCPUAllocator and
// std::bad_alloc, Apple's MPS backend). Torch-free: the text is all it reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomlab {

struct OomMessage {
    enum class Device { Cuda, Cpu, Mps };
    Device device = Device::Cuda;
    int device_index = -1;  // "GPU 0"; -1 when not said
    int pytorch_major = 0;  // 1 or 2 as the wording tells (CUDA); 0 when it does not
    std::optional<std::int64_t> requested;
    std::optional<std::int64_t> total;         // the device's capacity
    std::optional<std::int64_t> free;          // free on the device
    std::optional<std::int64_t> allocated;     // by PyTorch's tensors
    std::optional<std::int64_t> reserved;      // by PyTorch's allocator, allocated or not
    std::optional<std::int64_t> allowed;       // a memory fraction's limit, where set
    std::optional<std::int64_t> this_process;  // all this process uses, PyTorch's or not
    std::vector<std::pair<int, std::int64_t>> processes;  // pid, bytes: every process on the GPU
    std::optional<std::string> system_error;              // the CPU's errno text
};

enum class OomVerdict {
    Fragmentation,  // the free memory PyTorch holds would hold the request, in no one block
    HeldElsewhere,  // much of the device is held outside this process's PyTorch
    TooLarge,       // the one request is larger than the whole device (or its allowance)
    OutOfMemory,    // the live tensors fill what there is
};

struct OomExplanation {
    OomMessage message;
    OomVerdict verdict = OomVerdict::OutOfMemory;
    std::string summary;             // one sentence: what happened
    std::vector<std::string> facts;  // the figures, each with what it means
    std::vector<std::string> tries;  // what to try, first first, each with why
};

// Reads the message out of `text` (a whole traceback or log is fine). Throws BadInput when it
// holds no out-of-memory message PyTorch writes.
OomExplanation explain_oom_message(const std::string& text);

// "oom", "fragmentation", ...: the verdict as `explain --json` names it.
const char* oom_verdict_name(OomVerdict verdict);
// The explanation as `explain --json` writes it (one line).
std::string oom_explanation_json(const OomExplanation& explanation);

}  // namespace oomlab
