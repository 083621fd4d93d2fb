// Memory freed of a worker thread's arena goes back to the system: glibc keeps an arena's free
// top below its trim threshold (256 MiB while training keeps freed memory for reuse) and
// malloc_trim does not return it.
#include "oomlab/common/freed_memory.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <thread>
#include <vector>

#include <unistd.h>

namespace oomlab {
namespace {

double resident_mib() {
    long pages = 0;
    long resident = 0;
    std::ifstream("/proc/self/statm") >> pages >> resident;
    return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1 << 20);
}

TEST(FreedMemory, WhatAWorkerThreadAllocatedIsGivenBackOnceFreed) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "AddressSanitizer allocates for itself: glibc's arenas are not used";
#endif
    keep_freed_memory_for_reuse();  // as a workbench that trained has it
    const double before = resident_mib();
    constexpr std::size_t kPiece = 768;  // a trace's events and the like: small, by the million
    std::vector<std::unique_ptr<char[]>> pieces;
    std::thread([&] {
        pieces.reserve((48 << 20) / kPiece);
        for (std::size_t i = 0; i < (48 << 20) / kPiece; ++i) {
            pieces.emplace_back(new char[kPiece]);
            std::memset(pieces.back().get(), 1, kPiece);
        }
    }).join();
    const double held = resident_mib();
    ASSERT_GT(held, before + 40) << "48 MiB allocated";
    give_back_memory_freed_by([&] { std::vector<std::unique_ptr<char[]>>().swap(pieces); });
    const double after = resident_mib();
    EXPECT_LT(after, before + 8) << "before " << before << " MiB, held " << held << " MiB";
}

}  // namespace
}  // namespace oomlab
