// Where PyTorch's out-of-memory message is in a text: its wordings' first words, and where the
// last message begins and ends.
#include "oom_message_text.h"

#include <string.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

namespace oomlab::oom_text {
namespace {

using Device = OomMessage::Device;
constexpr std::size_t kNone = std::string_view::npos;

// The words a message begins with; the last of them in a text begins the message explained.
// PyTorch's caching allocator says "<backend> out of memory" on each backend it serves (ROCm's
// build says HIP, Intel's XPU, Ascend's NPU); a driver's own failure is "<backend> error: out of
// memory", and a library's is its status.
constexpr std::string_view kCudaDriverFailure = "the CUDA driver refused an allocation of its own";
constexpr std::string_view kHipDriverFailure = "the HIP driver refused an allocation of its own";
constexpr std::string_view kCublasFailure =
    "cuBLAS could not allocate its handle or workspace (CUBLAS_STATUS_ALLOC_FAILED)";
constexpr std::string_view kCudnnFailure =
    "cuDNN could not allocate its own memory (CUDNN_STATUS_ALLOC_FAILED)";
constexpr std::string_view kNcclCudaFailure =
    "a CUDA call of NCCL's ran out of memory (its buffers, or a communicator's)";
constexpr Marker kMarkers[] = {
    {"CUDA out of memory", Device::Cuda},
    {"OutOfMemoryError", Device::Cuda},
    {"HIP out of memory", Device::Cuda, "HIP"},
    {"XPU out of memory", Device::Cuda, "XPU"},
    {"NPU out of memory", Device::Cuda, "NPU"},
    // Intel's extension refused one allocation larger than its platform allows.
    {"Current platform can NOT allocate memory block with size larger than", Device::Cuda, "XPU"},
    // PyTorch 0.x: the caching allocator's failure in THC's words (and as posters shorten it).
    {"cuda runtime error (2) : out of memory", Device::Cuda},
    {"cuda runtime err(2): out of memory", Device::Cuda},
    {"cuda runtime error(2)", Device::Cuda},  // a title's, its spaces left out
    {"error=2 : out of memory", Device::Cuda},
    {"cuda error(2), out of memory", Device::Cuda},  // as a poster retyped it
    // The cudaMallocAsync backend's ("Allocation on device 0 would exceed allowed memory").
    {"Allocation on device", Device::Cuda},
    {"CUDA error: out of memory", Device::Cuda, "CUDA", true, false, kCudaDriverFailure},
    {"CUDA error:out of memory", Device::Cuda, "CUDA", true, false, kCudaDriverFailure},
    {"HIP error: out of memory", Device::Cuda, "HIP", true, false, kHipDriverFailure},
    {"CUBLAS_STATUS_ALLOC_FAILED", Device::Cuda, "CUDA", true, false, kCublasFailure},
    {"CUDNN_STATUS_NOT_INITIALIZED", Device::Cuda, "CUDA", true, false,
     "cuDNN could not make its handle (CUDNN_STATUS_NOT_INITIALIZED), which on a full GPU is "
     "memory it could not allocate"},
    {"CUDNN_STATUS_ALLOC_FAILED", Device::Cuda, "CUDA", true, false, kCudnnFailure},
    {"CUFFT_ALLOC_FAILED", Device::Cuda, "CUDA", true, false,
     "cuFFT could not allocate its plan's work area (CUFFT_ALLOC_FAILED)"},
    // Each algorithm's workspace is asked of PyTorch's allocator; this follows when none fit.
    {"Unable to find a valid cuDNN algorithm", Device::Cuda, "CUDA", false, false,
     "most likely, cuDNN found no convolution algorithm whose workspace fit in the memory left "
     "(the usual cause; a shape or type cuDNN does not take is the other)"},
    // detectron2's retry_if_cuda_oom: it caught the failure and runs the call again on the CPU.
    {"to CPU due to CUDA OOM", Device::Cuda, "CUDA", false, false,
     "detectron2 caught it and runs the call again on the CPU (retry_if_cuda_oom; the log line "
     "names the function): the run goes on, slower, where the CPU has the memory"},
    {"Failed to CUDA calloc", Device::Cuda, "CUDA", true, false,
     "NCCL could not allocate its buffers"},
    // torch-directml's allocator (Windows' DirectX 12 devices), not PyTorch's caching one.
    {"Could not allocate tensor with", Device::Cuda, "DirectML", true, false,
     "DirectML (torch-directml) could not allocate the tensor in the GPU's video memory"},
    // NCCL's WARN line, and its "Last error:" under torch.distributed's DistBackendError.
    {"Cuda failure 'out of memory'", Device::Cuda, "CUDA", true, false, kNcclCudaFailure},
    {"Cuda failure 2 'out of memory'", Device::Cuda, "CUDA", true, false, kNcclCudaFailure},
    // Intel's Level Zero driver (an XPU's), through the unified runtime.
    {"UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", Device::Cuda, "XPU", true, false,
     "the XPU's Level Zero driver ran out of device memory (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)"},
    {"UR_RESULT_ERROR_OUT_OF_RESOURCES", Device::Cuda, "XPU", true, false,
     "the XPU's Level Zero driver ran out of resources, most often device memory "
     "(UR_RESULT_ERROR_OUT_OF_RESOURCES)"},
    // torch.compile's Triton kernels: one block's shared memory, not the device's memory.
    {"out of resource: ", Device::Cuda, "CUDA", false, false,
     "a Triton kernel (torch.compile's, or a library's own) asked for more shared memory per "
     "block than the GPU has"},
    {"DefaultCPUAllocator: can't allocate memory", Device::Cpu},
    {"DefaultCPUAllocator: not enough memory", Device::Cpu},
    {"posix_memalign(&data, gAlignment, nbytes) == 0", Device::Cpu},  // before PyTorch 1.2
    {"Torch: not enough memory", Device::Cpu},                        // 0.x's TH
    {"MPS backend out of memory", Device::Mps},
    // One Metal buffer larger than the largest the Mac's GPU takes (its maxBufferLength).
    {"Invalid buffer size: ", Device::Mps, "MPS", false, false,
     "one tensor larger than the largest buffer Metal allows on this Mac's GPU"},
    {"std::bad_alloc", Device::Cpu},
    {"out of memory. Tried to allocate", Device::Cuda, "CUDA", false, true},
    {"Tried to allocate", Device::Cuda, "CUDA", false, true},
};
// Looked for only in a text that holds no other message:
// - the statuses as an issue's title writes them, in lower case: in a long log their letters
//   are common (glibc's memmem took 50 ms over 156 MB for each, 13 ms for its upper-case twin);
// - the runtime's name for the error in PyTorch's hint after a driver's failure (2.5 and
//   later), where a log kept the hint and lost the failure's own line before it.
constexpr Marker kFallbackMarkers[] = {
    {"cublas_status_alloc_failed", Device::Cuda, "CUDA", true, false, kCublasFailure},
    {"cudnn_status_alloc_failed", Device::Cuda, "CUDA", true, false, kCudnnFailure},
    {"Search for `cudaErrorMemoryAllocation'", Device::Cuda, "CUDA", true, false,
     kCudaDriverFailure},
    {"Search for `hipErrorOutOfMemory'", Device::Cuda, "HIP", true, false, kHipDriverFailure},
};
// A message copied from its figures on, the caching allocator's without its first words: 1.x's
// "(GPU 0; 7.93 GiB total capacity; ...", 2.x's "GPU 0 has a total capacity of ...". The
// device's name before "total capacity" begins it (and names the backend: ROCm's and Intel's
// XPU's are a GPU there too).
constexpr Marker kFiguresFrom[] = {
    {"(GPU ", Device::Cuda, "CUDA", false, true},
    {"GPU ", Device::Cuda, "CUDA", false, true},
    {"(NPU ", Device::Cuda, "NPU", false, true},  // torch_npu's, worded as 1.x's
};
// Each begins with a letter: a search that stops at each of its first character's places
// stops rarely (a space's would stop at every word of a long log).
constexpr std::string_view kCapacity[] = {"total capacity;", "has a total capacity of "};
// From the device's name to "total capacity" at most: "(GPU 12; 79.15 GiB " or "GPU 12 has a ".
constexpr std::size_t kFiguresLead = 24;
// Where a message has ended at the latest: the next exception's traceback.
constexpr std::string_view kStops[] = {"Traceback (most recent call last)",
                                       "During handling of the above exception",
                                       "The above exception was the direct cause"};

// Where `text` ends its message that begins at `begin`: a blank line, the next traceback, or
// kMostMessage bytes on.
std::size_t message_end(std::string_view text, std::size_t begin) {
    const std::string_view rest = text.substr(begin, kMostMessage);
    std::size_t end = rest.size();
    for (std::string_view stop : kStops) {
        end = std::min(end, rest.find(stop));
    }
    for (std::size_t line = rest.find('\n'); line < end; line = rest.find('\n', line + 1)) {
        std::size_t next = line + 1;
        while (next < end && (rest[next] == ' ' || rest[next] == '\t' || rest[next] == '\r')) {
            ++next;
        }
        if (next < end && rest[next] == '\n') {
            end = line;
        }
    }
    return begin + end;
}

// Whether the marker at `at` is a sentence's words, not a message's start: "If you encounter
// CUDA out of memory, try ..." (a program's hint after its own error) follows a word and a space.
// An exception's class before it is no sentence: Inductor logs "Exception out of resource: ...";
// nor is an error's name, as a title writes it: "RuntimeError cudnn error cudnn_status_...".
bool in_prose(std::string_view text, std::size_t at) {
    if (at < 2 || text[at - 1] != ' ' || text[at - 2] < 'a' || text[at - 2] > 'z') {
        return false;
    }
    const std::string_view before = text.substr(0, at - 1);
    const auto ends_with = [&](std::string_view word) {
        return before.size() >= word.size() &&
               before.compare(before.size() - word.size(), word.size(), word) == 0;
    };
    return !ends_with("Exception") && !ends_with("Error") && !ends_with("error");
}

// The last place of `words` in `text`, in prose or not. Found forward, one match after another:
// the standard library's rfind compares at every position backwards, which made reading a long
// log 100 times slower than grep.
std::size_t last_place(std::string_view text, std::string_view words, bool prose_too = false) {
    std::size_t last = kNone;
    for (std::size_t at = find_in(text, words, 0); at != kNone; at = find_in(text, words, at + 1)) {
        last = in_prose(text, at) && !prose_too ? last : at;
    }
    return last;
}

// The last place any of the markers (weak or not) begins in `text`.
std::size_t last_marker(std::string_view text, bool weak) {
    std::size_t begin = kNone;
    for (const Marker& marker : kMarkers) {
        if (marker.weak != weak) {
            continue;
        }
        const std::size_t at = last_place(text, marker.words);
        if (at != kNone && (begin == kNone || at > begin)) {
            begin = at;
        }
    }
    return begin;
}

// The later of two places, either of which may be none.
std::size_t later(std::size_t a, std::size_t b) {
    return a == kNone ? b : b == kNone ? a : std::max(a, b);
}

// Where the last message copied from its figures on begins: the device's name and number
// nearest before the last "total capacity" (kFiguresFrom); none where none is near enough.
std::size_t figures_from(std::string_view text) {
    std::size_t begin = kNone;
    for (std::string_view capacity : kCapacity) {
        const std::size_t last = last_place(text, capacity, true);
        if (last == kNone) {
            continue;
        }
        const std::size_t lead = last - std::min(last, kFiguresLead);
        const std::string_view before = text.substr(lead, last - lead);
        std::size_t device_at = kNone;
        for (const Marker& device : kFiguresFrom) {
            const std::size_t at = before.rfind(device.words);
            const std::size_t number = at + device.words.size();
            // Its number follows ("GPU  has" where PyTorch printed none), not a word.
            if (at != kNone && number < before.size() &&
                (is_digit(before[number]) || before[number] == ' ') &&
                (device_at == kNone || at < device_at)) {
                device_at = at;  // the earliest of the nearest: "(GPU " before "GPU "
            }
        }
        begin = device_at == kNone ? begin : later(begin, lead + device_at);
    }
    return begin;
}

}  // namespace

// glibc's memmem skips ahead by the words' length, where a search that stops at each place of
// their first letter ("e", "o", "t" are in every line of a log) stopped a thousand times more
// often.
std::size_t find_in(std::string_view text, std::string_view words, std::size_t from) {
    if (from >= text.size()) {
        return kNone;
    }
    const void* at = memmem(text.data() + from, text.size() - from, words.data(), words.size());
    return at ? std::size_t(static_cast<const char*>(at) - text.data()) : kNone;
}

std::optional<Span> last_message(std::string_view text) {
    const std::size_t strong = last_marker(text, false);
    const std::size_t weak = last_marker(text, true);
    std::optional<Span> last;
    if (strong != kNone) {
        last = Span{strong, message_end(text, strong)};
    }
    if (weak != kNone && (!last || weak >= last->end)) {
        last = Span{weak, message_end(text, weak)};
    }
    // Figures that no message's first words begin: a copy from them on.
    if (const std::size_t figures = figures_from(text);
        figures != kNone && (!last || figures >= last->end)) {
        last = Span{figures, message_end(text, figures)};
    }
    return last;
}

std::optional<Span> fallback_message(std::string_view text) {
    std::size_t begin = kNone;
    for (const Marker& marker : kFallbackMarkers) {
        begin = later(begin, last_place(text, marker.words));
    }
    return begin == kNone ? std::nullopt
                          : std::optional<Span>(Span{begin, message_end(text, begin)});
}

const Marker& marker_at_start(std::string_view message) {
    const Marker* begun = &kMarkers[0];
    for (const Marker& marker : kMarkers) {
        if (message.compare(0, marker.words.size(), marker.words) == 0) {
            begun = &marker;
        }
    }
    for (const Marker& marker : kFallbackMarkers) {
        if (message.compare(0, marker.words.size(), marker.words) == 0) {
            return marker;
        }
    }
    for (const Marker& device : kFiguresFrom) {
        if (message.compare(0, device.words.size(), device.words) == 0) {
            return device;
        }
    }
    return *begun;
}

namespace {

// The words of PyTorch's messages that a console's wrap may split: "to|tal", "i|s".
constexpr std::string_view kMessageWords[] = {
    "allocate",    "allocated", "already", "available", "by",       "cached", "capacity", "capacty",
    "currently",   "device",    "exceed",  "free",      "gib",      "gpu",    "has",      "in",
    "including",   "is",        "kib",     "limit",     "memory",   "mib",    "of",       "pools",
    "private",     "process",   "pytorch", "requested", "reserved", "the",    "total",    "tried",
    "unallocated", "use",       "which",   "would",     "allowed",  "bytes",  "non"};

bool message_word(std::string_view word) {
    std::string lower(word);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](char c) { return char(std::tolower(static_cast<unsigned char>(c))); });
    return std::find(std::begin(kMessageWords), std::end(kMessageWords), lower) !=
           std::end(kMessageWords);
}

bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Whether the characters either side of a break at `at` are one word or number cut by the wrap:
// a number's digits ("4|0.30"; two numbers never stand side by side in a message), or a message's
// word that its parts are not both ("to|tal", "i|s", "un|allocated").
bool split_inside(std::string_view text, std::size_t before_end, std::size_t after_begin) {
    if (before_end == 0 || after_begin >= text.size()) {
        return false;
    }
    const char last = text[before_end - 1];
    const char next = text[after_begin];
    const auto numeral = [](char c) { return is_digit(c) || c == '.'; };
    if (numeral(last) && numeral(next) && (is_digit(last) || is_digit(next))) {
        return true;
    }
    std::size_t begin = before_end;
    while (begin > 0 && is_letter(text[begin - 1])) {
        --begin;
    }
    std::size_t end = after_begin;
    while (end < text.size() && is_letter(text[end])) {
        ++end;
    }
    const std::string_view head = text.substr(begin, before_end - begin);
    const std::string_view tail = text.substr(after_begin, end - after_begin);
    return !head.empty() && !tail.empty() && message_word(std::string(head) + std::string(tail)) &&
           !(message_word(head) && message_word(tail));
}

}  // namespace

std::string without_hard_wraps(std::string_view text, std::string_view message) {
    constexpr std::size_t kLeastWidth = 60;
    // The message's first line from its start: the log's prefix is in the console's width.
    std::size_t first = 0;
    if (lies_within(text, message)) {
        const std::size_t at = std::size_t(message.data() - text.data());
        const std::size_t line = at == 0 ? kNone : text.rfind('\n', at - 1);
        first = line == kNone ? at : at - line - 1;
    }
    // Each line broken inside the message: where it ends, and its length in the console.
    std::vector<std::pair<std::size_t, std::size_t>> breaks;
    for (std::size_t from = 0, at = message.find('\n'); at != kNone;
         from = at + 1, at = message.find('\n', from)) {
        const std::size_t end = at > from && message[at - 1] == '\r' ? at - 1 : at;
        breaks.emplace_back(at, end - from + (from == 0 ? first : 0));
    }
    // The longest length two or more lines share (counted in one pass: a text of many short
    // lines costs no more than its size).
    std::unordered_map<std::size_t, int> lines_of_length;
    std::size_t width = 0;
    for (const auto& [at, length] : breaks) {
        if (length >= kLeastWidth && ++lines_of_length[length] >= 2) {
            width = std::max(width, length);
        }
    }
    std::string joined(message);
    for (auto it = breaks.rbegin(); width != 0 && it != breaks.rend(); ++it) {
        // From the end, so that each break's offset still holds.
        const bool crlf = it->first > 0 && message[it->first - 1] == '\r';
        const std::size_t from = it->first - (crlf ? 1 : 0);
        if (it->second == width && split_inside(message, from, it->first + 1)) {
            joined.erase(from, crlf ? 2 : 1);
        }
    }
    return joined;
}

std::string one_line(std::string_view text) {
    std::string line;
    line.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '[' && text.compare(i, 5, "[rank") == 0) {
            std::size_t end = i + 5;
            while (end < text.size() && is_digit(text[end])) {
                ++end;
            }
            if (end > i + 5 && text.compare(end, 2, "]:") == 0) {
                i = end + 1;
                continue;
            }
        }
        if (c == '\n') {  // a line quoted as a comment or a reply ("# ", "> "): its marks go
            std::size_t next = i + 1;
            while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) {
                ++next;
            }
            const auto mark = [&](std::size_t at) {
                return at < text.size() && (text[at] == '#' || text[at] == '>');
            };
            const auto blank = [&](std::size_t at) {
                return at < text.size() && (text[at] == ' ' || text[at] == '\t');
            };
            if (mark(next) && (mark(next + 1) || blank(next + 1))) {  // "# ", "> > ", "## "
                std::size_t after = next;
                while (mark(after) || blank(after)) {
                    ++after;
                }
                i = after - 1;
            }
        }
        // A message inside a JSON or Python string: its escaped line breaks are white space.
        const bool escaped = c == '\\' && i + 1 < text.size() &&
                             (text[i + 1] == 'n' || text[i + 1] == 'r' || text[i + 1] == 't');
        i += escaped ? 1 : 0;
        const bool space = escaped || c == ' ' || c == '\t' || c == '\n' || c == '\r';
        if (!space) {
            line += c;
        } else if (!line.empty() && line.back() != ' ') {
            line += ' ';
        }
    }
    return line;
}

}  // namespace oomlab::oom_text
