// Allocation tags: the loop's phase for every thread, unless a thread sets its own.
#include <gtest/gtest.h>

#include <thread>

#include "oomlab/snapshot_writer/allocation_tag.h"

namespace oomlab::memory {
namespace {

TEST(AllocationTag, ThreadsSeeTheLoopPhaseUnlessTheySetTheirOwn) {
    set_current_tag(AllocationTag::Backward);
    AllocationTag seen_by_autograd_thread = AllocationTag::Untagged;
    std::thread([&] { seen_by_autograd_thread = current_tag(); }).join();
    EXPECT_EQ(seen_by_autograd_thread, AllocationTag::Backward);

    AllocationTag seen_by_loader = AllocationTag::Untagged;
    std::thread([&] {
        const ThreadTagScope loading(AllocationTag::Data);
        seen_by_loader = current_tag();
    }).join();
    EXPECT_EQ(seen_by_loader, AllocationTag::Data);
    EXPECT_EQ(current_tag(), AllocationTag::Backward);  // the scope was the other thread's
    {
        const ThreadTagScope scope(AllocationTag::Eval);
        EXPECT_EQ(current_tag(), AllocationTag::Eval);
    }
    EXPECT_EQ(current_tag(), AllocationTag::Backward);
    set_current_tag(AllocationTag::Untagged);
    EXPECT_STREQ(tag_label(AllocationTag::Optimizer), "optimizer: state and update");
}

}  // namespace
}  // namespace oomlab::memory
