// What the engine is doing while memory is allocated, so each allocation in a memory snapshot
// can be labelled with the category it belongs to (the allocator itself only sees sizes).
#pragma once

#include <cstddef>
#include <cstdint>

namespace oomlab::memory {

enum class AllocationTag : std::uint8_t {
    Untagged,
    Setup,      // model parameters and what is created with them
    Data,       // batches of token ids, masks and labels
    Forward,    // activations saved for backward, and temporaries
    Backward,   // gradients and temporaries of the backward pass
    Optimizer,  // optimizer state and the update
    Eval,       // the validation pass
    // Not phases: what a block became after it was allocated (see retag_block).
    Gradients,       // a parameter's gradient
    OptimizerState,  // the optimizer's per-parameter state
};
inline constexpr std::size_t kAllocationTagCount = 9;

// The label memory_viz shows for an allocation, e.g. "forward: activations".
const char* tag_label(AllocationTag tag);

// The training loop's phase. Process-wide rather than per thread: on CUDA the autograd engine
// runs backward on its own device thread, whose allocations belong to the loop's phase.
void set_current_tag(AllocationTag tag);

// The tag for an allocation made now on this thread: the thread's own tag if it set one
// (a data-loading thread), else the loop's phase.
AllocationTag current_tag();

// Marks this thread's allocations with `tag` while the scope lives.
class ThreadTagScope {
public:
    explicit ThreadTagScope(AllocationTag tag);
    ~ThreadTagScope();
    ThreadTagScope(const ThreadTagScope&) = delete;
    ThreadTagScope& operator=(const ThreadTagScope&) = delete;

private:
    AllocationTag m_previous;
};

}  // namespace oomlab::memory
