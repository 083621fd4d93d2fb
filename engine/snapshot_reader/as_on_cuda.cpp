#include "as_on_cuda.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "oomlab/allocator/cublas_workspaces.h"

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

// What the trace becomes: events left out, and events put before others.
struct Edit {
    std::vector<bool> dropped;                                                   // by position
    std::unordered_map<std::size_t, std::vector<allocator::TraceEvent>> before;  // by position
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
                    edit.dropped[last] = true;
                    dropped.insert(events[last].address);
                } else {
                    ++calls;
                }
                last = i;
            } else {
                last = events.size();  // the call ended: its last allocation stays
            }
        } else if (event.kind == Kind::Free && dropped.erase(event.address)) {
            edit.dropped[i] = true;
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

// The update in events [from, to): its temporaries, in the order they were made.
std::vector<Temporary> temporaries(const std::vector<allocator::TraceEvent>& events,
                                   std::size_t from, std::size_t to) {
    std::vector<Temporary> found;
    std::unordered_map<std::int64_t, std::size_t> open;  // address: its allocation
    for (std::size_t i = from; i < to; ++i) {
        if (events[i].kind == Kind::Alloc) {
            open[events[i].address] = i;
        } else if (events[i].kind == Kind::Free) {
            if (const auto made = open.find(events[i].address); made != open.end()) {
                found.push_back({made->second, i});
                open.erase(made);
            }
        }
    }
    std::sort(found.begin(), found.end(),
              [](const Temporary& a, const Temporary& b) { return a.alloc < b.alloc; });
    return found;
}

// The single-tensor update makes two temporaries of each parameter's size (its sqrt, then the
// quotient, made while the sqrt is alive); the multi-tensor one makes one for every parameter
// at once, alive from where the first was made to where the last was freed. Each temporary
// made while one of its size is still alive unpaired is the quotient of that one.
bool gather(const std::vector<allocator::TraceEvent>& events, std::size_t from, std::size_t to,
            Edit& edit, std::int64_t& next_address) {
    const std::vector<Temporary> made = temporaries(events, from, to);
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
            allocs.push_back({Kind::Alloc, alloc.index, next_address, alloc.size, alloc.stream});
            frees.push_back({Kind::Free, alloc.index, next_address, alloc.size, alloc.stream});
            next_address += alloc.size + 512;
        }
        last_freed = std::max(last_freed, temporary.free);
        edit.dropped[temporary.alloc] = true;
        edit.dropped[temporary.free] = true;
    }
    auto& at_start = edit.before[made.front().alloc];
    at_start.insert(at_start.end(), allocs.begin(), allocs.end());
    auto& after_end = edit.before[last_freed + 1];
    after_end.insert(after_end.end(), frees.begin(), frees.end());
    return true;
}

}  // namespace

CudaDifferences as_on_cuda(allocator::AllocatorTrace& trace, const SnapshotDevice& device) {
    CudaDifferences differences;
    std::vector<allocator::TraceEvent>& events = trace.events;

    Edit edit;
    edit.dropped.assign(events.size(), false);
    std::int64_t next_address = kMadeUpAddresses;
    for (const SnapshotStageSpan& span : device.stage_spans) {
        if (span.stage >= device.stages.size() ||
            !updates_with_foreach_on_cuda(device.stages[span.stage].name)) {
            continue;
        }
        const auto at = [&](std::size_t event) {
            return std::size_t(std::lower_bound(events.begin(), events.end(), event,
                                                [](const allocator::TraceEvent& e,
                                                   std::size_t index) { return e.index < index; }) -
                               events.begin());
        };
        differences.updates += gather(events, at(span.first), at(span.end), edit, next_address);
    }
    differences.attention_calls = fuse_attention(events, math_attention(device), edit);
    if (differences.updates > 0 || differences.attention_calls > 0) {
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
            workspaces.push_back({Kind::Alloc, first, next_address, size, stream});
            next_address += size + 512;
            differences.workspaces += size;
        }
    }
    events.insert(events.begin(), workspaces.begin(), workspaces.end());
    return differences;
}

}  // namespace oomlab::snapshot
