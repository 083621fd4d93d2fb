// What a pickle may cost, measured against what it spells out (its bytes, unpacked). Reading
// a snapshot keeps 4 to 10 bytes for each byte of it (its events' dicts and items, measured on
// PyTorch's snapshots and the benchmarks' traces); a file that makes far more of each byte (a
// stream of empty lists, a memo numbered far past its values) or far less (values dropped as
// soon as made) is not a snapshot, and is refused with words as soon as it shows it, long
// before the machine's memory or the 16 GiB any file may unpack to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oomlab::snapshot {

inline constexpr std::uint64_t kMostPickleText = std::uint64_t(64) << 20;  // names are short
// A whole number past 64 bits is read as such (a line of 2**64-1); one of more bytes than this is
// no number a program wrote.
inline constexpr std::size_t kMostWholeNumberBytes = 1024;

class PickleBudget {
public:
    PickleBudget();
    // Whether a pickle of `read` bytes so far may keep `kept` bytes: asked for each value
    // kept, so it only compares.
    bool allows(std::uint64_t read, std::uint64_t kept) const;
    // Why it may not (with what `what` is about to add): a snapshot keeps a few bytes for each
    // byte of it, within half the machine's memory.
    std::string refusal(std::uint64_t read, std::uint64_t kept, const std::string& what) const;

private:
    std::uint64_t m_most_kept;  // half the machine's memory: the rest is for the report
};

}  // namespace oomlab::snapshot
