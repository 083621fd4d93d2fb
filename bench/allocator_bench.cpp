// What the CPU tracking allocator costs per tensor allocation against torch's own CPU
// allocator: steady allocate/free (the common case in a step) and rising allocations, where
// every block is a new high and the module ledger is copied.
//
//   build/bench/oomlab-allocator-bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <c10/core/CPUAllocator.h>

#include <vector>

#include "oomlab/measure/tracking_allocator.h"
#include "oomlab/snapshot_writer/module_scope.h"

namespace {

c10::Allocator* torch_allocator() {
    return c10::GetDefaultCPUAllocator();
}

c10::Allocator* tracking_allocator() {
    oomlab::memory::install_tracking_allocator();
    return c10::GetCPUAllocator();
}

// Allocate and free one block, again and again: no new high after the first.
void steady(benchmark::State& state, c10::Allocator* allocator) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    for (auto _ : state) {
        c10::DataPtr block = allocator->allocate(bytes);
        benchmark::DoNotOptimize(block.get());
    }
}

// Keep every block: each allocation raises the total to a new high.
void rising(benchmark::State& state, c10::Allocator* allocator) {
    const auto bytes = static_cast<std::size_t>(state.range(0));
    // A model's worth of registered modules, as in a run.
    for (const char* name : {"embeddings", "block 1", "block 2", "block 3", "block 4", "head",
                             "loss", "optimizer", "other"}) {
        oomlab::memory::module_id(name);
    }
    std::vector<c10::DataPtr> held;
    held.reserve(1024);
    for (auto _ : state) {
        held.push_back(allocator->allocate(bytes));
        if (held.size() == 1024) {
            state.PauseTiming();
            held.clear();
            oomlab::memory::reset_cpu_ledger_peak();
            state.ResumeTiming();
        }
    }
}

void BM_TorchSteady(benchmark::State& state) {
    steady(state, torch_allocator());
}
void BM_TrackingSteady(benchmark::State& state) {
    steady(state, tracking_allocator());
}
void BM_TorchRising(benchmark::State& state) {
    rising(state, torch_allocator());
}
void BM_TrackingRising(benchmark::State& state) {
    rising(state, tracking_allocator());
}

BENCHMARK(BM_TorchSteady)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_TrackingSteady)->Arg(4096)->Arg(1 << 20);
BENCHMARK(BM_TorchRising)->Arg(4096);
BENCHMARK(BM_TrackingRising)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
