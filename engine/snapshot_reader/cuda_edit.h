// How the GPU estimate edits a CPU trace's requests (as_on_cuda.cpp): events left out, events
// put before others, and blocks the model makes that the trace never did; with the edits of the
// kernels cuDNN runs on CUDA (cuda_kernel_edits.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oomlab/allocator/trace_replay.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::snapshot::cuda_edit {

using Kind = allocator::TraceEvent::Kind;
using Events = std::vector<allocator::TraceEvent>;
// The position of the first event at or after a trace's event index.
using Position = std::function<std::size_t(std::size_t)>;

// Addresses for what the model allocates that the trace never did: above any real one.
inline constexpr std::int64_t kMadeUpAddresses = std::int64_t{1} << 60;

// What the trace becomes: events left out, and events put before others (by position), among
// them blocks the model makes that the trace never did, at addresses of their own.
struct Edit {
    explicit Edit(std::size_t events) : dropped(events, false) {}

    std::vector<bool> dropped;
    std::unordered_map<std::size_t, Events> before;

    void drop(std::size_t position) { dropped[position] = true; }
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
    // The allocation at `position` made `size` bytes instead and freed before the event at
    // `until` (never, if that is the trace's end): a block of the model's own, the original left
    // out with its free (its address may be taken again before `until`).
    void remake(std::size_t position, std::int64_t size, std::size_t until,
                const std::vector<std::size_t>& freed, const Events& events) {
        const auto [alloc, free] = block(size, events[position].index, events[position].stream);
        before[position].push_back(alloc);
        if (until < events.size()) {
            before[until].push_back(free);
        }
        drop_with_free(position, freed);
    }

private:
    std::int64_t next_address = kMadeUpAddresses;
};

// Where each allocation of `events` is freed (a position), or events.size() if never.
std::vector<std::size_t> frees_of(const Events& events);

// The positions of a call's allocations among `events` (those the trace still has).
std::vector<std::size_t> positions_of(const Events& events,
                                      const std::vector<std::size_t>& allocations,
                                      const Position& at);

// cuDNN's RNN in place of the CPU's (cuda_kernel_edits.cpp).
bool as_cudnn_rnn(const Events& events, const std::vector<std::size_t>& freed,
                  const SnapshotRecurrentCall& call, const Position& at, Edit& edit);

// cuDNN's convolution in place of the CPU's (cuda_kernel_edits.cpp).
bool as_cudnn_convolution(const Events& events, const std::vector<std::size_t>& freed,
                          const SnapshotConvolutionCall& call, const Position& at, Edit& edit);

}  // namespace oomlab::snapshot::cuda_edit
