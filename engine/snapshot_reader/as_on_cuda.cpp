#include "as_on_cuda.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "oomlab/allocator/cublas_workspaces.h"
#include "oomlab/allocator/cudnn_conv.h"
#include "oomlab/allocator/cudnn_rnn.h"

namespace oomlab::snapshot {
namespace {

using Kind = allocator::TraceEvent::Kind;

// Addresses for what the model allocates that the trace never did: above any real one.
constexpr std::int64_t kMadeUpAddresses = std::int64_t{1} << 60;

bool ran_backward(const SnapshotDevice& device) {
    return std::any_of(device.stacks.begin(), device.stacks.end(), [&](const SnapshotStack& s) {
        return s.kind < device.names.size() &&
               (device.names[s.kind] == "backward" || device.names[s.kind] == "gradient");
    });
}

// What the trace becomes: events left out, and events put before others (by position), among
// them blocks the model makes that the trace never did, at addresses of their own.
struct Edit {
    explicit Edit(std::size_t events) : dropped(events, false) {}

    std::vector<bool> dropped;
    std::unordered_map<std::size_t, std::vector<allocator::TraceEvent>> before;

    void drop(std::size_t position) {
        dropped[position] = true;
        dropped_any = true;
    }
    // An allocation, and its free where the trace has one (`freed` as frees_of says).
    void drop_with_free(std::size_t position, const std::vector<std::size_t>& freed) {
        drop(position);
        if (freed[position] < dropped.size()) {
            drop(freed[position]);
        }
    }
    // A block the model makes: its allocation and its free.
    std::pair<allocator::TraceEvent, allocator::TraceEvent> block(std::int64_t size,
                                                                  std::size_t index,
                                                                  std::int64_t stream) {
        const std::int64_t address = next_address;
        next_address += size + 512;
        return {{Kind::Alloc, index, address, size, stream},
                {Kind::Free, index, address, size, stream}};
    }
    bool changes() const { return dropped_any || !before.empty(); }

private:
    std::int64_t next_address = kMadeUpAddresses;
    bool dropped_any = false;
};

// The events (by index) that allocated inside the CPU's attention kernel.
std::unordered_set<std::size_t> math_attention(const SnapshotDevice& device) {
    std::unordered_set<std::size_t> events;
    for (const SnapshotTraceChange& change : device.changes) {
        if (change.what == SnapshotTraceChange::What::Alloc &&
            change.stack < device.stacks.size()) {
            const std::uint32_t kind = device.stacks[change.stack].kind;
            if (kind < device.names.size() && device.names[kind] == kMathAttentionKind) {
                events.insert(change.event);
            }
        }
    }
    return events;
}

// A GPU's fused attention (flash, memory-efficient) makes the output alone where the CPU's
// math kernel makes the scores, their softmax, its mask and the dropped weights first, and keeps
// them for backward. Each call's allocations but its last (the output) are left out, with their
// frees; what backward then computes is kept as the CPU made it.
std::size_t fuse_attention(const std::vector<allocator::TraceEvent>& events,
                           const std::unordered_set<std::size_t>& inside, Edit& edit) {
    std::size_t calls = 0;
    std::unordered_set<std::int64_t> dropped;  // addresses whose free goes too
    std::size_t last = events.size();          // the current call's latest allocation
    for (std::size_t i = 0; i < events.size(); ++i) {
        const allocator::TraceEvent& event = events[i];
        if (event.kind == Kind::Alloc) {
            if (inside.count(event.index)) {
                if (last != events.size()) {
                    edit.drop(last);
                    dropped.insert(events[last].address);
                } else {
                    ++calls;
                }
                last = i;
            } else {
                last = events.size();  // the call ended: its last allocation stays
            }
        } else if (event.kind == Kind::Free && dropped.erase(event.address)) {
            edit.drop(i);
        }
    }
    return calls;
}

bool updates_with_foreach_on_cuda(const std::string& stage) {
    return stage == "Optimizer.step#Adam.step" || stage == "Optimizer.step#AdamW.step";
}

// A temporary of the update: allocated and freed inside it (positions in the events).
struct Temporary {
    std::size_t alloc = 0;
    std::size_t free = 0;
};

// Where each allocation of `events` is freed (a position), or events.size() if never.
std::vector<std::size_t> frees_of(const std::vector<allocator::TraceEvent>& events) {
    std::vector<std::size_t> freed(events.size(), events.size());
    std::unordered_map<std::int64_t, std::size_t> open;  // address: its allocation
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (events[i].kind == Kind::Alloc) {
            open[events[i].address] = i;
        } else if (events[i].kind == Kind::Free) {
            if (const auto made = open.find(events[i].address); made != open.end()) {
                freed[made->second] = i;
                open.erase(made);
            }
        }
    }
    return freed;
}

// The positions of a call's allocations among `events` (those the trace still has).
std::vector<std::size_t> positions_of(const std::vector<allocator::TraceEvent>& events,
                                      const std::vector<std::size_t>& allocations,
                                      const std::function<std::size_t(std::size_t)>& at) {
    std::vector<std::size_t> made;
    for (const std::size_t index : allocations) {
        const std::size_t position = at(index);
        if (position < events.size() && events[position].index == index &&
            events[position].kind == Kind::Alloc) {
            made.push_back(position);
        }
    }
    return made;
}

// The update in events [from, to): its temporaries (made and freed inside it), in the order
// they were made; `freed` as frees_of says.
std::vector<Temporary> temporaries(const std::vector<std::size_t>& freed, std::size_t from,
                                   std::size_t to) {
    std::vector<Temporary> found;
    for (std::size_t i = from; i < to; ++i) {
        if (freed[i] < to) {
            found.push_back({i, freed[i]});
        }
    }
    return found;
}

// The single-tensor update makes two temporaries of each parameter's size (its sqrt, then the
// quotient, made while the sqrt is alive); the multi-tensor one makes one for every parameter
// at once, alive from where the first was made to where the last was freed. Each temporary
// made while one of its size is still alive unpaired is the quotient of that one.
bool gather(const std::vector<allocator::TraceEvent>& events, const std::vector<std::size_t>& freed,
            std::size_t from, std::size_t to, Edit& edit) {
    const std::vector<Temporary> made = temporaries(freed, from, to);
    if (made.size() < 2) {
        return false;
    }
    std::vector<allocator::TraceEvent> allocs;
    std::vector<allocator::TraceEvent> frees;
    std::unordered_map<std::int64_t, std::size_t> unpaired;  // size: until when it is alive
    std::size_t last_freed = 0;
    for (const Temporary& temporary : made) {
        const allocator::TraceEvent& alloc = events[temporary.alloc];
        const auto pair = unpaired.find(alloc.size);
        if (pair != unpaired.end() && pair->second > temporary.alloc) {
            unpaired.erase(pair);  // the quotient of a parameter already in the list
        } else {
            unpaired[alloc.size] = temporary.free;
            const auto [made_alloc, made_free] = edit.block(alloc.size, alloc.index, alloc.stream);
            allocs.push_back(made_alloc);
            frees.push_back(made_free);
        }
        last_freed = std::max(last_freed, temporary.free);
        edit.drop_with_free(temporary.alloc, freed);
    }
    auto& at_start = edit.before[made.front().alloc];
    at_start.insert(at_start.end(), allocs.begin(), allocs.end());
    auto& after_end = edit.before[last_freed + 1];
    after_end.insert(after_end.end(), frees.begin(), frees.end());
    return true;
}

// cuDNN's RNN in place of the CPU's: of what the CPU's call allocated, its outputs (the
// output, and the last hidden and cell states) are kept and the rest left out, with their frees:
// the call's temporaries and the buffers it saved for backward. In their place: forward's
// workspace (with a time-major copy of a batch-first input), and, where the call was trained
// (it saved something for backward), cuDNN's reserve until the last of those buffers was freed
// (to the trace's end if none was), and backward's two workspaces (with copies of the output's
// gradient and the input) where the first of them was.
bool as_cudnn_rnn(const std::vector<allocator::TraceEvent>& events,
                  const std::vector<std::size_t>& freed, const SnapshotRecurrentCall& call,
                  const std::function<std::size_t(std::size_t)>& at, Edit& edit) {
    const std::vector<std::size_t> made = positions_of(events, call.allocations, at);
    if (made.empty()) {
        return false;
    }
    const allocator::RnnShape& shape = call.shape;
    const std::size_t end = made.back();
    const std::int64_t output = shape.output_bytes();
    const std::int64_t state =
        shape.layers * shape.directions * shape.batch * shape.hidden * shape.element;
    std::int64_t outputs_left = 1;
    std::int64_t states_left = shape.gru ? 1 : 2;
    // What the CPU saved for backward: how much, and where backward freed it.
    std::size_t saved = 0;
    std::size_t first_saved_free = events.size();
    std::size_t last_saved_free = 0;
    for (auto position = made.rbegin(); position != made.rend(); ++position) {
        const std::int64_t size = events[*position].size;
        const bool alive_after = freed[*position] > end;
        if (alive_after && size == output && outputs_left > 0) {
            --outputs_left;
            continue;
        }
        if (alive_after && size == state && states_left > 0) {
            --states_left;
            continue;
        }
        edit.drop_with_free(*position, freed);
        saved += alive_after;
        if (alive_after && freed[*position] < events.size()) {
            first_saved_free = std::min(first_saved_free, freed[*position]);
            last_saved_free = std::max(last_saved_free, freed[*position]);
        }
    }
    const allocator::CudnnRnnBuffers buffers = allocator::cudnn_rnn_buffers(shape);
    const std::int64_t stream = events[end].stream;
    const std::size_t index = events[end].index;
    const auto block = [&](std::int64_t size) { return edit.block(size, index, stream); };
    const std::int64_t input = shape.batch * shape.length * shape.input * shape.element;
    const bool trained = saved > 0;  // else cuDNN keeps no reserve
    const auto reserve = block(buffers.reserve);
    // One workspace, beside a copy of `copied` bytes where the input is batch-first; forward's
    // reserve is made while its workspace is alive, as cuDNN's forward makes both.
    const auto workspace_with_copy = [&](std::vector<allocator::TraceEvent>& into,
                                         std::int64_t copied, bool with_reserve) {
        const auto copy = block(copied);
        const auto workspace = block(buffers.workspace);
        if (call.batch_first) {
            into.push_back(copy.first);
        }
        into.push_back(workspace.first);
        if (with_reserve) {
            into.push_back(reserve.first);
        }
        into.push_back(workspace.second);
        if (call.batch_first) {
            into.push_back(copy.second);
        }
    };
    workspace_with_copy(edit.before[end + 1], input, trained);
    if (!trained || first_saved_free == events.size()) {
        return true;  // no reserve, or one held to the trace's end (it ended before backward)
    }
    auto& backward = edit.before[first_saved_free];
    workspace_with_copy(backward, output, false);
    workspace_with_copy(backward, input, false);
    edit.before[last_saved_free].push_back(reserve.second);
    return true;
}

// cuDNN's convolution in place of the CPU's: what the CPU's call made and freed inside it (its
// temporaries) is left out, with the frees; what it kept (the output, or the gradients) stays,
// and cuDNN's workspace is made and freed after it: forward's after the output, backward's for
// the input's gradient after that gradient and for the weights' after theirs (each after the
// call's last kept allocation where its gradient is not found by its size).
bool as_cudnn_convolution(const std::vector<allocator::TraceEvent>& events,
                          const std::vector<std::size_t>& freed,
                          const SnapshotConvolutionCall& call,
                          const std::function<std::size_t(std::size_t)>& at, Edit& edit) {
    const auto workspaces = allocator::cudnn_conv_workspaces(call.shape);
    const std::vector<std::size_t> made = positions_of(events, call.allocations, at);
    const std::size_t end = at(call.end);
    std::vector<std::size_t> kept;
    for (const std::size_t position : made) {
        if (freed[position] >= end) {
            kept.push_back(position);
        }
    }
    if (!workspaces || kept.empty()) {
        return false;
    }
    for (const std::size_t position : made) {
        if (freed[position] < end) {
            edit.drop_with_free(position, freed);
        }
    }
    const auto workspace_after = [&](std::int64_t size, std::size_t position) {
        if (size <= 0) {
            return;
        }
        const auto [alloc, free] =
            edit.block(size, events[position].index, events[position].stream);
        edit.before[position + 1].insert(edit.before[position + 1].end(), {alloc, free});
    };
    const auto kept_of_size = [&](std::int64_t size) {
        const auto found = std::find_if(kept.begin(), kept.end(), [&](std::size_t position) {
            return events[position].size == size;
        });
        return found == kept.end() ? kept.back() : *found;
    };
    const allocator::ConvShape& shape = call.shape;
    if (!call.backward) {
        workspace_after(workspaces->forward, kept.front());
        return true;
    }
    if (call.input_gradient) {
        workspace_after(workspaces->backward_input, kept_of_size(shape.input_bytes()));
    }
    if (call.weight_gradient) {
        workspace_after(workspaces->backward_weight, kept_of_size(shape.weight_bytes()));
    }
    return true;
}

// A GPU's fused attention's backward in place of the CPU's math kernel's: of what the CPU's
// backward of a call allocated, blocks of the query's, key's or value's size (their gradients)
// stay and the rest leaves with its frees (the weights' gradients, a length x length matrix a
// head each); the fused kernel's own buffers come beside them, from the first of those
// allocations to the last: 1.53 times the query's bytes for the memory-efficient kernel
// PyTorch 2.11 picks in fp32, 2.05 times for cuDNN's in half precision (the medians of 480
// and 960 shapes recorded on an H200, bench/results/gpu-2026-12-04-kernels).
bool fuse_attention_backward(const std::vector<allocator::TraceEvent>& events,
                             const std::vector<std::size_t>& freed,
                             const SnapshotAttentionCall& call,
                             const std::function<std::size_t(std::size_t)>& at, Edit& edit) {
    const std::vector<std::size_t> made = positions_of(events, call.backward_allocations, at);
    if (made.empty()) {
        return false;
    }
    for (const std::size_t position : made) {
        const std::int64_t size = events[position].size;
        if (size != call.query_bytes && size != call.key_bytes && size != call.value_bytes) {
            edit.drop_with_free(position, freed);
        }
    }
    const double own = call.element == 2 ? 2.05 : 1.53;
    const std::int64_t size = std::llround(own * double(call.query_bytes));
    const allocator::TraceEvent& first = events[made.front()];
    const auto [alloc, free] = edit.block(size, first.index, first.stream);
    edit.before[made.front()].push_back(alloc);
    edit.before[made.back() + 1].push_back(free);
    return true;
}

}  // namespace

CudaDifferences as_on_cuda(allocator::AllocatorTrace& trace, const SnapshotDevice& device) {
    CudaDifferences differences;
    std::vector<allocator::TraceEvent>& events = trace.events;

    Edit edit(events.size());
    // The position of the first of `events` at or after a trace's event index.
    const std::function<std::size_t(std::size_t)> at = [&](std::size_t event) {
        return std::size_t(std::lower_bound(events.begin(), events.end(), event,
                                            [](const allocator::TraceEvent& e, std::size_t index) {
                                                return e.index < index;
                                            }) -
                           events.begin());
    };
    std::vector<std::size_t> freed;  // frees_of(events), made where an edit needs it
    for (const SnapshotStageSpan& span : device.stage_spans) {
        if (span.stage >= device.stages.size() ||
            !updates_with_foreach_on_cuda(device.stages[span.stage].name)) {
            continue;
        }
        if (freed.empty()) {
            freed = frees_of(events);
        }
        differences.updates += gather(events, freed, at(span.first), at(span.end), edit);
    }
    differences.attention_calls = fuse_attention(events, math_attention(device), edit);
    if ((!device.recurrent_calls.empty() || !device.convolution_calls.empty() ||
         !device.attention_calls.empty()) &&
        freed.empty()) {
        freed = frees_of(events);
    }
    for (const SnapshotAttentionCall& call : device.attention_calls) {
        differences.attention_backward_calls +=
            fuse_attention_backward(events, freed, call, at, edit);
    }
    for (const SnapshotRecurrentCall& call : device.recurrent_calls) {
        differences.recurrent_calls += as_cudnn_rnn(events, freed, call, at, edit);
    }
    for (const SnapshotConvolutionCall& call : device.convolution_calls) {
        differences.convolution_calls += as_cudnn_convolution(events, freed, call, at, edit);
    }
    if (edit.changes()) {
        std::vector<allocator::TraceEvent> edited;
        edited.reserve(events.size());
        for (std::size_t i = 0; i <= events.size(); ++i) {
            if (const auto inserted = edit.before.find(i); inserted != edit.before.end()) {
                edited.insert(edited.end(), inserted->second.begin(), inserted->second.end());
            }
            if (i < events.size() && !edit.dropped[i]) {
                edited.push_back(events[i]);
            }
        }
        events = std::move(edited);
    }

    // The workspaces are asked for first and never freed, so the model places them by its own
    // rules: a handle's 32 MiB in a segment of its own, cuBLASLt's 1 MiB in a small one.
    const allocator::CublasWorkspaces sizes = allocator::cublas_workspaces();
    std::vector<std::int64_t> blocks(ran_backward(device) ? 2 : 1, sizes.per_handle);
    blocks.push_back(sizes.cublas_lt);
    const std::size_t first = events.empty() ? 0 : events.front().index;
    const std::int64_t stream = events.empty() ? 0 : events.front().stream;
    std::vector<allocator::TraceEvent> workspaces;
    for (const std::int64_t size : blocks) {
        if (size > 0) {
            workspaces.push_back(edit.block(size, first, stream).first);
            differences.workspaces += size;
        }
    }
    events.insert(events.begin(), workspaces.begin(), workspaces.end());
    return differences;
}

}  // namespace oomlab::snapshot
