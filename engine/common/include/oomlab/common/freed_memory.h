// What glibc does with memory the process frees: kept for reuse while training, given back to
// the system when a large piece of work (a snapshot's report) is let go.
#pragma once

#include <functional>

namespace oomlab {

// Training frees and allocates the same large blocks every step: glibc keeps them in the heap
// (no mapping and unmapping each, no page faults) rather than returning them. Idempotent.
void keep_freed_memory_for_reuse();

// Runs `release`, which frees much memory, with every arena giving back its free top as it
// frees, then returns every whole free page, and restores the settings before. glibc keeps an
// arena's top up to its trim threshold (256 MiB once keep_freed_memory_for_reuse ran, up to
// 64 MiB it sets itself after large frees), and malloc_trim returns only the main arena's top:
// a snapshot read in a worker thread kept 54 MiB resident after its window closed.
void give_back_memory_freed_by(const std::function<void()>& release);

}  // namespace oomlab
