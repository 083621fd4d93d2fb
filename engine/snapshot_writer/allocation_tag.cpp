#include "oomlab/snapshot_writer/allocation_tag.h"

#include <array>
#include <atomic>

#include "oomlab/common/name_table.h"

namespace oomlab::memory {
namespace {

std::atomic<AllocationTag> g_loop_tag{AllocationTag::Untagged};
thread_local AllocationTag t_thread_tag = AllocationTag::Untagged;

// What memory_viz shows for each allocation (NUL-terminated: tag_label returns a C string).
constexpr std::array<NamedValue<AllocationTag>, 8> kTagLabels = {{
    {AllocationTag::Setup, "setup: parameters"},
    {AllocationTag::Data, "data: batches"},
    {AllocationTag::Forward, "forward: activations"},
    {AllocationTag::Backward, "backward: gradients"},
    {AllocationTag::Optimizer, "optimizer: state and update"},
    {AllocationTag::Eval, "evaluation"},
    {AllocationTag::Gradients, "gradients"},
    {AllocationTag::OptimizerState, "optimizer: state"},
}};

}  // namespace

const char* tag_label(AllocationTag tag) {
    return name_of(tag, kTagLabels, "untagged").data();
}

void set_current_tag(AllocationTag tag) {
    g_loop_tag.store(tag, std::memory_order_relaxed);
}

AllocationTag current_tag() {
    return t_thread_tag != AllocationTag::Untagged ? t_thread_tag
                                                   : g_loop_tag.load(std::memory_order_relaxed);
}

ThreadTagScope::ThreadTagScope(AllocationTag tag) : m_previous(t_thread_tag) {
    t_thread_tag = tag;
}

ThreadTagScope::~ThreadTagScope() {
    t_thread_tag = m_previous;
}

}  // namespace oomlab::memory
