// Reading PyTorch's out-of-memory messages by hand: the figures of the one message
// oom_message_text.h finds in a text. No std::regex: its matcher recursed once per
// character, and a number of 30,000 digits overflowed the stack. Every scan here is linear in
// the text, and a figure is read only where the message's wording puts one.
#include <algorithm>
#include <climits>
#include <cmath>
#include <utility>

#include "oom_message_text.h"
#include "oomlab/advice/oom_message.h"
#include "oomlab/common/errors.h"

namespace oomlab {
namespace {

using oom_text::is_digit;
using oom_text::last_message;
using oom_text::Marker;
using oom_text::marker_at_start;
using oom_text::one_line;
using oom_text::Span;

using Device = OomMessage::Device;
constexpr std::size_t kNone = std::string_view::npos;

// What OomLogReader keeps: the stream's last kWindow to 2 * kWindow bytes.
constexpr std::size_t kWindow = 256 * 1024;
// The longest number taken as a figure ("16777216.00" is 11 characters).
constexpr std::size_t kMostFigure = 30;
// 1 EiB: more than any device holds; sums of a few such figures still fit in 64 bits.
constexpr double kMostBytes = 1152921504606846976.0;
constexpr long long kMostDevice = 65535;
constexpr long long kMostCount = 1LL << 60;

struct Unit {
    std::string_view name;  // lower case: units are read in any case
    double scale;
};
constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024, kTiB = kGiB * 1024,
                 kPiB = kTiB * 1024;
// In the order tried: "PiB" before "B". PyTorch's MPS counts a "GB" as 1024 MB, as these do.
constexpr Unit kUnits[] = {{"pib", kPiB}, {"tib", kTiB}, {"gib", kGiB}, {"mib", kMiB},
                           {"kib", kKiB}, {"pb", kPiB},  {"tb", kTiB},  {"gb", kGiB},
                           {"mb", kMiB},  {"kb", kKiB},  {"bytes", 1},  {"b", 1}};

bool is_word(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// A figure as a message may quote it: its first characters.
std::string shown(std::string_view token) {
    return token.size() <= 24 ? std::string(token) : std::string(token.substr(0, 24)) + "...";
}

// The figures of one message, each found after or before the words PyTorch puts beside it.
class Figures {
public:
    explicit Figures(std::string_view text) : m_text(text), m_lower(text) {
        std::transform(m_lower.begin(), m_lower.end(), m_lower.begin(), [](char c) {
            return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        });
    }

    // The size right after the first `words` (lower case) that `then` follows, if given.
    std::optional<std::int64_t> after(std::string_view words, const char* what,
                                      std::string_view then = {}) const {
        for (std::size_t at = find(words, 0); at != kNone; at = find(words, at + 1)) {
            if (const auto size = size_at(at + words.size(), what, then)) {
                return size;
            }
        }
        return std::nullopt;
    }

    // The size right before the first `words` (lower case) that have one.
    std::optional<std::int64_t> before(std::string_view words, const char* what) const {
        for (std::size_t at = find(words, 0); at != kNone; at = find(words, at + 1)) {
            if (!followed_by(at, words)) {
                continue;
            }
            for (const Unit& unit : kUnits) {
                if (at < unit.name.size() + 1 ||
                    m_lower.compare(at - unit.name.size(), unit.name.size(), unit.name) != 0) {
                    continue;
                }
                std::size_t end = at - unit.name.size();
                end -= m_lower[end - 1] == ' ' ? 1 : 0;
                const std::size_t begin = digits_before(end);
                if (begin == end) {
                    break;
                }
                return bytes(begin, at, unit.scale, what);
            }
        }
        return std::nullopt;
    }

    // "GPU 1" (2.x) or "(GPU 0;" (1.x), Ascend's "(NPU 0;", the cudaMallocAsync backend's
    // "Allocation on device 0": the first device the message names; -1 when none.
    int device_number() const {
        // The backend's number is followed by its sentence: a log's next line may begin with
        // a date ("Allocation on device \n2024-12-16 ...").
        constexpr std::pair<std::string_view, std::string_view> kNames[] = {
            {"GPU ", ""}, {"NPU ", ""}, {"on device ", " would exceed"}};
        for (const auto& [name, then] : kNames) {
            for (std::size_t at = m_text.find(name); at != kNone; at = m_text.find(name, at + 1)) {
                const std::size_t begin = at + name.size();
                const std::size_t end = whole_end(begin);
                if (end != begin && m_text.compare(end, then.size(), then) == 0) {
                    return static_cast<int>(whole(begin, end, kMostDevice, "the GPU's number"));
                }
            }
        }
        return -1;
    }

    // The whole number of bytes after the first `words` (lower case) that have one, spaces
    // between allowed: Triton's "Required: 294912 Hardware limit:232448".
    std::optional<std::int64_t> count_after(std::string_view words, const char* what) const {
        for (std::size_t at = find(words, 0); at != kNone; at = find(words, at + 1)) {
            std::size_t begin = at + words.size();
            begin += begin < m_text.size() && m_text[begin] == ' ';
            const std::size_t end = whole_end(begin);
            if (end != begin) {
                return whole(begin, end, kMostCount, what);
            }
        }
        return std::nullopt;
    }

    // "Process 811 has 14.02 GiB memory in use": every process on the GPU.
    std::vector<std::pair<int, std::int64_t>> processes() const {
        std::vector<std::pair<int, std::int64_t>> result;
        constexpr std::string_view kWords = "Process ";
        for (std::size_t at = m_text.find(kWords); at != kNone; at = m_text.find(kWords, at + 1)) {
            const std::size_t begin = at + kWords.size();
            const std::size_t end = whole_end(begin);
            if (end == begin || m_text.compare(end, 5, " has ") != 0) {
                continue;
            }
            if (const auto held = size_at(end + 5, "a process's memory", " memory in use")) {
                result.emplace_back(whole(begin, end, INT_MAX, "a process id"), *held);
            }
        }
        return result;
    }

    // The figures read that no device could hold, in words, each once.
    std::vector<std::string> figures_set_aside() const { return set_aside(); }
    // Whether the message says `words` (lower case).
    bool says(std::string_view words) const { return find(words, 0) != kNone; }

    // "Error code 12 (Cannot allocate memory)": the system's words.
    std::optional<std::string> system_error() const {
        const std::size_t at = m_text.find("Error code ");
        const std::size_t open = at == kNone ? kNone : whole_end(at + 11);
        if (open == kNone || m_text.compare(open, 2, " (") != 0) {
            return std::nullopt;
        }
        const std::size_t close = m_text.find(')', open + 2);
        if (close == kNone || close - open > 200) {
            return std::nullopt;
        }
        return std::string(m_text.substr(open + 2, close - open - 2));
    }

private:
    // The size "[0-9]+(.[0-9]+)? ?UNIT" at `begin`, where `then` follows it.
    std::optional<std::int64_t> size_at(std::size_t begin, const char* what,
                                        std::string_view then) const {
        const std::size_t number = digits_from(begin);
        if (number == begin) {
            return std::nullopt;
        }
        const std::size_t unit = number + (number < m_lower.size() && m_lower[number] == ' ');
        const Unit* found = unit_at(unit);
        if (found == nullptr || !followed_by(unit + found->name.size(), then)) {
            return std::nullopt;
        }
        return bytes(begin, unit + found->name.size(), found->scale, what);
    }
    std::size_t find(std::string_view words, std::size_t from) const {
        return std::string_view(m_lower).find(words, from);
    }
    // `then` at `at`, and not as the start of a longer word.
    bool followed_by(std::size_t at, std::string_view then) const {
        const std::size_t end = at + then.size();
        return m_lower.compare(at, then.size(), then) == 0 &&
               (then.empty() || end >= m_lower.size() || !is_word(then.back()) ||
                !is_word(m_lower[end]));
    }
    const Unit* unit_at(std::size_t at) const {
        for (const Unit& unit : kUnits) {
            if (followed_by(at, unit.name)) {
                return &unit;
            }
        }
        return nullptr;
    }
    // The end of the number [0-9]+(\.[0-9]+)? that begins at `begin` (`begin` when none).
    std::size_t digits_from(std::size_t begin) const {
        std::size_t end = begin;
        while (end < m_text.size() && is_digit(m_text[end])) {
            ++end;
        }
        if (end > begin && end + 1 < m_text.size() && m_text[end] == '.' &&
            is_digit(m_text[end + 1])) {
            for (++end; end < m_text.size() && is_digit(m_text[end]);) {
                ++end;
            }
        }
        return end;
    }
    std::size_t whole_end(std::size_t begin) const {
        while (begin < m_text.size() && is_digit(m_text[begin])) {
            ++begin;
        }
        return begin;
    }
    // The start of that number ending at `end` (`end` when none).
    std::size_t digits_before(std::size_t end) const {
        std::size_t begin = end;
        while (begin > 0 && is_digit(m_text[begin - 1])) {
            --begin;
        }
        if (begin != end && begin >= 2 && m_text[begin - 1] == '.' && is_digit(m_text[begin - 2])) {
            for (--begin; begin > 0 && is_digit(m_text[begin - 1]);) {
                --begin;
            }
        }
        return begin;
    }
    // The number from `begin` to `end` times `scale`; one longer than any figure PyTorch prints
    // is refused, and one past any device's size (PyTorch has printed a counter gone below
    // zero as 17179869184.00 GiB) is set aside, said so in `set_aside`.
    std::optional<std::int64_t> bytes(std::size_t begin, std::size_t end, double scale,
                                      const char* what) const {
        const std::size_t number_end = digits_from(begin);
        const std::string_view token = m_text.substr(begin, end - begin);
        if (number_end - begin > kMostFigure) {
            throw BadInput(std::string(what) + ", \"" + shown(token) + "\" (a number of " +
                           std::to_string(number_end - begin) +
                           " characters), is longer than any figure PyTorch prints; this reader "
                           "takes numbers of at most " +
                           std::to_string(kMostFigure) + " characters");
        }
        double mantissa = 0;
        double divisor = 1;
        bool point = false;
        for (std::size_t i = begin; i < number_end; ++i) {
            if (m_text[i] == '.') {
                point = true;
                continue;
            }
            mantissa = mantissa * 10 + (m_text[i] - '0');
            divisor *= point ? 10 : 1;
        }
        const double value = mantissa / divisor * scale;
        if (!(value <= kMostBytes)) {
            m_set_aside.push_back(std::string(what) + ", \"" + shown(token) +
                                  "\", is more than 1 EiB, more than any device holds");
            return std::nullopt;
        }
        return static_cast<std::int64_t>(std::llround(value));
    }
    // The figures read that no device could hold, in words, each once.
    std::vector<std::string> set_aside() const {
        std::vector<std::string> unique;
        for (const std::string& item : m_set_aside) {
            if (std::find(unique.begin(), unique.end(), item) == unique.end()) {
                unique.push_back(item);
            }
        }
        return unique;
    }

    // The whole number from `begin` to `end`, from 0 to `most`.
    long long whole(std::size_t begin, std::size_t end, long long most, const char* what) const {
        long long value = 0;
        for (std::size_t i = begin; i < end; ++i) {
            if (value > (most - (m_text[i] - '0')) / 10) {
                throw BadInput(std::string(what) + ", \"" +
                               shown(m_text.substr(begin, end - begin)) +
                               "\", is out of range: expected a whole number from 0 to " +
                               std::to_string(most));
            }
            value = value * 10 + (m_text[i] - '0');
        }
        return value;
    }

    std::string_view m_text;
    std::string m_lower;
    mutable std::vector<std::string> m_set_aside;
};

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
    if (f.says("would exceed allowed memory")) {
        return read_async_pool(f, m);
    }
    if (f.says("out of resource: ")) {
        m.shared_memory = true;
        m.requested = f.count_after("required:", "the shared memory asked for");
        m.most_at_once = f.count_after("hardware limit:", "the shared memory a block has");
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
    const std::optional<std::int64_t> unallocated =
        f.before(" is reserved by pytorch but unallocated", "the memory reserved, unallocated");
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
        m.reserved = f.before(" reserved in total by pytorch", "the memory PyTorch reserved");
        m.pytorch_major = m.reserved ? 1 : 0;
        m.reserved_from_total = m.reserved.has_value();
        m.before_settings = f.says("(malloc at ") && !f.says("max_split_size_mb");
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
        m.thc_wording =
            begun->words.rfind("cuda runtime err", 0) == 0 || begun->words.rfind("error=2", 0) == 0;
        m.before_settings = m.before_settings || m.thc_wording;
        m.thc_random_state = m.thc_wording && f.says("thctensorrandom");
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

[[noreturn]] void refuse_text(std::uint64_t size) {
    throw BadInput(
        "no out-of-memory message of PyTorch in the text given (" + std::to_string(size) +
        " bytes); give the error's whole line, e.g. \"CUDA out of memory. Tried to allocate "
        "...\" or \"DefaultCPUAllocator: can't allocate memory ...\"");
}

// The message with what the text around it tells: Windows' paths in its traceback.
OomMessage read_message_in(std::string_view text, std::string_view message) {
    OomMessage m = read_message(message);
    m.windows_host = m.windows_host || oom_text::windows_paths(text) ||
                     (m.allocated && m.total && *m.allocated > *m.total);
    return m;
}

}  // namespace

OomExplanation explain_oom_message(const std::string& text) {
    const std::optional<Span> span = last_message(text);
    if (!span) {
        refuse_text(text.size());
    }
    return explain_oom(
        read_message_in(text, std::string_view(text).substr(span->begin, span->end - span->begin)));
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
    std::string_view message = m_earlier;
    if (const std::optional<Span> span = last_message(m_window)) {
        message = std::string_view(m_window).substr(span->begin, span->end - span->begin);
    }
    if (message.empty()) {
        refuse_text(m_read);
    }
    return explain_oom(read_message_in(m_window, message));
}

}  // namespace oomlab
