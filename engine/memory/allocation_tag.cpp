#include "allocation_tag.h"

#include <atomic>

namespace oomlab::memory {
namespace {

std::atomic<AllocationTag> g_loop_tag{AllocationTag::Untagged};
thread_local AllocationTag t_thread_tag = AllocationTag::Untagged;

}  // namespace

const char* tag_label(AllocationTag tag) {
    switch (tag) {
        case AllocationTag::Setup:
            return "setup: parameters";
        case AllocationTag::Data:
            return "data: batches";
        case AllocationTag::Forward:
            return "forward: activations";
        case AllocationTag::Backward:
            return "backward: gradients";
        case AllocationTag::Optimizer:
            return "optimizer: state and update";
        case AllocationTag::Eval:
            return "evaluation";
        case AllocationTag::Untagged:
            break;
    }
    return "untagged";
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
