#include "oomlab/common/freed_memory.h"

#include <malloc.h>

#include <atomic>
#include <mutex>

namespace oomlab {

namespace {

// glibc's documented defaults, and what training uses instead.
constexpr int kDefaultTrimThreshold = 128 << 10;
constexpr int kDefaultTopPad = 128 << 10;
constexpr int kReuseTrimThreshold = 256 << 20;
constexpr int kReuseTopPad = 16 << 20;

std::atomic<bool> g_kept_for_reuse{false};
std::mutex g_settings;  // a release and a training start change the same settings

void set_trimming(int threshold, int pad) {
    mallopt(M_TRIM_THRESHOLD, threshold);
    mallopt(M_TOP_PAD, pad);
}

}  // namespace

void keep_freed_memory_for_reuse() {
    const std::lock_guard lock(g_settings);
    if (g_kept_for_reuse.exchange(true)) {
        return;
    }
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed threshold
    set_trimming(kReuseTrimThreshold, kReuseTopPad);
}

void give_back_memory_freed_by(const std::function<void()>& release) {
    {
        const std::lock_guard lock(g_settings);
        set_trimming(0, 0);
        release();
        if (g_kept_for_reuse) {
            set_trimming(kReuseTrimThreshold, kReuseTopPad);
        } else {
            set_trimming(kDefaultTrimThreshold, kDefaultTopPad);
        }
    }
    malloc_trim(0);
}

}  // namespace oomlab
