#include "pickle_budget.h"

#include <unistd.h>

#include <algorithm>

#include "oomlab/common/format.h"

namespace oomlab::snapshot {
namespace {

constexpr std::uint64_t kFreeBytes = std::uint64_t(64) << 20;  // below this, nothing is judged
constexpr std::uint64_t kHeldPerByte = 16;                     // the most kept for each byte read
constexpr std::uint64_t kBytesPerHeld = 256;                   // the most read for each byte kept

}  // namespace

PickleBudget::PickleBudget()
    : m_most_kept(std::uint64_t(::sysconf(_SC_PHYS_PAGES)) *
                  std::uint64_t(::sysconf(_SC_PAGESIZE)) / 2) {}

bool PickleBudget::allows(std::uint64_t read, std::uint64_t kept) const {
    return kept <= m_most_kept && (kept <= kFreeBytes || kept / kHeldPerByte <= read) &&
           (read <= kFreeBytes || read / kBytesPerHeld <= kept);
}

std::string PickleBudget::refusal(std::uint64_t read, std::uint64_t kept,
                                  const std::string& what) const {
    const std::string taking = what + " would take " + format_bytes(std::int64_t(kept)) +
                               " of memory after " + format_bytes(std::int64_t(read)) +
                               " of pickle";
    if (kept > m_most_kept) {
        return taking + ", more than half of this machine's " +
               format_bytes(std::int64_t(2 * m_most_kept));
    }
    if (kept > kFreeBytes && kept / kHeldPerByte > read) {
        return taking + ": a snapshot keeps a few bytes for each byte of it, not " +
               std::to_string(kept / std::max<std::uint64_t>(read, 1));
    }
    return format_bytes(std::int64_t(read)) + " of pickle keep only " +
           format_bytes(std::int64_t(kept)) +
           ": its values are dropped as they are made; a snapshot keeps what it records";
}

}  // namespace oomlab::snapshot
