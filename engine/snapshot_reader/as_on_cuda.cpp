#include "as_on_cuda.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cuda_edit.h"
#include "oomlab/allocator/cublas_workspaces.h"

namespace oomlab::snapshot {
namespace {

using namespace cuda_edit;

bool ran_backward(const SnapshotDevice& device) {
    return std::any_of(device.stacks.begin(), device.stacks.end(), [&](const SnapshotStack& s) {
        return s.kind < device.names.size() &&
               (device.names[s.kind] == "backward" || device.names[s.kind] == "gradient");
    });
}

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

// Where an attention call's inputs may have been made: since the call before it returned (the
// latest to return before it began), and before the one after it begins (positions).
struct CallsAround {
    std::size_t since = 0;
    std::size_t next_begin = 0;
};

// What a fused kernel (memory-efficient, cuDNN's) saves for backward that the CPU's math kernel
// does not, where the call saved something (it was trained), each held until the last of what
// the CPU's kernel saved was freed (its backward): its output and log-sum-exp, in place of the
// math kernel's last allocation (its output, which the CPU's backward does not need, or a
// temporary); what the op the program called made before the kernel (a boolean mask made
// floats, the kernel's attention bias); and the query, key and value the program made, which
// the math kernel copies before use, so that the CPU frees them when the call returns: the
// latest allocations alive at the call of their sizes (or of them packed in one), back to the
// first of another size no smaller than the smallest of them.
bool keep_what_fused_kernels_save(const Events& events, const std::vector<std::size_t>& freed,
                                  const SnapshotAttentionCall& call, const CallsAround& around,
                                  const Position& at, Edit& edit) {
    const std::vector<std::size_t> made = positions_of(events, call.allocations, at);
    if (made.size() < 2) {
        return false;
    }
    const std::size_t end = at(call.end);
    std::size_t saved_until = 0;
    for (auto position = made.begin(); position + 1 != made.end(); ++position) {
        if (freed[*position] >= end) {
            saved_until = std::max(saved_until, freed[*position]);
        }
    }
    if (saved_until == 0) {
        return false;
    }
    const std::size_t last = made.back();
    edit.remake(last, call.query_bytes + call.logsumexp_bytes, std::max(saved_until, freed[last]),
                freed, events);
    for (const std::size_t position : positions_of(events, call.allocations_before, at)) {
        if (freed[position] >= end && freed[position] < saved_until) {
            edit.remake(position, events[position].size, saved_until, freed, events);
        }
    }
    // The inputs: made since the call before returned, freed when this one returned and before
    // the next began, or this one's backward.
    const std::size_t begin = at(call.begin);
    const std::size_t returned = at(call.called_end);
    std::size_t until = std::min(saved_until, around.next_begin);
    if (!call.backward_allocations.empty()) {
        until = std::min(until, at(call.backward_allocations.front()));
    }
    const std::int64_t q = call.query_bytes;
    const std::int64_t k = call.key_bytes;
    const std::int64_t v = call.value_bytes;
    const std::int64_t inputs[] = {q, k, v, q + k + v, k + v};
    const std::int64_t smallest = std::min({q, k, v});
    std::int64_t found = 0;
    for (std::size_t position = begin; position-- > around.since && found < q + k + v;) {
        const allocator::TraceEvent& event = events[position];
        if (event.kind != Kind::Alloc || event.size < smallest || edit.dropped[position] ||
            freed[position] < begin) {
            continue;  // not alive at the call, or smaller than any of its inputs
        }
        if (std::find(std::begin(inputs), std::end(inputs), event.size) == std::end(inputs)) {
            break;
        }
        found += event.size;
        if (freed[position] >= returned && freed[position] < until) {
            edit.remake(position, event.size, saved_until, freed, events);
        }
    }
    return true;
}

// CUDA's dropout (ATen's native_dropout, for a tensor on CUDA) keeps a mask of a byte an element
// for backward where the CPU's keeps its noise, a tensor of the input's type.
bool as_dropout_mask(const Events& events, const std::vector<std::size_t>& freed,
                     const SnapshotDropoutMask& mask, const Position& at, Edit& edit) {
    const std::size_t position = at(mask.event);
    if (position >= events.size() || events[position].index != mask.event ||
        events[position].kind != Kind::Alloc || events[position].size <= mask.mask_bytes) {
        return false;
    }
    edit.remake(position, mask.mask_bytes, freed[position], freed, events);
    return true;
}

// The reduction kernel's buffer, made and freed after its sum (before the event at `after`).
bool add_reduction_buffer(const Events& events, std::size_t after, std::int64_t bytes,
                          const Position& at, Edit& edit) {
    if (events.empty()) {
        return false;
    }
    const std::size_t position = at(after);
    const allocator::TraceEvent& near = events[std::min(position, events.size() - 1)];
    const auto [alloc, free] = edit.block(bytes, near.index, near.stream);
    edit.before[position].insert(edit.before[position].end(), {alloc, free});
    return true;
}

// cuBLAS's workspaces, which each thread's handle takes from the caching allocator at its first
// matrix product and keeps (ATen's CublasHandlePool.cpp): the program's thread's with cuBLASLt's
// beside it, at the first product of forward, and autograd's device thread's at the first of
// backward, where it ran one. Where the profile names no product, at the trace's start. The
// bytes taken.
std::int64_t take_cublas_workspaces(const Events& events, const SnapshotDevice& device,
                                    const Position& at, Edit& edit) {
    const allocator::CublasWorkspaces sizes = allocator::cublas_workspaces();
    const auto take = [&](std::size_t first_product, std::initializer_list<std::int64_t> taking) {
        const std::size_t position = first_product == SIZE_MAX ? 0 : at(first_product);
        const allocator::TraceEvent near = events.empty()
                                               ? allocator::TraceEvent{}
                                               : events[std::min(position, events.size() - 1)];
        Events made;
        std::int64_t taken = 0;
        for (const std::int64_t size : taking) {
            if (size > 0) {
                made.push_back(edit.block(size, near.index, near.stream).first);
                taken += size;
            }
        }
        Events& before = edit.before[position];
        before.insert(before.begin(), made.begin(), made.end());
        return taken;
    };
    std::int64_t taken = take(device.first_matrix_product, {sizes.per_handle, sizes.cublas_lt});
    if (ran_backward(device)) {
        taken += take(device.first_backward_matrix_product, {sizes.per_handle});
    }
    return taken;
}
}  // namespace

namespace cuda_edit {

// Where each allocation of `events` is freed (a position), or events.size() if never.
std::vector<std::size_t> frees_of(const Events& events) {
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
std::vector<std::size_t> positions_of(const Events& events,
                                      const std::vector<std::size_t>& allocations,
                                      const Position& at) {
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

}  // namespace cuda_edit

CudaDifferences as_on_cuda(allocator::AllocatorTrace& trace, const SnapshotDevice& device) {
    CudaDifferences differences;
    Events& events = trace.events;

    Edit edit(events.size());
    const Position at = [&](std::size_t event) {
        return std::size_t(std::lower_bound(events.begin(), events.end(), event,
                                            [](const allocator::TraceEvent& e, std::size_t index) {
                                                return e.index < index;
                                            }) -
                           events.begin());
    };
    std::vector<std::size_t> freed;  // frees_of(events), made where an edit needs it
    const auto frees = [&]() -> const std::vector<std::size_t>& {
        if (freed.empty()) {
            freed = frees_of(events);
        }
        return freed;
    };
    for (const SnapshotStageSpan& span : device.stage_spans) {
        if (span.stage < device.stages.size() &&
            updates_with_foreach_on_cuda(device.stages[span.stage].name)) {
            differences.updates += gather(events, frees(), at(span.first), at(span.end), edit);
        }
    }
    differences.attention_calls = fuse_attention(events, math_attention(device), edit);
    // The calls in the order they began (threads' calls interleave), each looked back from to
    // where the one before it returned: every event is looked at once.
    std::vector<const SnapshotAttentionCall*> begun;
    for (const SnapshotAttentionCall& call : device.attention_calls) {
        begun.push_back(&call);
    }
    std::stable_sort(begun.begin(), begun.end(),
                     [](const auto* a, const auto* b) { return a->begin < b->begin; });
    std::size_t since = 0;
    for (std::size_t i = 0; i < begun.size(); ++i) {
        const SnapshotAttentionCall& call = *begun[i];
        const CallsAround around{std::min(since, at(call.begin)),
                                 i + 1 < begun.size() ? at(begun[i + 1]->begin) : events.size()};
        keep_what_fused_kernels_save(events, frees(), call, around, at, edit);
        since = std::max(since, at(call.called_end));
        differences.attention_backward_calls +=
            fuse_attention_backward(events, frees(), call, at, edit);
    }
    for (const auto& [after, bytes] : device.reduction_buffers) {
        differences.reduction_buffers += add_reduction_buffer(events, after, bytes, at, edit);
    }
    for (const SnapshotDropoutMask& mask : device.dropout_masks) {
        differences.dropout_masks += as_dropout_mask(events, frees(), mask, at, edit);
    }
    for (const SnapshotRecurrentCall& call : device.recurrent_calls) {
        differences.recurrent_calls += as_cudnn_rnn(events, frees(), call, at, edit);
    }
    for (const SnapshotConvolutionCall& call : device.convolution_calls) {
        differences.convolution_calls += as_cudnn_convolution(events, frees(), call, at, edit);
    }
    differences.workspaces = take_cublas_workspaces(events, device, at, edit);

    Events edited;
    edited.reserve(events.size() + 8);
    for (std::size_t i = 0; i <= events.size(); ++i) {
        if (const auto inserted = edit.before.find(i); inserted != edit.before.end()) {
            edited.insert(edited.end(), inserted->second.begin(), inserted->second.end());
        }
        if (i < events.size() && !edit.dropped[i]) {
            edited.push_back(events[i]);
        }
    }
    events = std::move(edited);
    return differences;
}

}  // namespace oomlab::snapshot
