#include "oomlab/advice/oom_message.h"

#include <cmath>
#include <regex>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab {
namespace {

// Longer text is a log, not a message: the message is in its first megabyte or not at all.
constexpr std::size_t kMostText = 1 << 20;
// A size as PyTorch prints it: "20.00 MiB", "1.5 GiB", "4096 bytes".
const std::string kSize =
    R"(([0-9]+(?:\.[0-9]+)?) ?(PiB|TiB|GiB|MiB|KiB|PB|TB|GB|MB|KB|bytes|B)\b)";

std::int64_t bytes_of(const std::string& number, const std::string& unit) {
    static const std::pair<const char*, double> kUnits[] = {{"PiB", 1125899906842624.0},
                                                            {"TiB", 1099511627776.0},
                                                            {"GiB", 1073741824.0},
                                                            {"MiB", 1048576.0},
                                                            {"KiB", 1024.0},
                                                            {"PB", 1125899906842624.0},
                                                            {"TB", 1099511627776.0},
                                                            {"GB", 1073741824.0},
                                                            {"MB", 1048576.0},
                                                            {"KB", 1024.0}};
    double scale = 1;
    for (const auto& [name, factor] : kUnits) {
        if (unit == name) {
            scale = factor;
        }
    }
    return static_cast<std::int64_t>(std::llround(std::stod(number) * scale));
}

// The first size after which `before` comes and before which `after` comes, in `text`.
std::optional<std::int64_t> size_in(const std::string& text, const std::string& before,
                                    const std::string& after = "") {
    const std::regex pattern(before + kSize + after, std::regex::icase);
    std::smatch match;
    if (!std::regex_search(text, match, pattern)) {
        return std::nullopt;
    }
    return bytes_of(match[1], match[2]);
}

OomMessage read_cuda(const std::string& text) {
    OomMessage m;
    m.device = OomMessage::Device::Cuda;
    std::smatch match;
    if (std::regex_search(text, match, std::regex(R"(GPU (\d+))"))) {
        m.device_index = std::stoi(match[1]);
    }
    m.requested = size_in(text, R"(Tried to allocate )");
    // 2.x: "GPU 0 has a total capacity of 79.14 GiB of which 3.56 MiB is free." (2.1 spelled
    // it "capacty"); 1.x: "(GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated;
    // 3.56 MiB free; 14.70 GiB reserved in total by PyTorch)".
    m.total = size_in(text, R"(total capac(?:i)?ty of )");
    if (!m.total) {
        m.total = size_in(text, "", R"( total capacity)");
    }
    m.free = size_in(text, R"(of which )", R"( is free)");
    if (!m.free) {
        m.free = size_in(text, R"(; )", R"( free\b)");
    }
    m.allocated = size_in(text, "", R"( is allocated by PyTorch)");
    if (!m.allocated) {
        m.allocated = size_in(text, "", R"( already allocated)");
    }
    const std::optional<std::int64_t> unallocated =
        size_in(text, "", R"( is reserved by PyTorch but unallocated)");
    if (unallocated && m.allocated) {
        m.reserved = *m.allocated + *unallocated;
        m.pytorch_major = 2;
    } else {
        m.reserved = size_in(text, "", R"( reserved in total by PyTorch)");
        m.pytorch_major = m.reserved ? 1 : 0;
    }
    m.allowed = size_in(text, "", R"( allowed)");
    m.this_process = size_in(text, R"(this process has )", R"( memory in use)");
    const std::regex process(R"(Process (\d+) has )" + kSize + R"( memory in use)");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), process);
         it != std::sregex_iterator(); ++it) {
        m.processes.emplace_back(std::stoi((*it)[1]), bytes_of((*it)[2], (*it)[3]));
    }
    return m;
}

std::optional<OomMessage> read_message(const std::string& text) {
    if (text.find("CUDA out of memory") != std::string::npos ||
        text.find("OutOfMemoryError") != std::string::npos) {
        return read_cuda(text);
    }
    std::smatch match;
    // "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1099511627776 bytes.
    // Error code 12 (Cannot allocate memory)"; 1.x also "not enough memory".
    if (std::regex_search(text, match,
                          std::regex(R"(DefaultCPUAllocator: (?:can't allocate memory|not enough )"
                                     R"(memory): you tried to allocate (\d+) bytes)"))) {
        OomMessage m;
        m.device = OomMessage::Device::Cpu;
        m.requested = std::stoll(match[1]);
        if (std::regex_search(text, match, std::regex(R"(Error code \d+ \(([^)]*)\))"))) {
            m.system_error = match[1];
        }
        return m;
    }
    // "MPS backend out of memory (MPS allocated: 1.22 GB, other allocations: 6.32 GB, max
    // allowed: 9.07 GB). Tried to allocate 256.00 MB on private pool."
    if (text.find("MPS backend out of memory") != std::string::npos) {
        OomMessage m;
        m.device = OomMessage::Device::Mps;
        m.allocated = size_in(text, R"(MPS allocated: )");
        m.allowed = size_in(text, R"(max allowed: )");
        m.requested = size_in(text, R"(Tried to allocate )");
        if (const auto other = size_in(text, R"(other allocations: )")) {
            m.this_process = *other + m.allocated.value_or(0);
        }
        return m;
    }
    if (text.find("std::bad_alloc") != std::string::npos) {
        OomMessage m;
        m.device = OomMessage::Device::Cpu;
        return m;
    }
    return std::nullopt;
}

std::string bytes(std::optional<std::int64_t> value) {
    return value ? format_bytes(*value) : "?";
}

void explain_cuda(OomExplanation& e) {
    const OomMessage& m = e.message;
    const std::string gpu =
        m.device_index >= 0 ? "GPU " + std::to_string(m.device_index) : "the GPU";
    const std::int64_t requested = m.requested.value_or(0);
    const std::int64_t reserved = m.reserved.value_or(m.allocated.value_or(0));
    const std::int64_t unallocated = reserved - m.allocated.value_or(reserved);
    // What neither PyTorch's blocks nor the free memory account for: the CUDA context, other
    // libraries in this process, other processes.
    const bool known_elsewhere = m.total.has_value() && m.free.has_value();
    const std::int64_t elsewhere = known_elsewhere ? *m.total - *m.free - reserved : 0;
    const std::int64_t limit = m.allowed.value_or(m.total.value_or(0));

    e.facts.push_back("asked for " + bytes(m.requested) + " on " + gpu + " of " + bytes(m.total) +
                      ", of which " + bytes(m.free) + " was free");
    e.facts.push_back("PyTorch's tensors held " + bytes(m.allocated) + "; its allocator " +
                      bytes(m.reserved) + " in all, " + format_bytes(unallocated) +
                      " of it cached but free (reserved, unallocated)");
    if (m.allowed) {
        e.facts.push_back("this process may use " + format_bytes(*m.allowed) +
                          " (torch.cuda.set_per_process_memory_fraction)");
    }
    if (known_elsewhere) {
        e.facts.push_back(format_bytes(elsewhere) +
                          " of the GPU was held outside PyTorch's allocator in this process: the "
                          "CUDA context (a few hundred MiB), other libraries, other processes");
    }
    for (const auto& [pid, held] : m.processes) {
        e.facts.push_back("process " + std::to_string(pid) + " held " + format_bytes(held));
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
    e.summary = "Out of memory: the tensors alive held " + bytes(m.allocated) + ", and the next " +
                format_bytes(requested) + " did not fit in what was left.";
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
    const char* where = m.device == OomMessage::Device::Mps ? "the Apple GPU (MPS)" : "the host";
    e.facts.push_back("asked " + std::string(where) + " for " + bytes(m.requested) +
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

}  // namespace

OomExplanation explain_oom_message(const std::string& text) {
    const std::string head = text.substr(0, kMostText);
    std::optional<OomMessage> message = read_message(head);
    if (!message) {
        throw BadInput(
            "no out-of-memory message of PyTorch in the text given (" +
            std::to_string(text.size()) +
            " bytes); give the error's whole line, e.g. \"CUDA out of memory. Tried to allocate "
            "...\" or \"DefaultCPUAllocator: can't allocate memory ...\"");
    }
    OomExplanation explanation;
    explanation.message = *message;
    if (message->device == OomMessage::Device::Cuda) {
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
        case OomVerdict::OutOfMemory:
            break;
    }
    return "out_of_memory";
}

std::string oom_explanation_json(const OomExplanation& e) {
    using Json = nlohmann::ordered_json;
    const auto figure = [](const std::optional<std::int64_t>& value) {
        return value ? Json(*value) : Json(nullptr);
    };
    const OomMessage& m = e.message;
    Json processes = Json::array();
    for (const auto& [pid, held] : m.processes) {
        processes.push_back({{"pid", pid}, {"bytes", held}});
    }
    const char* device = m.device == OomMessage::Device::Cuda  ? "cuda"
                         : m.device == OomMessage::Device::Mps ? "mps"
                                                               : "cpu";
    const Json document = {{"verdict", oom_verdict_name(e.verdict)},
                           {"pytorch_major", m.pytorch_major},
                           {"summary", e.summary},
                           {"device", device},
                           {"device_index", m.device_index},
                           {"requested_bytes", figure(m.requested)},
                           {"total_bytes", figure(m.total)},
                           {"free_bytes", figure(m.free)},
                           {"allocated_bytes", figure(m.allocated)},
                           {"reserved_bytes", figure(m.reserved)},
                           {"allowed_bytes", figure(m.allowed)},
                           {"this_process_bytes", figure(m.this_process)},
                           {"processes", processes},
                           {"facts", e.facts},
                           {"tries", e.tries}};
    return document.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oomlab
