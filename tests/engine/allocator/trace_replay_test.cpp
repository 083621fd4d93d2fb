// Replaying a trace: what the model keeps of an out-of-memory event, worked out by hand.
#include <gtest/gtest.h>

#include "oomlab/allocator/trace_replay.h"
#include "test_support.h"

namespace oomlab::allocator {
namespace {

using test::kMiB;
using Kind = TraceEvent::Kind;

// A 6 MiB request opens a 20 MiB segment; a second 6 MiB one splits its rest, leaving an
// 8 MiB tail; the first is freed. Z and W share a small-pool segment, W freed. A 12 MiB request
// under 32 MiB then fails: no block of 12 MiB, no room for its segment (22 + 12 MiB), and no
// whole free segment to release. Its pool is the large one: X's 6 MiB and the tail's 8 MiB,
// not the small segment's free rest.
TEST(TraceReplay, AnOutOfMemoryKeepsItsPoolAsTheFailureLeftIt) {
    AllocatorTrace trace;
    trace.events = {
        {Kind::Alloc, 0, 0x100000, 6 * kMiB, 0},  // X
        {Kind::Alloc, 1, 0x200000, 6 * kMiB, 0},  // Y
        {Kind::Alloc, 2, 0x300000, 4096, 0},      // Z
        {Kind::Alloc, 3, 0x400000, 4096, 0},      // W
        {Kind::Free, 4, 0x100000, 6 * kMiB, 0},  {Kind::Free, 5, 0x400000, 4096, 0},
        {Kind::Oom, 6, 0, 12 * kMiB, 0},
    };
    const WhatIf replay = replay_under(trace, AllocatorSettings{}, 32 * kMiB, 1);
    ASSERT_EQ(replay.ooms.size(), 1u);
    const OomOutcome& oom = replay.ooms[0];
    EXPECT_TRUE(oom.happens);
    EXPECT_EQ(oom.at_failure.reserved, 22 * kMiB);
    EXPECT_EQ(oom.at_failure.cached_free, 14 * kMiB);
    EXPECT_EQ(oom.at_failure.largest_free, 8 * kMiB);
    EXPECT_EQ(oom.at_failure.free_blocks, 2);
    // With room for its segment it is served: the error does not happen.
    EXPECT_FALSE(replay_under(trace, AllocatorSettings{}, 34 * kMiB, 1).ooms.at(0).happens);
}

}  // namespace
}  // namespace oomlab::allocator
