#include "profiler_trace_events.h"

#include <cmath>
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
    Root,    // the document's object (holding "traceEvents")
    Events,  // the list of events: "traceEvents", or the document when it is a list
    Event,   // one event of that list
    Args,    // the event's "args"
    Other,   // anything else: its limits are checked, its contents skipped
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
};

// A number as the trace's integers are read: a fraction truncated, what no 64-bit integer
// holds taken as 0.
std::int64_t whole(double value) {
    return std::isfinite(value) && std::fabs(value) < 9.2e18 ? static_cast<std::int64_t>(value) : 0;
}

class TraceReader final : public nlohmann::json_sax<Json> {
public:
    explicit TraceReader(const std::string& source) : m_source(source) {}

    bool null() override { return scalar(std::nullopt, Json(nullptr)); }
    bool boolean(bool value) override { return scalar(std::nullopt, Json(value)); }
    bool number_integer(number_integer_t value) override {
        return scalar(double(value), Json(value), value);
    }
    bool number_unsigned(number_unsigned_t value) override {
        const auto integer = value > number_unsigned_t(INT64_MAX) ? 0 : std::int64_t(value);
        return scalar(double(value), Json(value), integer);
    }
    bool number_float(number_float_t value, const string_t&) override {
        return scalar(value, Json(value), whole(value));
    }
    bool string(string_t& value) override {
        if (m_open.empty() || m_open.back().role != Role::Event) {
            return true;
        }
        const std::string& key = m_open.back().key;
        if (key == "name") {
            m_event.name = std::move(value);
        } else if (key == "ph") {
            m_event.phase = std::move(value);
        } else if (key == "cat") {
            m_event.category = std::move(value);
        } else if (key == "tid") {
            m_event.thread = Json(value).dump();
        }
        return true;
    }
    bool binary(binary_t&) override { return true; }

    bool start_object(std::size_t) override {
        open(child_role(/*object=*/true), true);
        if (m_open.back().role == Role::Event) {
            m_event = {};
        }
        return true;
    }
    bool key(string_t& name) override {
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
    bool end_object() override {
        if (m_open.back().role == Role::Event) {
            keep_event();
        }
        m_open.pop_back();
        return true;
    }
    bool start_array(std::size_t) override {
        open(child_role(/*object=*/false), false);
        if (m_open.back().role == Role::Events) {
            m_found_events = true;
        }
        return true;
    }
    bool end_array() override {
        m_open.pop_back();
        return true;
    }
    bool parse_error(std::size_t, const std::string&,
                     const nlohmann::detail::exception& error) override {
        throw BadInput(m_source + ": not a Chrome trace of PyTorch's profiler (" + error.what() +
                       "); export one with prof.export_chrome_trace(\"trace.json\")");
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
            case Role::Other:
                break;
        }
        return Role::Other;
    }

    void open(Role role, bool object) {
        if (int(m_open.size()) >= kMaxJsonDepth) {
            throw bad_input_at(m_source, 0,
                               "nested more than " + std::to_string(kMaxJsonDepth) +
                                   " levels deep; this is not a file OOM Lab reads");
        }
        m_open.push_back({role, object, {}, {}});
    }

    // A number, true, false or null: `number` and `integer` where it is a number.
    bool scalar(std::optional<double> number, const Json& value, std::int64_t integer = 0) {
        if (m_open.empty()) {
            return true;
        }
        const Open& at = m_open.back();
        if (at.role == Role::Event) {
            if (at.key == "tid") {
                m_event.thread = value.dump();
            } else if (at.key == "ts" && number) {
                m_event.ts = *number;
            } else if (at.key == "dur" && number) {
                m_event.dur = *number;
            }
        } else if (at.role == Role::Args && number) {
            std::int64_t* field = at.key == "Device Type"       ? &m_event.device_type
                                  : at.key == "Device Id"       ? &m_event.device_id
                                  : at.key == "Addr"            ? &m_event.address
                                  : at.key == "Bytes"           ? &m_event.bytes
                                  : at.key == "Total Allocated" ? &m_event.total_allocated
                                  : at.key == "Total Reserved"  ? &m_event.total_reserved
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
        } else if (m_event.phase == "X") {
            m_trace.spans[m_event.thread].push_back({m_event.ts, m_event.ts + m_event.dur,
                                                     std::move(*m_event.name),
                                                     m_event.category == "python_function"});
        }
    }

    const std::string& m_source;
    std::vector<Open> m_open;
    EventFields m_event;
    bool m_found_events = false;
    TraceEvents m_trace;
};

}  // namespace

TraceEvents read_trace_events(std::string_view text, const std::string& source) {
    TraceReader reader(source);
    Json::sax_parse(text, &reader);
    return reader.take();
}

}  // namespace oomlab::snapshot
