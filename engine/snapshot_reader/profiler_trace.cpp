// The memory events of PyTorch's profiler (torch.profiler.profile(profile_memory=True), then
// export_chrome_trace): each "[memory]" instant event is one allocation (Bytes > 0) or free
// (Bytes < 0) at an address, with the totals allocated and reserved after it. What it was for is
// read from the ops and Python functions whose spans enclose it on the same thread.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <unordered_map>

#include "oomlab/common/errors.h"
#include "profiler_trace_events.h"
#include "snapshot_frames.h"
#include "snapshot_replay.h"
#include "snapshot_stages.h"

namespace oomlab::snapshot {
namespace {

using Span = TraceSpan;
using MemoryEvent = TraceMemoryEvent;

bool starts_with(const std::string& text, std::string_view start) {
    return text.compare(0, start.size(), start) == 0;
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

// A Python frame of PyTorch itself or of the interpreter ("<built-in ...>").
bool torch_or_builtin(const std::string& frame) {
    return in_torch_package(frame) || starts_with(frame, "<built-in");
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
    bool attention = false;  // inside the CPU's attention kernel, which a GPU's fused one replaces
    const Span* recurrent = nullptr;  // the RNN call it is inside, whose shapes were recorded

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
        next.attention |= name == "aten::_scaled_dot_product_attention_math";
        if (inner->inputs && !next.backward) {
            next.recurrent = inner;
        }
        next.forward |=
            inner->python && (contains(name, "): forward") || contains(name, "_call_impl"));
        return next;
    }

    // The user's line; else the innermost op.
    std::string line() const {
        return user           ? user_line(user->name)
               : innermost_op ? std::string(kNoPythonFrame) + " " + innermost_op->name
                              : kNoPythonFrame;
    }

    // "train.py(41): forward" said as a snapshot's frames are, "train.py:41 (forward)".
    static std::string user_line(const std::string& name) {
        const auto frame = profiler_frame(name);
        return frame ? profiler_line(*frame) : name;
    }

    // As for a snapshot's frames: backward, the optimizer's step, a copy between devices or
    // dtypes, a module's forward, in that order; else other.
    std::string kind() const {
        return backward    ? "backward"
               : attention ? kMathAttentionKind
               : optimizer ? "optimizer step"
               : transfer  ? "data transfer"
               : forward   ? "forward"
                           : "other";
    }
};

// The addresses of a trace whose memory events name none (PyTorch before 1.10 wrote only
// "Bytes"): each allocation a place of its own, each free the latest allocation of its size
// still alive (or one made before the trace), so that what was allocated is exact at every
// event and what was alive is as near as the sizes tell.
class AddressesBySize {
public:
    std::int64_t allocation(std::int64_t size) {
        m_alive[size].push_back(++m_last);
        return m_last;
    }
    std::int64_t free(std::int64_t size) {
        std::vector<std::int64_t>& alive = m_alive[size];
        if (alive.empty()) {
            return ++m_last;  // allocated before the trace began
        }
        const std::int64_t address = alive.back();
        alive.pop_back();
        return address;
    }

private:
    std::unordered_map<std::int64_t, std::vector<std::int64_t>> m_alive;
    std::int64_t m_last = 0;
};

SnapshotTraceChange change_at(std::size_t event, std::int64_t address, std::int64_t size,
                              SnapshotTraceChange::What what) {
    SnapshotTraceChange change;
    change.event = std::uint32_t(event);
    change.address = address;
    change.size = size;
    change.what = what;
    return change;
}

// The program's annotations on every thread, as a snapshot's are: a START and an END each.
std::vector<SnapshotAnnotation> annotations_of(
    const std::map<std::string, std::vector<Span>>& spans, int device) {
    std::vector<SnapshotAnnotation> annotations;
    for (const auto& [thread, list] : spans) {
        for (const Span& span : list) {
            if (span.annotation) {
                annotations.push_back({device, true, &span.name, std::llround(span.start)});
                annotations.push_back({device, false, &span.name, std::llround(span.end)});
            }
        }
    }
    return annotations;
}

// An RNN call as its recorded inputs tell: (input, hx, params, has_biases, num_layers,
// dropout, train, bidirectional, batch_first), the input [B, T, I] or [T, B, I] (or [T, I]),
// hx [layers x directions, B, H] (an LSTM's first of two). Nothing where they say otherwise
// (a packed sequence's overload), or where they are missing: scalars ("Concrete Inputs") are
// written since PyTorch 2.1 unless turned off, and older profilers wrote no dims for lists of
// tensors (hx).
std::optional<SnapshotRecurrentCall> recurrent_call(const Span& span) {
    const TraceOpInputs& in = *span.inputs;
    if (in.dims.size() < 2 || in.concrete.size() != 9 || in.dims[1].size() != 3) {
        return std::nullopt;
    }
    const std::vector<std::int64_t>& x = in.dims[0];
    if (x.size() != 2 && x.size() != 3) {
        return std::nullopt;
    }
    if (!std::all_of(x.begin(), x.end(), [](std::int64_t n) { return n > 0; }) ||
        in.dims[1][2] <= 0) {
        return std::nullopt;
    }
    SnapshotRecurrentCall call;
    call.batch_first = in.concrete[8] == "True";
    allocator::RnnShape& shape = call.shape;
    shape.gru = span.name == "aten::gru";
    shape.directions = in.concrete[7] == "True" ? 2 : 1;
    shape.layers = std::atoll(in.concrete[4].c_str());
    if (shape.layers < 1 || shape.layers > 64) {
        return std::nullopt;
    }
    shape.length = x.size() == 2 || !call.batch_first ? x[0] : x[1];
    shape.batch = x.size() == 2 ? 1 : call.batch_first ? x[0] : x[1];
    shape.input = x.back();
    shape.hidden = in.dims[1][2];
    shape.element = in.first_type == "double"                                          ? 8
                    : in.first_type == "c10::Half" || in.first_type == "c10::BFloat16" ? 2
                                                                                       : 4;
    // Sizes no program runs are a damaged or hostile file's: cuDNN's buffers for them would
    // pass what 64 bits hold. Widths up to 2^20, the input and output up to 2^48 bytes.
    constexpr std::int64_t kWidest = std::int64_t{1} << 20;
    constexpr double kMostBytes = double(std::int64_t{1} << 48);
    const double tokens = double(shape.length) * double(shape.batch) * double(shape.element);
    if (shape.input > kWidest || shape.hidden > kWidest ||
        tokens * double(shape.input) > kMostBytes ||
        tokens * double(shape.directions * shape.hidden) > kMostBytes) {
        return std::nullopt;
    }
    return call;
}

// When each memory event happened, in the trace's microseconds.
EventClock clock_of(const std::vector<MemoryEvent>& memory) {
    EventClock clock;
    for (std::size_t i = 0; i < memory.size(); ++i) {
        const std::int64_t time_us = std::llround(memory[i].time);
        clock.add(i, &time_us);
    }
    return clock;
}

}  // namespace

SnapshotReport profiler_trace_report(PickleInput& input, const std::string& source,
                                     const std::function<void()>& after_chunk) {
    TraceEvents trace = read_trace_events(input, source, after_chunk);
    std::map<std::string, std::vector<Span>>& spans = trace.spans;
    auto& devices = trace.memory;
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
        device.streams = {0};  // the profiler names no stream
        NameTable names(device);
        std::map<const Span*, std::size_t> recurrent;  // a call's place in recurrent_calls
        // Each thread's spans swept once, in time order, with a stack of those still open.
        std::map<std::string, std::pair<std::size_t, std::vector<OpenSpan>>> sweeps;
        std::int64_t reserved = memory.front().total_reserved;
        const bool addressed = std::any_of(memory.begin(), memory.end(),
                                           [](const MemoryEvent& event) { return event.address; });
        AddressesBySize by_size;
        if (!addressed) {
            device.trace_problems.push_back(
                "its memory events name no address (PyTorch before 1.10): each free is taken "
                "to free the latest allocation of its size, so what was allocated is exact and "
                "what was alive as near as the sizes tell");
        }
        for (std::size_t i = 0; i < memory.size(); ++i) {
            MemoryEvent event = memory[i];
            if (!addressed) {
                event.address =
                    event.bytes < 0 ? by_size.free(-event.bytes) : by_size.allocation(event.bytes);
            }
            using What = SnapshotTraceChange::What;
            if (i > 0 && event.total_reserved != reserved) {
                const std::int64_t change = event.total_reserved - reserved;
                device.changes.push_back(change_at(i, 0, change > 0 ? change : -change,
                                                   change > 0 ? What::Reserve : What::Release));
                reserved = event.total_reserved;
            }
            if (event.bytes < 0) {
                device.changes.push_back(change_at(i, event.address, -event.bytes, What::Free));
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
            if (top.recurrent) {
                auto [call, added] =
                    recurrent.emplace(top.recurrent, device.recurrent_calls.size());
                if (added) {
                    if (auto made = recurrent_call(*top.recurrent)) {
                        device.recurrent_calls.push_back(std::move(*made));
                    } else {
                        call->second = SIZE_MAX;
                    }
                }
                if (call->second != SIZE_MAX) {
                    device.recurrent_calls[call->second].allocations.push_back(i);
                }
            }
            SnapshotTraceChange alloc = change_at(i, event.address, event.bytes, What::Alloc);
            alloc.stack = names.stack(top.line(), top.kind());
            device.changes.push_back(alloc);
        }
        place_stages(device, annotations_of(spans, device.index), clock_of(memory));
        replay_changes(device);
    }
    order_devices(report.devices);
    return report;
}

}  // namespace oomlab::snapshot
