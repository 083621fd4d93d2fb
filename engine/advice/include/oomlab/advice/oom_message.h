// The out-of-memory message of any PyTorch program, read and explained: the figures it gives
// (what was asked, the device's capacity and free memory, what PyTorch held allocated and
// reserved, what other processes held), what they mean (true lack of memory, fragmentation,
// memory held outside this process's PyTorch) and what to try first. Reads the wordings of
// PyTorch 1.x and 2.x (CUDA's caching allocator, the CPU's DefaultCPUAllocator and
// std::bad_alloc, Apple's MPS backend). Torch-free: the text is all it reads.
//
// Of a text holding several messages (a log), the last is explained, and every figure comes from
// that one message: from its first words ("CUDA out of memory", "DefaultCPUAllocator: ...") to
// the end of its paragraph or the next traceback.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

struct OomMessage {
    // Cuda: an accelerator served by PyTorch's caching allocator (CUDA, ROCm's HIP, XPU, NPU).
    enum class Device { Cuda, Cpu, Mps };
    Device device = Device::Cuda;
    std::string backend = "CUDA";  // as the message names it: CUDA, HIP, XPU, NPU, MPS, CPU
    // The driver's own failure ("CUDA error: out of memory", cuBLAS's CUBLAS_STATUS_ALLOC_FAILED),
    // not the caching allocator's message: memory outside the allocator ran out.
    bool driver_level = false;
    // What failed, in words, where the message's first words tell: a library's status ("cuBLAS
    // could not allocate its handle or workspace (CUBLAS_STATUS_ALLOC_FAILED)"), cuDNN's search
    // for an algorithm, Triton's shared memory; empty for the caching allocator's messages.
    std::string failure;
    // The cudaMallocAsync backend's message ("Allocation on device 0 would exceed allowed
    // memory"): `allocated` is all it counts, the pool's cached memory is not printed, and a
    // request needs only its own bytes, not a segment.
    bool async_pool = false;
    // Triton's "out of resource: shared memory" (torch.compile's kernels): `requested` is what
    // one block asked for and `most_at_once` what the GPU has per block, not its memory.
    bool shared_memory = false;
    bool no_config_fits = false;  // Inductor tried each configuration, and none fit
    // The kernel's kind, as its name tells: a persistent reduction ("triton_per_..."), a matrix
    // product's template ("triton_mm"); empty where the name says neither.
    std::string kernel_kind;
    // "reserved in total" (1.5 to 1.13): what was cached but free is the difference of two
    // rounded figures; "cached" (1.0 to 1.4) printed it, and had no max_split_size_mb yet.
    bool reserved_from_total = false;
    bool cached_wording = false;
    // Older than 1.10, where neither allocator setting was yet: 1.0 to 1.4's "cached", or a
    // message that ends in c10's "(malloc at ...)" with no max_split_size_mb hint before it.
    bool before_settings = false;
    // PyTorch 0.x: THC's wording ("cuda runtime error (2) : out of memory at
    // ...THCTensorRandom.cu"), or THD's paths (its distributed backend) in the traceback. None
    // of mixed precision's, checkpointing's, the memory fraction's or the history's APIs yet.
    bool pytorch_0x = false;
    bool thc_random_state = false;  // failed making the random-number state (THCTensorRandom)
    // The program ran on Windows: the host's wording ("not enough memory"), the text's paths
    // ("C:\...", "..\c10\..."), or tensors past the GPU (the driver's shared GPU memory).
    bool windows_host = false;
    // The inference application whose log holds the message ("vLLM", "SGLang", "TGI", "ComfyUI",
    // "Stable Diffusion web UI", "Accelerate" for a device_map's load); empty for a program of
    // one's own. Its memory is set by its options, not by a training
    // loop's batch, precision or checkpointing.
    std::string inference_app;
    std::string app_memory_share;    // the share of the device its log sets ("0.98"), if it does
    bool app_pool_at_start = false;  // it failed making its KV-cache pool, at start
    bool vllm_beside = false;        // the text names vLLM, though the failure is not the engine's
    // What the program was doing, as the frames and words around the message tell: the frame
    // nearest the message among those that tell (putting a model's weights on the device, an
    // evaluation or test loop, the optimizer's step or state, a diffusers pipeline's sampling,
    // a training step's backward), else inference by the whole text's words (a diffusers
    // pipeline's, generate's, an inference script's; none of training's words). Unknown, as
    // for a message alone, gets a training step's tries.
    enum class Work {
        Unknown,
        LoadingWeights,
        Inference,
        Diffusion,
        Generation,
        Evaluation,
        OptimizerStep
    };
    Work work = Work::Unknown;
    // The text names a language model's parts or kind (logits, a vocabulary, lm_head, a causal
    // LM, GPT, Llama): a tensor too large may be its logits.
    bool language_model = false;
    // The driver's failure was pinning host memory (page-locked, for copies to the device): the
    // DataLoader's pin-memory thread, tensor.pin_memory(), PyTorch's host allocator.
    std::string pinning;  // where the text shows it; empty where it does not
    // The message's own hint names PYTORCH_ALLOC_CONF (2.9 and later), not a backend's own.
    bool generic_alloc_conf = false;
    // The text sets expandable_segments:True for the program ("export PYTORCH_..._ALLOC_CONF=",
    // os.environ, a command line's prefix): the run had them on.
    bool expandable_set = false;
    // MPS prints 1024-based sizes as "GB" and "MB" (newer ones "GiB"): quoted as it printed.
    bool decimal_unit_names = false;
    std::optional<std::int64_t> other_allocations;  // MPS: Metal's memory outside its allocator
    int device_index = -1;                          // "GPU 0"; -1 when not said
    int pytorch_major = 0;  // 1 or 2 as the wording tells (CUDA); 0 when it does not
    std::optional<std::int64_t> requested;
    std::string requested_printed;      // where its unit is not PyTorch's own ("72GB", 0.x's TH)
    std::optional<std::int64_t> total;  // the device's capacity
    std::optional<std::int64_t> free;   // free on the device
    std::optional<std::int64_t> allocated;     // by PyTorch's tensors (and private_pools)
    std::optional<std::int64_t> reserved;      // by PyTorch's allocator, allocated or not
    std::optional<std::int64_t> allowed;       // a memory fraction's limit, where set
    std::optional<std::int64_t> most_at_once;  // the largest one allocation the platform makes
    // Of `allocated` as PyTorch prints it: free blocks kept in CUDA graphs' and MemPools' pools.
    std::optional<std::int64_t> private_pools;
    std::optional<std::int64_t> this_process;             // all this process uses, PyTorch's or not
    std::vector<std::pair<int, std::int64_t>> processes;  // pid, bytes: every process on the GPU
    std::optional<std::string> system_error;              // the CPU's errno text
    // Figures the message printed that no device holds (past 1 EiB), in words: not used.
    std::vector<std::string> set_aside;
};

enum class OomVerdict {
    Fragmentation,     // the free memory PyTorch holds would hold the request, in no one block
    HeldElsewhere,     // much of the device is held outside this process's PyTorch
    TooLarge,          // the one request is larger than the whole device (or its allowance)
    OutOfMemory,       // the live tensors fill what there is
    LimitReached,      // the process reached the limit set on it (a memory fraction, "allowed")
    DeviceNotFull,     // the device had free memory for the request: something else refused it
    OutsideAllocator,  // the driver's own allocation failed (context, cuBLAS, cuDNN, NCCL)
};

struct OomExplanation {
    OomMessage message;
    OomVerdict verdict = OomVerdict::OutOfMemory;
    std::string summary;             // one sentence: what happened
    std::vector<std::string> facts;  // the figures, each with what it means
    std::vector<std::string> tries;  // what to try, first things first, each with why
    // Even joined, what was free and cached would have left under 2% of the device: what uses
    // less comes before what joins the pieces.
    bool nearly_full = false;
};

// Reads the last message out of `text` (a whole traceback or log is fine). Throws BadInput when
// it holds no out-of-memory message PyTorch writes, or when a figure of that message is none
// PyTorch prints (a number of more than 30 characters, a GPU number over 65535): the BadInput
// names the figure. A size past 1 EiB, which PyTorch itself has printed for a counter gone
// wrong, is set aside and said so; the message's other figures are used.
OomExplanation explain_oom_message(const std::string& text);

// What the figures of one message mean and what to try.
OomExplanation explain_oom(const OomMessage& message);

// The last message of a stream of any length (`python train.py 2>&1 | oomlab-cli explain`),
// held in bounded memory: the stream's last 256 to 512 KiB, and the last message that left
// them (up to 64 KiB). Feed it the text in pieces of any size, then explain.
class OomLogReader {
public:
    void feed(std::string_view piece);
    // explain_oom_message of all that was fed; the same BadInput when it held no message.
    OomExplanation explain() const;
    std::uint64_t bytes_read() const { return m_read; }
    std::size_t bytes_held() const { return m_window.size() + m_earlier.size(); }

private:
    std::string m_window;   // the stream's last bytes
    std::string m_earlier;  // the last message that left the window, to its end
    std::uint64_t m_read = 0;
};

// "oom", "fragmentation", ...: the verdict as `explain --json` names it.
const char* oom_verdict_name(OomVerdict verdict);
// The explanation as `explain --json` writes it (one line).
std::string oom_explanation_json(const OomExplanation& explanation);

}  // namespace oomlab
