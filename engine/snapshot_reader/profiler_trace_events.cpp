#include "profiler_trace_events.h"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "oomlab/common/errors.h"
#include "oomlab/common/json_parse.h"
#include "oomlab/common/utf8.h"

namespace oomlab::snapshot {
namespace {

using Json = nlohmann::json;

// The keys of one open object, to refuse one given twice. Objects of a trace hold a handful of
// keys, searched in place; a hostile object of a million keys is hashed instead.
class KeySet {
public:
    bool insert(const std::string& key) {
        if (m_hashed) {
            return m_hashed->insert(key).second;
        }
        for (const std::string& seen : m_few) {
            if (seen == key) {
                return false;
            }
        }
        m_few.push_back(key);
        if (m_few.size() > kFew) {
            m_hashed =
                std::make_unique<std::unordered_set<std::string>>(m_few.begin(), m_few.end());
            m_few.clear();
        }
        return true;
    }

private:
    static constexpr std::size_t kFew = 16;
    std::vector<std::string> m_few;
    std::unique_ptr<std::unordered_set<std::string>> m_hashed;
};

// What an open object or list is to the trace.
enum class Role {
    Root,     // the document's object (holding "traceEvents")
    Events,   // the list of events: "traceEvents", or the document when it is a list
    Event,    // one event of that list
    Args,     // the event's "args"
    Dims,     // its "Input Dims", and each list in it
    Scalars,  // its "Concrete Inputs"
    Types,    // its "Input type"
    Other,    // anything else: its limits are checked, its contents skipped
};

struct Open {
    Role role;
    bool object;
    KeySet keys;
    std::string key;  // the last key read, naming the value that follows
};

// One event's fields, as they are read.
struct EventFields {
    std::optional<std::string> name;
    std::string phase;
    std::string category;
    std::string thread;
    double ts = 0;
    double dur = 0;
    std::int64_t device_type = 0;
    std::int64_t device_id = 0;
    std::int64_t address = 0;
    std::int64_t bytes = 0;
    std::int64_t total_allocated = 0;
    std::int64_t total_reserved = 0;
    std::int64_t sequence = -1;
    TraceOpInputs inputs;
};

// A number as the trace's integers are read: a fraction truncated, what no 64-bit integer
// holds taken as 0.
std::int64_t whole(double value) {
    return std::isfinite(value) && std::fabs(value) < 9.2e18 ? static_cast<std::int64_t>(value) : 0;
}

// RapidJSON's SAX handler: each callback returns true to go on (a refusal is thrown).
class TraceReader {
public:
    explicit TraceReader(const std::string& source) : m_source(source) {}

    bool Null() {
        return scalar(std::nullopt, 0, [] { return std::string("null"); });
    }
    bool Bool(bool value) {
        if (value && !m_open.empty() && m_open.back().role == Role::Root &&
            m_open.back().key == "profile_memory") {
            m_trace.profile_memory = true;
        }
        return scalar(std::nullopt, 0, [value] { return std::string(value ? "true" : "false"); });
    }
    bool Int(int value) { return Int64(value); }
    bool Uint(unsigned value) { return Int64(value); }
    bool Int64(std::int64_t value) {
        return scalar(double(value), value, [value] { return std::to_string(value); });
    }
    bool Uint64(std::uint64_t value) {
        const auto integer = value > std::uint64_t(INT64_MAX) ? 0 : std::int64_t(value);
        return scalar(double(value), integer, [value] { return std::to_string(value); });
    }
    bool Double(double value) {
        return scalar(value, whole(value), [value] { return Json(value).dump(); });
    }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return true; }  // not asked for
    bool String(const char* text, rapidjson::SizeType length, bool) {
        const std::string_view value(text, length);
        if (!m_open.empty() && m_open.back().role == Role::Events) {
            not_an_event("the text " + quoted_excerpt(value));
        }
        if (!m_open.empty() && m_open.back().role == Role::Scalars && keeping_inputs()) {
            m_event.inputs.concrete.emplace_back(value);
        } else if (!m_open.empty() && m_open.back().role == Role::Types && keeping_inputs() &&
                   m_event.inputs.first_type.empty()) {
            m_event.inputs.first_type = value;
        }
        if (m_open.empty() || m_open.back().role != Role::Event) {
            return true;
        }
        const std::string& key = m_open.back().key;
        if (key == "name") {
            m_event.name = std::string(value);
        } else if (key == "ph") {
            m_event.phase = value;
        } else if (key == "cat") {
            m_event.category = value;
        } else if (key == "tid") {
            m_event.thread = Json(std::string(value)).dump();
        }
        return true;
    }

    bool StartObject() {
        open(child_role(/*object=*/true), true);
        if (m_open.back().role == Role::Event) {
            m_event = {};
        }
        return true;
    }
    bool Key(const char* text, rapidjson::SizeType length, bool) {
        std::string name(text, length);
        Open& object = m_open.back();
        if (!object.keys.insert(name)) {
            throw bad_input_at(m_source, 0,
                               "the key " + quoted_excerpt(name) +
                                   " appears twice in one object; keep one (which one is meant "
                                   "is not guessed)");
        }
        object.key = std::move(name);
        return true;
    }
    bool EndObject(rapidjson::SizeType) {
        if (m_open.back().role == Role::Event) {
            keep_event();
            ++m_events;
        }
        m_open.pop_back();
        return true;
    }
    bool StartArray() {
        if (!m_open.empty() && m_open.back().role == Role::Events) {
            not_an_event("a list");
        }
        open(child_role(/*object=*/false), false);
        if (m_open.back().role == Role::Events) {
            m_found_events = true;
        } else if (m_open.back().role == Role::Dims) {
            start_dims();
        }
        return true;
    }
    bool EndArray(rapidjson::SizeType) {
        if (m_open.back().role == Role::Dims && m_dims_depth-- == 3) {
            m_first_tensor_read = true;
        }
        m_open.pop_back();
        return true;
    }
    TraceEvents take() {
        if (!m_found_events) {
            throw BadInput(m_source + ": JSON, but no Chrome trace (no \"traceEvents\" list)");
        }
        return std::move(m_trace);
    }

private:
    Role child_role(bool object) const {
        if (m_open.empty()) {
            return object ? Role::Root : Role::Events;
        }
        const Open& parent = m_open.back();
        switch (parent.role) {
            case Role::Root:
                return !object && parent.key == "traceEvents" ? Role::Events : Role::Other;
            case Role::Events:
                return object ? Role::Event : Role::Other;
            case Role::Event:
                return object && parent.key == "args" ? Role::Args : Role::Other;
            case Role::Args:
                return object                            ? Role::Other
                       : parent.key == "Input Dims"      ? Role::Dims
                       : parent.key == "Concrete Inputs" ? Role::Scalars
                       : parent.key == "Input type"      ? Role::Types
                                                         : Role::Other;
            case Role::Dims:
                return object ? Role::Other : Role::Dims;
            case Role::Scalars:
            case Role::Types:
            case Role::Other:
                break;
        }
        return Role::Other;
    }

    // Every item of the events list is an event, an object: a list of a billion numbers is
    // refused at its first, not read to its end.
    // A list of lists first: what export_memory_timeline writes, said before what it is not.
    [[noreturn]] void not_an_event(const std::string& item) const {
        if (item == "a list" && m_events == 0) {
            throw BadInput(m_source +
                           ": the rows export_memory_timeline writes to a .raw.json ([time, "
                           "action, bytes, category] each), not a Chrome trace of PyTorch's "
                           "profiler: give this reader the trace itself, exported with "
                           "prof.export_chrome_trace(\"trace.json\") from a profile recorded "
                           "with profile_memory=True, or a memory snapshot "
                           "(torch.cuda.memory._dump_snapshot)");
        }
        throw BadInput(m_source + ": item " + std::to_string(m_events + 1) +
                       " of the events list is " + item +
                       ", not an event (an object); this is not a Chrome trace of PyTorch's "
                       "profiler");
    }

    // Whether the event's inputs are kept: every op carries them once shapes are recorded, and
    // all but a few are dropped. PyTorch writes an event's name before its args; where a file
    // does not, they are read and dropped at the event's end.
    bool keeping_inputs() const { return !m_event.name || keeps_inputs(*m_event.name); }

    // "Input Dims" is a list (depth 1) of each input's dims (depth 2): a tensor's numbers, or a
    // list of tensors' lists (depth 3), of which the first is kept.
    void start_dims() {
        ++m_dims_depth;
        if (m_dims_depth == 2 && keeping_inputs()) {
            m_event.inputs.dims.emplace_back();
            m_first_tensor_read = false;
        }
    }
    void dim(std::int64_t value) {
        if (keeping_inputs() &&
            (m_dims_depth == 2 || (m_dims_depth == 3 && !m_first_tensor_read))) {
            m_event.inputs.dims.back().push_back(value);
        }
    }

    void open(Role role, bool object) {
        if (int(m_open.size()) >= kMaxJsonDepth) {
            throw bad_input_at(m_source, 0,
                               "nested more than " + std::to_string(kMaxJsonDepth) +
                                   " levels deep; this is not a file OOM Lab reads");
        }
        m_open.push_back({role, object, {}, {}});
    }

    // A number, true, false or null: `number` and `integer` where it is a number; `text()` as
    // JSON writes it, made only where it is used (a trace's millions of numbers need none).
    template <typename Text>
    bool scalar(std::optional<double> number, std::int64_t integer, const Text& text) {
        if (m_open.empty()) {
            return true;
        }
        const Open& at = m_open.back();
        if (at.role == Role::Events) {
            not_an_event(text());
        }
        if (at.role == Role::Root && at.key == "profile_memory" && number) {
            m_trace.profile_memory = integer != 0;  // 1, as PyTorch writes it
        }
        m_trace.rocm |= at.role == Role::Root && at.key == "hip_runtime_version";
        if (at.role == Role::Event) {
            if (at.key == "tid") {
                m_event.thread = text();
            } else if (at.key == "ts" && number) {
                m_event.ts = *number;
            } else if (at.key == "dur" && number) {
                m_event.dur = *number;
            }
        } else if (at.role == Role::Dims && number) {
            dim(integer);
        } else if (at.role == Role::Args && number) {
            std::int64_t* field = at.key == "Device Type"       ? &m_event.device_type
                                  : at.key == "Device Id"       ? &m_event.device_id
                                  : at.key == "Addr"            ? &m_event.address
                                  : at.key == "Bytes"           ? &m_event.bytes
                                  : at.key == "Total Allocated" ? &m_event.total_allocated
                                  : at.key == "Total Reserved"  ? &m_event.total_reserved
                                  : at.key == "Sequence number" ? &m_event.sequence
                                                                : nullptr;
            if (field) {
                *field = integer;
            }
        }
        return true;
    }

    void keep_event() {
        if (!m_event.name) {
            return;
        }
        if (*m_event.name == "[memory]") {
            m_trace.memory[{m_event.device_type, m_event.device_id}].push_back(
                {m_event.ts, m_event.address, m_event.bytes, m_event.total_allocated,
                 m_event.total_reserved, std::move(m_event.thread)});
        } else if (m_event.phase == "X" &&
                   // Kineto's names since 2021; its first ones ("Kernel", "Memcpy") before.
                   (m_event.category == "kernel" || m_event.category == "gpu_memcpy" ||
                    m_event.category == "gpu_memset" || m_event.category == "Kernel" ||
                    m_event.category == "Memcpy" || m_event.category == "Memset")) {
            ++m_trace.gpu_kernels;  // the GPU's own timeline: no span of the program's
        } else if (m_event.phase == "X") {
            std::shared_ptr<const TraceOpInputs> inputs;
            if (!m_event.inputs.dims.empty() && keeps_inputs(*m_event.name)) {
                inputs = std::make_shared<const TraceOpInputs>(std::move(m_event.inputs));
            }
            m_trace.spans[m_event.thread].push_back(
                {m_event.ts, m_event.ts + m_event.dur, std::move(*m_event.name),
                 m_event.category == "python_function", m_event.category == "user_annotation",
                 m_event.sequence < 0 ? kNoSequence : std::uint32_t(m_event.sequence),
                 std::move(inputs)});
        }
    }

    const std::string& m_source;
    std::vector<Open> m_open;
    EventFields m_event;
    bool m_found_events = false;
    std::size_t m_events = 0;          // read so far
    int m_dims_depth = 0;              // the lists of "Input Dims" open
    bool m_first_tensor_read = false;  // of the input being read, a list of tensors
    TraceEvents m_trace;
};

// The input as RapidJSON's reader takes it: a byte at a time from the chunk in hand, the
// next chunk read when that one is done. Lines are counted a chunk at a time, for messages.
class ChunkStream {
public:
    using Ch = char;

    ChunkStream(PickleInput& input, const std::function<void()>& after_chunk)
        : m_input(input), m_after_chunk(after_chunk) {}

    Ch Peek() { return m_at < m_end || refill() ? *m_at : '\0'; }
    Ch Take() {
        const Ch next = Peek();
        if (m_at < m_end) {
            ++m_at;
        }
        return next;
    }
    std::size_t Tell() const { return m_before + std::size_t(m_at - begin()); }
    // Writing is for parsing in place, which is not asked for.
    Ch* PutBegin() { return nullptr; }
    void Put(Ch) {}
    void Flush() {}
    std::size_t PutEnd(Ch*) { return 0; }

    // The line the reader has come to, and whether it stopped at a zero byte (which RapidJSON
    // takes for the end) rather than at the end.
    std::size_t line() const { return m_lines + std::size_t(std::count(begin(), m_at, '\n')); }
    bool at_zero_byte() const {
        return (m_at < m_end && *m_at == '\0') || (m_at > begin() && m_at[-1] == '\0');
    }

private:
    const char* begin() const { return m_chunk.data(); }
    bool refill() {
        if (m_done) {
            return false;  // RapidJSON peeks at the end more than once
        }
        m_lines += std::size_t(std::count(begin(), m_end, '\n'));
        m_before += std::size_t(m_end - begin());
        const std::size_t got = m_input.read(m_chunk.data(), m_chunk.size());
        if (m_after_chunk) {
            m_after_chunk();
        }
        m_at = m_chunk.data();
        m_end = m_chunk.data() + got;
        if (m_before == 0 && got >= 3 && std::memcmp(m_at, "\xEF\xBB\xBF", 3) == 0) {
            m_at += 3;  // UTF-8's byte order mark, which some editors write
        }
        m_done = got == 0;
        return !m_done;
    }

    PickleInput& m_input;
    const std::function<void()>& m_after_chunk;
    std::vector<char> m_chunk = std::vector<char>(std::size_t(1) << 16);
    const char* m_at = m_chunk.data();
    const char* m_end = m_chunk.data();
    std::size_t m_before = 0;  // bytes of the chunks before this one
    std::size_t m_lines = 0;   // line breaks in them
    bool m_done = false;       // the input's end reached
};

}  // namespace

bool keeps_inputs(const std::string& op) {
    return op == "aten::lstm" || op == "aten::gru" || op == "aten::convolution" ||
           op == "aten::convolution_backward" || op == kMathAttentionOp || op == "aten::dropout" ||
           op == "aten::sum";
}

TraceEvents read_trace_events(PickleInput& input, const std::string& source,
                              const std::function<void()>& after_chunk) {
    ChunkStream stream(input, after_chunk);
    TraceReader reader(source);
    rapidjson::Reader parser;
    // Iterative (no recursion however deep, though the reader stops at 64 levels), strict UTF-8,
    // and NaN and Infinity taken as Python's json module writes them.
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                                rapidjson::kParseValidateEncodingFlag |
                                rapidjson::kParseNanAndInfFlag;
    const rapidjson::ParseResult result = parser.Parse<kFlags>(stream, reader);
    if (result.IsError()) {
        const std::string why =
            stream.at_zero_byte()   ? "it holds a zero byte: this is not a text file"
            : stream.Peek() == '\0' ? "the file ends before the document does"
                                    : rapidjson::GetParseError_En(result.Code());
        throw bad_input_at(source, stream.line() + 1,
                           "not a Chrome trace of PyTorch's profiler (" + why + ", at byte " +
                               std::to_string(result.Offset()) +
                               "); export one with prof.export_chrome_trace(\"trace.json\")");
    }
    return reader.take();
}

}  // namespace oomlab::snapshot
