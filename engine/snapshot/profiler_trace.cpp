// The memory events of PyTorch's profiler (torch.profiler.profile(profile_memory=True), then
// export_chrome_trace): each "[memory]" instant event is one allocation (Bytes > 0) or free
// (Bytes < 0) at an address, with the totals allocated and reserved after it. What it was for is
// read from the ops and Python functions whose spans enclose it on the same thread.
#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "common/json_parse.h"
#include "oomlab/common/errors.h"
#include "snapshot/snapshot_replay.h"

namespace oomlab::snapshot {
namespace {

using Json = nlohmann::json;

struct Span {
    double start = 0;
    double end = 0;
    std::string name;
    bool python = false;  // a Python function ("file.py(12): name"), else an op or annotation
};

struct MemoryEvent {
    double time = 0;
    std::int64_t address = 0;
    std::int64_t bytes = 0;  // > 0 allocated, < 0 freed
    std::int64_t total_allocated = 0;
    std::int64_t total_reserved = 0;
    std::string thread;
};

std::string thread_of(const Json& event) {
    const auto tid = event.find("tid");
    return tid == event.end() ? std::string() : tid->dump();
}

double number_or(const Json& object, const char* key, double fallback) {
    const auto found = object.find(key);
    return found != object.end() && found->is_number() ? found->get<double>() : fallback;
}

std::int64_t integer_or(const Json& object, const char* key) {
    const auto found = object.find(key);
    return found != object.end() && found->is_number() ? found->get<std::int64_t>() : 0;
}

bool starts_with(const std::string& text, std::string_view start) {
    return text.compare(0, start.size(), start) == 0;
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// A Python frame of PyTorch itself or of the interpreter ("<built-in ...>").
bool torch_or_builtin(const std::string& frame) {
    return starts_with(frame, "torch/") || contains(frame, "/torch/") ||
           starts_with(frame, "<built-in");
}

// An open span, with what the spans from the outermost one to it tell, so that a memory
// event is named in constant time however deep the stack: the user's line (walking in from the
// outermost Python frame, the last one before the first of PyTorch's own: the line that called
// into it), the innermost op, and the kinds of work seen.
struct OpenSpan {
    const Span* span = nullptr;
    const Span* user = nullptr;
    bool in_torch = false;  // a Python frame of PyTorch's own is open here or further out
    const Span* innermost_op = nullptr;
    bool backward = false;
    bool optimizer = false;
    bool transfer = false;
    bool forward = false;

    OpenSpan inside(const Span* inner) const {
        OpenSpan next = *this;
        next.span = inner;
        const std::string& name = inner->name;
        const bool torch = inner->python && torch_or_builtin(name);
        if (inner->python && !torch && !in_torch) {
            next.user = inner;
        }
        next.in_torch = in_torch || torch;
        next.innermost_op = inner->python ? innermost_op : inner;
        next.backward |=
            starts_with(name, "autograd::engine::evaluate_function") || contains(name, "Backward");
        next.optimizer |= starts_with(name, "Optimizer.step");
        next.transfer |= name == "aten::_to_copy" || name == "aten::copy_";
        next.forward |=
            inner->python && (contains(name, "): forward") || contains(name, "_call_impl"));
        return next;
    }

    // The user's line; else the innermost op.
    std::string line() const {
        return user           ? user->name
               : innermost_op ? "(no Python frame recorded) " + innermost_op->name
                              : "(no Python frame recorded)";
    }

    // As for a snapshot's frames: backward, the optimizer's step, a copy between devices or
    // dtypes, a module's forward, in that order; else other.
    std::string kind() const {
        return backward    ? "backward"
               : optimizer ? "optimizer step"
               : transfer  ? "data transfer"
               : forward   ? "forward"
                           : "other";
    }
};

Json parse_trace(const std::string& text, const std::string& source) {
    try {
        return parse_json_limited<Json>(text, source);
    } catch (const Json::exception& error) {
        throw BadInput(source + ": not a Chrome trace of PyTorch's profiler (" + error.what() +
                       "); export one with prof.export_chrome_trace(\"trace.json\")");
    }
}

}  // namespace

SnapshotReport profiler_trace_report(const std::string& text, const std::string& source) {
    const Json root = parse_trace(text, source);
    const Json* events = root.is_array() ? &root : nullptr;
    if (root.is_object() && root.contains("traceEvents") && root["traceEvents"].is_array()) {
        events = &root["traceEvents"];
    }
    if (!events) {
        throw BadInput(source + ": JSON, but no Chrome trace (no \"traceEvents\" list)");
    }
    // The spans on each thread, and the memory events of each device (type, index).
    std::map<std::string, std::vector<Span>> spans;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<MemoryEvent>> devices;
    for (const Json& event : *events) {
        if (!event.is_object() || !event.contains("name") || !event["name"].is_string()) {
            continue;
        }
        const std::string& name = event["name"].get_ref<const std::string&>();
        const Json empty = Json::object();
        const Json& args =
            event.contains("args") && event["args"].is_object() ? event["args"] : empty;
        if (name == "[memory]") {
            devices[{integer_or(args, "Device Type"), integer_or(args, "Device Id")}].push_back(
                {number_or(event, "ts", 0), integer_or(args, "Addr"), integer_or(args, "Bytes"),
                 integer_or(args, "Total Allocated"), integer_or(args, "Total Reserved"),
                 thread_of(event)});
        } else if (event.value("ph", "") == "X") {
            const double start = number_or(event, "ts", 0);
            spans[thread_of(event)].push_back({start, start + number_or(event, "dur", 0), name,
                                               event.value("cat", "") == "python_function"});
        }
    }
    if (devices.empty()) {
        throw BadInput(source +
                       ": a Chrome trace without memory events; record it with "
                       "torch.profiler.profile(profile_memory=True, with_stack=True)");
    }
    for (auto& [thread, list] : spans) {
        // Outer spans first where two start together, so that a stack holds them outermost first.
        std::stable_sort(list.begin(), list.end(), [](const Span& a, const Span& b) {
            return a.start < b.start || (a.start == b.start && a.end > b.end);
        });
    }
    SnapshotReport report;
    report.source = source;
    for (auto& [key, memory] : devices) {
        std::stable_sort(
            memory.begin(), memory.end(),
            [](const MemoryEvent& a, const MemoryEvent& b) { return a.time < b.time; });
        SnapshotDevice& device = report.devices.emplace_back();
        device.index = int(key.second);  // the profiler's Device Id: -1 for the CPU
        device.events = memory.size();
        device.allocated = memory.back().total_allocated;
        device.reserved = memory.back().total_reserved;
        NameTable names(device.names);
        // Each thread's spans swept once, in time order, with a stack of those still open.
        std::map<std::string, std::pair<std::size_t, std::vector<OpenSpan>>> sweeps;
        std::int64_t reserved = memory.front().total_reserved;
        for (std::size_t i = 0; i < memory.size(); ++i) {
            const MemoryEvent& event = memory[i];
            using What = SnapshotTraceChange::What;
            if (i > 0 && event.total_reserved != reserved) {
                const std::int64_t change = event.total_reserved - reserved;
                device.changes.push_back({i, 0, change > 0 ? change : -change, 0, 0,
                                          change > 0 ? What::Reserve : What::Release});
                reserved = event.total_reserved;
            }
            if (event.bytes < 0) {
                device.changes.push_back({i, event.address, -event.bytes, 0, 0, What::Free});
                continue;
            }
            auto& [next, stack] = sweeps[event.thread];
            const std::vector<Span>& open = spans[event.thread];
            for (; next < open.size() && open[next].start <= event.time; ++next) {
                while (!stack.empty() && stack.back().span->end < open[next].start) {
                    stack.pop_back();
                }
                stack.push_back(stack.empty() ? OpenSpan{}.inside(&open[next])
                                              : stack.back().inside(&open[next]));
            }
            while (!stack.empty() && stack.back().span->end < event.time) {
                stack.pop_back();
            }
            const OpenSpan top = stack.empty() ? OpenSpan{} : stack.back();
            device.changes.push_back({i, event.address, event.bytes, names.id(top.line()),
                                      names.id(top.kind()), What::Alloc});
        }
        replay_changes(device);
    }
    std::sort(report.devices.begin(), report.devices.end(),
              [](const SnapshotDevice& a, const SnapshotDevice& b) { return a.index < b.index; });
    return report;
}

}  // namespace oomlab::snapshot
