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
#include <unordered_set>

#include "oomlab/common/errors.h"
#include "profiler_op_shapes.h"
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
    return in_torch_package(frame) || in_python_library(frame) || starts_with(frame, "<built-in");
}

// The calls whose backward is told apart: the CPU's attention calls and the RNN calls whose
// inputs were recorded, and the call each sequence number of their ops belongs to (backward's
// autograd nodes name the one they differentiate).
struct TiedCalls {
    std::vector<SnapshotAttentionCall> attention;
    // Each attention call's spans: the op the program called (aten::scaled_dot_product_attention,
    // where the kernel was called through it; else the kernel's own) and the kernel's.
    std::vector<std::pair<const Span*, const Span*>> attention_spans;
    std::unordered_map<const Span*, std::size_t> attention_of_span;  // both spans
    std::unordered_map<std::uint32_t, std::size_t> attention_of_sequence;
    std::unordered_map<std::uint32_t, const Span*> recurrent_of_sequence;
};

// Of each thread's spans, sorted by start (outer first where two start together). Each span is
// looked at once: a call inside another (which no program makes; a hostile file could nest
// thousands) is the outer one's.
TiedCalls tied_calls_of(const std::map<std::string, std::vector<Span>>& spans) {
    TiedCalls found;
    for (const auto& [thread, list] : spans) {
        const Span* called = nullptr;  // the latest aten::scaled_dot_product_attention
        for (std::size_t i = 0; i < list.size();) {
            const Span& outer = list[i];
            std::optional<SnapshotAttentionCall> call;
            if (outer.name == kMathAttentionOp && outer.inputs) {
                call = attention_call(*outer.inputs);
            }
            const bool recurrent = !call && outer.inputs && is_recurrent(outer.name);
            if (!call && !recurrent) {
                if (outer.name == kAttentionOp) {
                    called = &outer;
                }
                ++i;
                continue;
            }
            if (call) {
                const Span* through = called && called->end >= outer.start ? called : &outer;
                found.attention_of_span.emplace(&outer, found.attention.size());
                found.attention_of_span.emplace(through, found.attention.size());
                found.attention_spans.emplace_back(through, &outer);
            }
            for (; i < list.size() && list[i].start <= outer.end; ++i) {
                if (list[i].sequence == kNoSequence) {
                    continue;
                }
                if (call) {
                    found.attention_of_sequence.emplace(list[i].sequence, found.attention.size());
                } else {
                    found.recurrent_of_sequence.emplace(list[i].sequence, &outer);
                }
            }
            if (call) {
                found.attention.push_back(std::move(*call));
            }
        }
    }
    return found;
}

// An open span, with what the spans from the outermost one to it tell, so that a memory
// event is named in constant time however deep the stack: the user's line (the innermost
// Python frame outside PyTorch, as a snapshot's frames are named: a model's forward, not the
// loop that entered a profiler step or a record_function), else the innermost module label
// (with_modules without with_stack), the innermost op, and the kinds of work seen.
struct OpenSpan {
    const Span* span = nullptr;
    const Span* user = nullptr;
    const Span* module = nullptr;  // "nn.Module: Net_0"
    const Span* innermost_op = nullptr;
    bool backward = false;
    bool optimizer = false;
    bool transfer = false;
    bool forward = false;
    // Inside the CPU's attention kernel, which a GPU's fused one replaces: its span, and its call
    // (an index of TiedCalls' attention calls) where its inputs were recorded, else SIZE_MAX.
    const Span* attention = nullptr;
    std::size_t attention_call = SIZE_MAX;
    // Inside the op the program called it through, the call's index likewise.
    std::size_t attention_called = SIZE_MAX;
    const Span* recurrent = nullptr;    // the RNN call it is inside, whose shapes were recorded
    const Span* convolution = nullptr;  // the convolution's call (forward or backward) likewise
    const Span* dropout = nullptr;      // a dropout whose inputs were recorded
    const Span* sum = nullptr;          // likewise a sum
    // The CPU attention call whose backward this is (its autograd node names the sequence number
    // of one of the call's ops), as an index of TiedCalls' attention calls; SIZE_MAX if none.
    std::size_t attention_backward = SIZE_MAX;
    const Span* recurrent_backward = nullptr;  // likewise, the RNN call's

    OpenSpan inside(const Span* inner, const TiedCalls& tied) const {
        OpenSpan next = *this;
        next.span = inner;
        const std::string& name = inner->name;
        if (inner->python && !torch_or_builtin(name)) {
            if (profiler_frame(name)) {
                next.user = inner;
            } else if (starts_with(name, "nn.Module: ")) {
                next.module = inner;
            }
        }
        next.innermost_op = inner->python ? innermost_op : inner;
        next.backward |=
            starts_with(name, "autograd::engine::evaluate_function") || contains(name, "Backward");
        // Of an optimizer's step and a module's forward, the inner one tells: Lightning runs
        // the forward inside optimizer.step(closure).
        if (starts_with(name, "Optimizer.step")) {
            next.optimizer = true;
            next.forward = false;
        }
        next.transfer |= name == "aten::_to_copy" || name == "aten::copy_";
        if (name == kMathAttentionOp || name == kAttentionOp) {
            const auto call = tied.attention_of_span.find(inner);
            const std::size_t index =
                call != tied.attention_of_span.end() ? call->second : SIZE_MAX;
            if (name == kMathAttentionOp) {
                next.attention = inner;
                next.attention_call = index;
            } else {
                next.attention_called = index;
            }
        }
        if (inner->inputs && is_convolution(name)) {
            next.convolution = inner;
        } else if (inner->inputs && !next.backward && is_recurrent(name)) {
            next.recurrent = inner;
        } else if (inner->inputs && is_dropout(name)) {
            next.dropout = inner;
        } else if (inner->inputs && is_sum(name)) {
            next.sum = inner;
        }
        if (next.backward && inner->sequence != kNoSequence) {
            const auto call = tied.attention_of_sequence.find(inner->sequence);
            if (call != tied.attention_of_sequence.end()) {
                next.attention_backward = call->second;
            }
            const auto rnn = tied.recurrent_of_sequence.find(inner->sequence);
            if (rnn != tied.recurrent_of_sequence.end()) {
                next.recurrent_backward = rnn->second;
            }
        }
        if (inner->python && (contains(name, "): forward") || contains(name, "_call_impl"))) {
            next.forward = true;
            next.optimizer = false;
        }
        return next;
    }

    // Inside one of the calls cuDNN or a fused kernel run on CUDA (forward or backward), whose
    // products and sums the CPU makes with its own.
    bool in_replaced_call() const {
        return attention || recurrent || convolution || attention_backward != SIZE_MAX ||
               recurrent_backward;
    }

    // Inside a matrix product CUDA runs with cuBLAS.
    bool in_cublas_product() const {
        return innermost_op && is_matrix_product(innermost_op->name) && !in_replaced_call();
    }

    // The user's line; else the module's label; else the innermost op.
    std::string line() const {
        return user           ? user_line(user->name)
               : module       ? module->name
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
        return attention_backward != SIZE_MAX ? kMathAttentionBackwardKind
               : backward                     ? "backward"
               : attention                    ? kMathAttentionKind
               : optimizer                    ? "optimizer step"
               : transfer                     ? "copy or cast"
               : forward                      ? "forward"
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

// The call of `span` in `calls`, read from its inputs the first time (nothing, then and after,
// where they do not give one); `calls` holds each span's place in its list.
template <typename Call, typename Read>
Call* call_of(const Span* span, std::map<const Span*, std::size_t>& places,
              std::vector<Call>& calls, Read read) {
    auto [place, added] = places.emplace(span, calls.size());
    if (added) {
        if (auto made = read(span->name, *span->inputs)) {
            calls.push_back(std::move(*made));
        } else {
            place->second = SIZE_MAX;
        }
    }
    return place->second == SIZE_MAX ? nullptr : &calls[place->second];
}

// The first of `memory` (sorted by time) after `time`.
std::size_t first_after(const std::vector<MemoryEvent>& memory, double time) {
    return std::size_t(std::upper_bound(memory.begin(), memory.end(), time,
                                        [](double t, const MemoryEvent& e) { return t < e.time; }) -
                       memory.begin());
}

// The first of `memory` at or after `time`.
std::size_t first_at_or_after(const std::vector<MemoryEvent>& memory, double time) {
    return std::size_t(std::lower_bound(memory.begin(), memory.end(), time,
                                        [](const MemoryEvent& e, double t) { return e.time < t; }) -
                       memory.begin());
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
    if (devices.empty() && trace.profile_memory) {
        throw BadInput(source +
                       ": a Chrome trace without memory events, though recorded with "
                       "profile_memory: nothing was allocated or freed while it recorded (a "
                       "CUDA graph's replay allocates nothing), or its memory events were left "
                       "out; profile steps that allocate, from before the model is built");
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
    const TiedCalls tied = tied_calls_of(spans);
    const bool gpu_memory_recorded =
        std::any_of(devices.begin(), devices.end(),
                    [](const auto& device) { return device.first.second >= 0; });
    SnapshotReport report;
    report.source = source;
    for (auto& [key, memory] : devices) {
        std::stable_sort(
            memory.begin(), memory.end(),
            [](const MemoryEvent& a, const MemoryEvent& b) { return a.time < b.time; });
        SnapshotDevice& device = report.devices.emplace_back();
        device.index = int(key.second);  // the profiler's Device Id: -1 for the CPU
        device.events = memory.size();
        device.from_trace = true;
        device.gpu_kernels = trace.gpu_kernels;
        device.gpu_memory_recorded = gpu_memory_recorded;
        device.rocm = trace.rocm && device.index >= 0;
        // The totals after each event, since PyTorch 1.10: a GPU's are never all 0. Before, what
        // was allocated is the events' sum, and nothing says what was reserved (a CPU reserves
        // nothing).
        const bool totals = std::any_of(memory.begin(), memory.end(), [](const MemoryEvent& event) {
            return event.total_allocated != 0 || event.total_reserved != 0;
        });
        device.reserved_recorded = totals || device.index == kProfilerCpuIndex;
        device.totals_recorded = totals;
        device.allocated = memory.back().total_allocated;
        device.reserved = memory.back().total_reserved;
        if (!totals) {  // the events' sum, from the lowest start that keeps it from going below 0
            std::int64_t running = 0, lowest = 0;
            for (const MemoryEvent& event : memory) {
                running += event.bytes;
                lowest = std::min(lowest, running);
            }
            device.allocated = running - lowest;
        }
        // Blocks are not recorded: what was cached is the totals' difference, in pieces unknown.
        device.cached_free = std::max<std::int64_t>(device.reserved - device.allocated, 0);
        device.streams = {0};  // the profiler names no stream
        NameTable names(device);
        std::map<const Span*, std::size_t> calls;  // a call's place in its list of calls
        device.attention_calls = tied.attention;
        std::unordered_set<const Span*> seen;  // the dropouts and sums found allocating
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
                stack.push_back(stack.empty() ? OpenSpan{}.inside(&open[next], tied)
                                              : stack.back().inside(&open[next], tied));
            }
            while (!stack.empty() && stack.back().span->end < event.time) {
                stack.pop_back();
            }
            const OpenSpan top = stack.empty() ? OpenSpan{} : stack.back();
            if (top.recurrent) {
                if (auto* call =
                        call_of(top.recurrent, calls, device.recurrent_calls, recurrent_call)) {
                    call->allocations.push_back(i);
                }
            }
            if (top.attention_call != SIZE_MAX) {
                device.attention_calls[top.attention_call].allocations.push_back(i);
            } else if (top.attention_called != SIZE_MAX &&
                       event.time < tied.attention_spans[top.attention_called].second->start) {
                device.attention_calls[top.attention_called].allocations_before.push_back(i);
            }
            if (top.attention_backward != SIZE_MAX) {
                device.attention_calls[top.attention_backward].backward_allocations.push_back(i);
            }
            if (top.recurrent_backward) {
                if (auto* call = call_of(top.recurrent_backward, calls, device.recurrent_calls,
                                         recurrent_call)) {
                    call->first_backward = std::min(call->first_backward, i);
                }
            }
            if (top.sum && !top.in_replaced_call() && seen.insert(top.sum).second) {
                const auto buffer = sum_buffer_bytes(*top.sum->inputs);
                if (buffer && *buffer > 0) {
                    device.reduction_buffers.emplace_back(first_after(memory, top.sum->end),
                                                          *buffer);
                }
            }
            if (top.dropout && !top.attention && seen.insert(top.dropout).second) {
                if (const auto mask = dropout_mask_bytes(*top.dropout->inputs)) {
                    device.dropout_masks.push_back({i, *mask});
                }
            }
            if (top.in_cublas_product()) {
                std::size_t& first = top.backward ? device.first_backward_matrix_product
                                                  : device.first_matrix_product;
                first = std::min(first, i);
            }
            if (top.convolution) {
                if (auto* call = call_of(top.convolution, calls, device.convolution_calls,
                                         convolution_call)) {
                    if (call->allocations.empty()) {
                        call->end = first_after(memory, top.convolution->end);
                    }
                    call->allocations.push_back(i);
                }
            }
            SnapshotTraceChange alloc = change_at(i, event.address, event.bytes, What::Alloc);
            alloc.stack = names.stack(top.line(), top.kind());
            device.changes.push_back(alloc);
        }
        for (std::size_t call = 0; call < tied.attention_spans.size(); ++call) {
            const auto [called, kernel] = tied.attention_spans[call];
            SnapshotAttentionCall& made = device.attention_calls[call];
            made.begin = first_at_or_after(memory, called->start);
            made.end = first_after(memory, kernel->end);
            made.called_end = first_after(memory, called->end);
        }
        place_stages(device, annotations_of(spans, device.index), clock_of(memory));
        replay_changes(device);
    }
    order_devices(report.devices);
    return report;
}

}  // namespace oomlab::snapshot
