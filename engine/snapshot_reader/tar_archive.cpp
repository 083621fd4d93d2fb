// A tar archive's files listed from its headers (POSIX ustar, GNU's long names), each member's
// data read past, never kept.
#include "tar_archive.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab::snapshot {
namespace {

constexpr std::size_t kBlock = 512;
// Past this much of the archive its files are not listed: enough for a few ranks' traces.
constexpr std::uint64_t kMostListed = std::uint64_t(64) << 20;
constexpr std::size_t kNamesShown = 3;

// A header's text field: up to its first NUL.
std::string field(const char* header, std::size_t at, std::size_t width) {
    std::size_t length = 0;
    while (length < width && header[at + length] != '\0') {
        ++length;
    }
    return std::string(header + at, length);
}

// A header's size: octal digits, or GNU's base-256 for sizes past 8 GiB (not listed further).
std::optional<std::uint64_t> member_size(const char* header) {
    if (static_cast<unsigned char>(header[124]) & 0x80) {
        return std::nullopt;
    }
    std::uint64_t size = 0;
    for (std::size_t i = 124; i < 136 && header[i] >= '0' && header[i] <= '7'; ++i) {
        size = size * 8 + std::uint64_t(header[i] - '0');
    }
    return size;
}

// Reads `count` bytes into `into` (nullptr: past them); false where the archive ends first.
bool read_exactly(PickleInput& input, char* into, std::uint64_t count) {
    char skipped[1 << 16];
    while (count > 0) {
        const std::size_t want = std::size_t(std::min<std::uint64_t>(count, sizeof skipped));
        const std::size_t got = input.read(into ? into : skipped, want);
        if (got == 0) {
            return false;
        }
        count -= got;
        into = into ? into + got : nullptr;
    }
    return true;
}

struct Members {
    std::vector<std::string> files;
    bool all = false;  // listed to the archive's end
};

Members list_members(PickleInput& input) {
    Members members;
    std::uint64_t read = 0;
    std::string long_name;  // GNU's: the next member's name, in a member of its own
    char header[kBlock];
    while (read < kMostListed && read_exactly(input, header, kBlock)) {
        read += kBlock;
        if (header[0] == '\0') {
            members.all = true;  // the blocks of zeros that end it
            return members;
        }
        const std::optional<std::uint64_t> size = member_size(header);
        if (!size) {
            return members;
        }
        const std::uint64_t padded = (*size + kBlock - 1) / kBlock * kBlock;
        const char type = header[156];
        if (type == 'L' && *size < kBlock * 8) {
            long_name.assign(std::size_t(padded), '\0');
            if (!read_exactly(input, long_name.data(), padded)) {
                return members;
            }
            long_name = field(long_name.data(), 0, std::size_t(*size));
            read += padded;
            continue;
        }
        const std::string prefix = field(header, 345, 155);
        std::string name = long_name.empty()
                               ? (prefix.empty() ? "" : prefix + "/") + field(header, 0, 100)
                               : long_name;
        long_name.clear();
        const std::size_t base = name.rfind('/') + 1;  // 0 where there is no folder
        // A regular file, not macOS's resource forks ("._x") packed beside each one.
        if ((type == '0' || type == '\0') && name.compare(base, 2, "._") != 0) {
            members.files.push_back(printable_line(name));
        }
        if (!read_exactly(input, nullptr, padded)) {
            return members;
        }
        read += padded;
    }
    members.all = read < kMostListed;
    return members;
}

}  // namespace

bool looks_like_tar(const std::string& head) {
    return head.size() >= 262 && head.compare(257, 5, "ustar") == 0;
}

void refuse_tar(PickleInput& input, const std::string& source, bool gzipped) {
    const Members members = list_members(input);
    const std::vector<std::string>& files = members.files;
    std::string listed;
    for (std::size_t i = 0; i < files.size() && i < kNamesShown; ++i) {
        listed += (i ? ", " : "") + files[i];
    }
    if (files.size() > kNamesShown) {
        listed += " and " + std::to_string(files.size() - kNamesShown) + " more";
    }
    const std::string count = (members.all ? "" : "at least ") + std::to_string(files.size()) +
                              (files.size() == 1 ? " file" : " files");
    throw BadInput(source + ": " + (gzipped ? "a gzip'd tar archive" : "a tar archive") + " of " +
                   count + (files.empty() ? "" : " (" + listed + ")") +
                   ", not one snapshot or trace: extract the one to read and pass it" +
                   (files.empty() ? std::string()
                                  : " (tar " + std::string(gzipped ? "xzf " : "xf ") + source +
                                        " " + files.front() + ")"));
}

}  // namespace oomlab::snapshot
