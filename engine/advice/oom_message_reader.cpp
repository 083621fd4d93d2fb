// Reading PyTorch's out-of-memory messages by hand: the figures (oom_figures.h) of the one
// message oom_message_text.h finds in a text, as its wording names them.
#include <algorithm>
#include <utility>

#include "oom_figures.h"
#include "oom_message_text.h"
#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

using oom_figures::Figures;
using oom_text::last_message;
using oom_text::Marker;
using oom_text::marker_at_start;
using oom_text::one_line;
using oom_text::Span;

using Device = OomMessage::Device;

// What OomLogReader keeps: the stream's last kWindow to 2 * kWindow bytes.
constexpr std::size_t kWindow = 256 * 1024;
// The most an exception's module and class before a message take: "torch.cuda.OutOfMemoryError: ".
constexpr std::size_t kMention = 64;

// The cudaMallocAsync backend's message, its figures each on a line of its own:
// "Allocation on device 0 would exceed allowed memory. (out of memory)
//  Currently allocated     : 9.43 GiB
//  Requested               : 640.00 MiB
//  Device limit            : 11.59 GiB
//  Free (according to CUDA): 7.12 MiB
//  PyTorch limit (set by user-supplied memory fraction)
//                          : 17179869184.00 GiB"
OomMessage read_async_pool(const Figures& f, OomMessage m) {
    m.async_pool = true;
    m.pytorch_major = 2;
    m.allocated = f.after("currently allocated : ", "the memory PyTorch allocated");
    m.requested = f.after("requested : ", "the size asked for");
    m.total = f.after("device limit : ", "the GPU's total capacity");
    m.free = f.after("free (according to cuda): ", "the free memory");
    // Without a memory fraction the limit is 2**64 bytes, printed so: no limit, not a counter
    // gone wrong.
    if (!f.says("memory fraction) : 17179869184.00 gib")) {
        m.allowed = f.after("memory fraction) : ", "the memory allowed");
    }
    return m;
}

OomMessage read_cuda(const Figures& f) {
    OomMessage m;
    m.device = Device::Cuda;
    m.device_index = f.device_number();
    // "Allocation on device" alone: the same message, cut after its first words.
    if (f.says("would exceed allowed memory") || f.says("allocation on device")) {
        return read_async_pool(f, m);
    }
    if (f.says("out of resource: ")) {
        m.shared_memory = true;
        m.requested = f.count_after("required:", "the shared memory asked for");
        m.most_at_once = f.count_after("hardware limit:", "the shared memory a block has");
        if (!m.most_at_once) {  // as a poster reworded it
            m.most_at_once = f.count_after("hardware limitation:", "the shared memory a block has");
        }
        return m;
    }
    m.requested = f.after("tried to allocate ", "the size asked for");
    // 2.x: "GPU 0 has a total capacity of 79.14 GiB of which 3.56 MiB is free." (2.1 spelled
    // it "capacty"); 1.x: "(GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated;
    // 3.56 MiB free; 14.70 GiB reserved in total by PyTorch)".
    const char* total = "the GPU's total capacity";
    m.total = f.after("total capacity of ", total);
    m.total = m.total ? m.total : f.after("total capacty of ", total);
    m.total = m.total ? m.total : f.before(" total capacity", total);
    m.free = f.after("of which ", "the free memory", " is free");
    m.free = m.free ? m.free : f.after("; ", "the free memory", " free");
    m.allocated = f.before(" is allocated by pytorch", "the memory PyTorch allocated");
    m.allocated =
        m.allocated ? m.allocated : f.before(" already allocated", "the memory PyTorch allocated");
    // A post stored short may cut the last figure's label: "6.83 GiB rese", "9.29 GiB res";
    // " is re" at least, where " is " may begin another label.
    constexpr std::string_view kUnallocated = " is reserved by pytorch but unallocated";
    const char* unallocated_what = "the memory reserved, unallocated";
    std::optional<std::int64_t> unallocated = f.before(kUnallocated, unallocated_what);
    unallocated = unallocated ? unallocated : f.before_cut(kUnallocated, 6, unallocated_what);
    // PyTorch 1.0 said "3.46 GiB already allocated; ...; 60.00 KiB cached": cached but free.
    const std::optional<std::int64_t> cached = f.before(" cached", "the memory cached");
    if (unallocated && m.allocated) {
        m.reserved = *m.allocated + *unallocated;
        m.pytorch_major = 2;
    } else if (cached && m.allocated) {
        m.reserved = *m.allocated + *cached;
        m.pytorch_major = 1;
        m.cached_wording = true;
        m.before_settings = true;
    } else {
        constexpr std::string_view kReserved = " reserved in total by pytorch";
        const char* reserved_what = "the memory PyTorch reserved";
        m.reserved = f.before(kReserved, reserved_what);
        m.reserved = m.reserved ? m.reserved : f.before_cut(kReserved, 4, reserved_what);
        m.pytorch_major = m.reserved ? 1 : 0;
        m.reserved_from_total = m.reserved.has_value();
        m.before_settings = f.says("(malloc at ") && !f.says("max_split_size_mb");
    }
    if (m.pytorch_major == 0) {  // a message cut before its last figures: its words still tell
        m.pytorch_major =
            f.says("has a total capacity of") || f.says("total capacty of") || f.says(". gpu ") ? 2
            : f.says("total capacity;") || f.says("already allocated;")                         ? 1
                                                                                                : 0;
    }
    // Intel's extension: "Current platform can NOT allocate memory block with size larger than
    // 4GB!"; NCCL's "Failed to CUDA calloc 6291456 bytes".
    m.most_at_once = f.after("with size larger than ", "the largest allocation allowed");
    if (!m.requested) {
        m.requested = f.after("failed to cuda calloc ", "the size asked for");
    }
    if (!m.requested) {  // torch-directml's "Could not allocate tensor with 165150720 bytes."
        m.requested = f.after("could not allocate tensor with ", "the size asked for");
    }
    m.allowed = f.before(" allowed", "the memory allowed");
    // 2.x: "with 46.00 MiB allocated in private pools (e.g., CUDA Graphs)".
    m.private_pools = f.before(" allocated in private pools", "the memory in private pools");
    m.this_process = f.after("this process has ", "this process's memory", " memory in use");
    m.processes = f.processes();
    if (f.says("tried to allocate more than ")) {  // Ascend's "more than 1EB memory"
        m.requested.reset();
        m.set_aside.push_back(
            "the size asked for, \"more than 1EB\", is more than any device "
            "holds");
    }
    return m;
}

// The figures of the message `text` holds from its first words to its end.
OomMessage read_message(std::string_view text) {
    const std::string line = one_line(text);
    const Figures f(line);
    const Marker* begun = &marker_at_start(text);
    OomMessage m;
    if (begun->device == Device::Cuda) {
        m = read_cuda(f);
        m.pytorch_0x = begun->words.rfind("cuda runtime err", 0) == 0 ||
                       begun->words.rfind("error=2", 0) == 0 ||
                       begun->words.rfind("cuda error(2)", 0) == 0;
        m.before_settings = m.before_settings || m.pytorch_0x;
        m.thc_random_state = m.pytorch_0x && f.says("thctensorrandom");
        m.driver_level = begun->driver;
        m.failure = std::string(begun->failure);
    } else {
        m.device = begun->device;
    }
    m.backend = std::string(begun->backend);
    if (m.device == Device::Mps) {
        // "MPS backend out of memory (MPS allocated: 1.22 GB, other allocations: 6.32 GB, max
        // allowed: 9.07 GB). Tried to allocate 256.00 MB on private pool."
        m.backend = "MPS";
        m.allocated = f.after("mps allocated: ", "the memory MPS allocated");
        m.allowed = f.after("max allowed: ", "the memory MPS may use");
        m.requested = f.after("tried to allocate ", "the size asked for");
        if (!m.requested) {  // "Invalid buffer size: 19.38 GiB"
            m.requested = f.after("invalid buffer size: ", "the size asked for");
            m.failure = std::string(begun->failure);
        }
        if (const auto other = f.after("other allocations: ", "MPS's other allocations")) {
            m.other_allocations = other;
            m.this_process = *other + m.allocated.value_or(0);
        }
        m.decimal_unit_names = !f.says("gib") && !f.says("mib") && !f.says("kib");
    } else if (text.compare(0, 19, "DefaultCPUAllocator") == 0) {
        // "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1099511627776
        // bytes. Error code 12 (Cannot allocate memory)"; 1.x also "not enough memory".
        m.backend = "CPU";
        m.requested = f.after("you tried to allocate ", "the size asked for");
        m.system_error = f.system_error();
        m.windows_host = f.says("not enough memory");
        // Windows' builds of 1.x left the size out of its place: "you tried to allocate %dGB.
        // Buy new RAM!27", whole GiB (the bytes divided, rounded down) after the last words.
        constexpr std::string_view kUnfilled = "Buy new RAM!";
        if (const std::size_t at = text.find(kUnfilled); !m.requested && at != text.npos) {
            const std::size_t from = at + kUnfilled.size();
            std::size_t end = from;
            while (end < text.size() && end - from < 6 && oom_text::is_digit(text[end])) {
                ++end;
            }
            if (end > from) {
                m.requested_printed = std::string(text.substr(from, end - from)) + "GB";
                m.requested = std::stoll(std::string(text.substr(from, end - from))) << 30;
            }
        }
    } else if (text.compare(0, 24, "Torch: not enough memory") == 0) {
        // PyTorch 0.x's TH: "Torch: not enough memory: you tried to allocate 72GB. Buy new RAM!"
        m.backend = "CPU";
        m.requested = f.after("you tried to allocate ", "the size asked for");
        constexpr std::string_view kAsked = "you tried to allocate ";
        if (const std::size_t at = text.find(kAsked); at != std::string_view::npos && m.requested) {
            const std::size_t from = at + kAsked.size();
            const std::size_t end = text.find_first_of(". \n", from);
            m.requested_printed = std::string(text.substr(from, end - from));  // "72GB"
        }
    } else if (m.device == Device::Cpu) {
        m.backend = "CPU";
    }
    const std::vector<std::string> set_aside = f.figures_set_aside();
    m.set_aside.insert(m.set_aside.end(), set_aside.begin(), set_aside.end());
    return m;
}

// A process the kernel killed ("Killed", a DataLoader worker "killed by signal: Killed",
// torchrun's "exitcode: -9", a shell's 137) leaves no message of PyTorch's: Linux's
// out-of-memory killer ends a process that runs the host's memory out so.
bool says_killed(std::string_view text) {
    for (std::string_view words :
         {"Killed\n", "Killed\r", "signal: Killed", "exitcode: -9", "exit code: -9",
          "exit code 137", "exit status 137", "SIGKILL", "oom-kill", "Killed process"}) {
        if (oom_text::find_in(text, words) != std::string_view::npos) {
            return true;
        }
    }
    return text.size() >= 6 && text.compare(text.size() - 6, 6, "Killed") == 0;
}

[[noreturn]] void refuse_text(std::uint64_t size, std::string_view text) {
    throw BadInput(
        "no out-of-memory message of PyTorch in the text given (" + std::to_string(size) +
        " bytes); give the error's whole line, e.g. \"CUDA out of memory. Tried to allocate "
        "...\" or \"DefaultCPUAllocator: can't allocate memory ...\"" +
        (says_killed(text)
             ? std::string(". The text says a process was killed (\"Killed\", signal 9, exit "
                           "code -9 or 137): Linux's out-of-memory killer ends a process that "
                           "runs the host's memory out so, and PyTorch prints nothing; "
                           "`dmesg | grep -i -E 'killed process|out of memory'` says whether it "
                           "did")
             : std::string()));
}

std::string_view text_of(std::string_view text, const Span& span) {
    return text.substr(span.begin, span.end - span.begin);
}

// The figures of `message`, a view into `text` or a copy of it, a console's hard wraps undone.
OomMessage read_message_of(std::string_view text, std::string_view message) {
    return read_message(oom_text::without_hard_wraps(text, message));
}

int figures_in(const OomMessage& m) {
    return int(m.requested.has_value()) + int(m.total.has_value()) + int(m.free.has_value()) +
           int(m.allocated.has_value()) + int(m.reserved.has_value()) + int(m.allowed.has_value()) +
           int(m.this_process.has_value()) + int(!m.processes.empty());
}

// Whether `earlier` is the failure `later` mentions, printed whole: of the same wording, with
// more figures, and each figure `later` gives the same.
bool fuller_copy(const OomMessage& earlier, const OomMessage& later) {
    const auto agrees = [](const std::optional<std::int64_t>& whole,
                           const std::optional<std::int64_t>& mention) {
        return !mention || whole == mention;
    };
    return earlier.device == later.device && earlier.backend == later.backend &&
           earlier.driver_level == later.driver_level && earlier.failure == later.failure &&
           figures_in(earlier) > figures_in(later) && agrees(earlier.requested, later.requested) &&
           agrees(earlier.total, later.total) && agrees(earlier.free, later.free) &&
           agrees(earlier.allocated, later.allocated) && agrees(earlier.reserved, later.reserved);
}

// The message a text is read for: its last, unless that last only mentions the failure a
// message before it printed whole (a poster's "it still reports `CUDA out of memory`", a reply
// quoting the first sentence). A last message with the device's capacity is whole already.
// Without one, a fallback marker (a title's status in lower case, PyTorch's hint naming the
// runtime's error) where `fallbacks_too`.
std::optional<Span> message_to_read(std::string_view text, bool fallbacks_too = true) {
    const std::optional<Span> last = last_message(text);
    if (!last) {
        return fallbacks_too ? oom_text::fallback_message(text) : last;
    }
    const OomMessage later = read_message_of(text, text_of(text, *last));
    if (later.total || later.allowed) {
        return last;
    }
    // The words just before the mention ("error(torch.cuda.OutOfMemoryError: CUDA out of
    // memory") begin a message that runs into it: the same mention, passed over.
    std::size_t before = last->begin;
    std::optional<Span> earlier = last_message(text.substr(0, before));
    while (earlier && earlier->end == before && before - earlier->begin < kMention) {
        before = earlier->begin;
        earlier = last_message(text.substr(0, before));
    }
    try {
        return earlier && fuller_copy(read_message_of(text, text_of(text, *earlier)), later)
                   ? earlier
                   : last;
    } catch (const BadInput&) {  // a figure of the earlier one no device holds: not it
        return last;
    }
}

// The message with what the text around it tells (oom_text::read_context).
OomMessage read_message_in(std::string_view text, std::string_view message) {
    OomMessage m = read_message_of(text, message);
    oom_text::read_context(text, message, m);
    m.windows_host = m.windows_host || (m.allocated && m.total && *m.allocated > *m.total);
    return m;
}

// Another device's message before the one read (several ranks' logs in one text): said, since
// the explanation is of the last one alone.
std::optional<std::string> another_device_before(std::string_view text, const Span& read,
                                                 const OomMessage& m) {
    const std::optional<Span> earlier = last_message(text.substr(0, read.begin));
    if (!earlier || m.device_index < 0) {
        return std::nullopt;
    }
    try {
        const OomMessage other = read_message_of(text, text_of(text, *earlier));
        if (other.device == m.device && other.device_index >= 0 &&
            other.device_index != m.device_index) {
            const std::string device = m.backend == "NPU" || m.backend == "XPU" ? m.backend : "GPU";
            return "the text holds another message before this one, of " + device + " " +
                   std::to_string(other.device_index) +
                   " (another rank's or process's, most likely): this explains the last, of " +
                   device + " " + std::to_string(m.device_index) +
                   "; each device's message is its own";
        }
    } catch (const BadInput&) {  // an earlier copy with a figure no device holds: not said
    }
    return std::nullopt;
}

// The message `span` holds, explained, with another device's message before it said.
OomExplanation explain_span(std::string_view text, const Span& span) {
    const OomMessage m = read_message_in(text, text_of(text, span));
    OomExplanation e = explain_oom(m);
    if (const std::optional<std::string> other = another_device_before(text, span, m)) {
        e.facts.push_back(*other);
    }
    return e;
}

}  // namespace

OomExplanation explain_oom_message(const std::string& text) {
    const std::optional<Span> span = message_to_read(text);
    if (!span) {
        refuse_text(text.size(), text);
    }
    return explain_span(text, *span);
}

void OomLogReader::feed(std::string_view piece) {
    m_read += piece.size();
    while (!piece.empty()) {
        const std::size_t take = std::min(piece.size(), 2 * kWindow - m_window.size());
        m_window.append(piece.substr(0, take));
        piece.remove_prefix(take);
        if (m_window.size() < 2 * kWindow) {
            continue;
        }
        // The window slides by kWindow: a message that begins in what leaves it is kept,
        // whole (it ends within oom_text::kMostMessage < kWindow bytes, all of which are here).
        const std::size_t cut = m_window.size() - kWindow;
        if (const std::optional<Span> span = last_message(m_window); span && span->begin < cut) {
            m_earlier.assign(m_window, span->begin, span->end - span->begin);
        }
        m_window.erase(0, cut);
    }
}

OomExplanation OomLogReader::explain() const {
    if (const std::optional<Span> span = message_to_read(m_window, m_earlier.empty())) {
        return explain_span(m_window, *span);
    }
    if (m_earlier.empty()) {
        refuse_text(m_read, m_window);
    }
    return explain_oom(read_message_in(m_window, m_earlier));
}

}  // namespace oomlab
