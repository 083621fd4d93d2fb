#include "oomlab/common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

#include "oomlab/common/atomic_file.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab {
namespace {

std::string quoted(const std::string& path) {
    return "\"" + path + "\"";
}

// "<path>: <problem> (<what>)", as every message about a file reads ("path:line: what").
[[noreturn]] void refuse(const std::string& what, const std::string& path,
                         const std::string& problem) {
    throw BadInput(path + ": " + problem + " (" + what + ")", {what});
}

const char* kind_of(mode_t mode) {
    if (S_ISFIFO(mode)) {
        return "a FIFO";
    }
    if (S_ISSOCK(mode)) {
        return "a socket";
    }
    if (S_ISCHR(mode) || S_ISBLK(mode)) {
        return "a device";
    }
    return "not a regular file";
}

std::string folder_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) {
        return ".";
    }
    return slash == 0 ? "/" : path.substr(0, slash);
}

bool same_file(const struct stat& a, const std::string& other) {
    struct stat b {};
    return stat(other.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

void check_input_path(const std::string& path, const std::string& what, PathKind kind) {
    if (path.empty()) {
        throw BadInput(what + ": no path given", {what});
    }
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
        refuse(what, path,
               errno == ENOENT ? "does not exist"
                               : std::string("cannot be read: ") + std::strerror(errno));
    }
    const bool folder = S_ISDIR(info.st_mode);
    if (folder && kind == PathKind::File) {
        refuse(what, path, "is a folder; give a file");
    }
    if (!folder && kind == PathKind::Folder) {
        refuse(what, path, "is not a folder; give a folder");
    }
    if (!folder && !S_ISREG(info.st_mode)) {
        refuse(what, path,
               std::string("is ") + kind_of(info.st_mode) +
                   ", not a regular file; OOM Lab reads only files and folders");
    }
    if (access(path.c_str(), folder ? (R_OK | X_OK) : R_OK) != 0) {
        refuse(what, path, std::string("cannot be read: ") + std::strerror(errno));
    }
}

std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes) {
    check_input_path(path, what, PathKind::File);
    // Non-blocking: if the path became a FIFO since the check, open must not wait for a writer.
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        refuse(what, path, std::string("cannot be opened: ") + std::strerror(errno));
    }
    struct stat info {};
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
        close(fd);
        refuse(what, path, "is not a regular file");
    }
    if (static_cast<std::uint64_t>(info.st_size) > max_bytes) {
        close(fd);
        refuse(what, path,
               "is " + format_bytes(info.st_size) + "; at most " +
                   format_bytes(static_cast<std::int64_t>(max_bytes)) + " are read here");
    }
    std::string content;
    content.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = read(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            const int error = errno;
            close(fd);
            refuse(what, path, std::string("cannot be read: ") + std::strerror(error));
        }
        if (n == 0) {
            break;  // shrank while being read: take what is there
        }
        done += static_cast<std::size_t>(n);
    }
    close(fd);
    content.resize(done);
    return content;
}

namespace {

void append_utf8(std::string& out, std::uint32_t code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

std::string utf16_to_utf8(std::string_view bytes, bool little_endian) {
    std::string out;
    out.reserve(bytes.size() / 2);
    const auto unit = [&](std::size_t i) -> std::uint32_t {
        const auto lo = static_cast<unsigned char>(bytes[i + (little_endian ? 0 : 1)]);
        const auto hi = static_cast<unsigned char>(bytes[i + (little_endian ? 1 : 0)]);
        return static_cast<std::uint32_t>(hi << 8 | lo);
    };
    for (std::size_t i = 0; i + 1 < bytes.size(); i += 2) {
        std::uint32_t code = unit(i);
        if (code >= 0xD800 && code < 0xDC00 && i + 3 < bytes.size()) {
            const std::uint32_t low = unit(i + 2);
            if (low >= 0xDC00 && low < 0xE000) {
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                i += 2;
            }
        }
        append_utf8(out, code);
    }
    return out;
}

// UTF-16 without a byte-order mark: most ASCII characters have a zero byte beside them.
std::optional<bool> utf16_without_mark(std::string_view bytes) {
    const std::size_t sample = std::min<std::size_t>(bytes.size(), 4096) & ~std::size_t{1};
    std::size_t even_zeros = 0;
    std::size_t odd_zeros = 0;
    for (std::size_t i = 0; i < sample; i += 2) {
        even_zeros += bytes[i] == '\0';
        odd_zeros += bytes[i + 1] == '\0';
    }
    const std::size_t pairs = sample / 2;
    if (pairs >= 2 && odd_zeros * 10 >= pairs * 8 && even_zeros * 10 < pairs) {
        return true;  // "a\0b\0": little-endian
    }
    if (pairs >= 2 && even_zeros * 10 >= pairs * 8 && odd_zeros * 10 < pairs) {
        return false;
    }
    return std::nullopt;
}

}  // namespace

std::string text_as_utf8(const std::string& path, const std::string& what, std::string bytes) {
    const std::string_view view(bytes);
    if (view.substr(0, 2) == "\xFF\xFE" || view.substr(0, 2) == "\xFE\xFF") {
        bytes = utf16_to_utf8(view.substr(2), view[0] == '\xFF');
    } else if (const auto little_endian = utf16_without_mark(view)) {
        bytes = utf16_to_utf8(view, *little_endian);
    } else if (view.substr(0, 3) == "\xEF\xBB\xBF") {
        bytes.erase(0, 3);
    }
    if (const std::size_t zero = bytes.find('\0'); zero != std::string::npos) {
        const auto line = 1 + std::count(bytes.begin(), bytes.begin() + zero, '\n');
        throw bad_input_at(path, static_cast<std::size_t>(line),
                           "holds a zero byte: this is not a text file (give " + what +
                               " a UTF-8 or UTF-16 text file)",
                           {what});
    }
    if (bytes.find('\n') == std::string::npos && bytes.find('\r') != std::string::npos) {
        std::replace(bytes.begin(), bytes.end(), '\r', '\n');  // classic Mac line endings
    }
    return bytes;
}

std::string read_text_input(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes) {
    return text_as_utf8(path, what, read_input_file(path, what, max_bytes));
}

void check_output_path(const std::string& path, const OutputRules& rules) {
    const std::string& what = rules.what;
    if (path.empty()) {
        throw BadInput(what + ": no file given", {what});
    }
    struct stat info {};
    if (stat(path.c_str(), &info) == 0) {
        if (S_ISDIR(info.st_mode)) {
            refuse(what, path, "is a folder; give a file name");
        }
        if (!S_ISREG(info.st_mode)) {
            refuse(what, path,
                   std::string("is ") + kind_of(info.st_mode) +
                       ", not a regular file; OOM Lab writes only regular files");
        }
        for (const std::string& input : rules.inputs) {
            if (!input.empty() && same_file(info, input)) {
                refuse(what, path,
                       "is " + quoted(input) +
                           " itself, which this command reads; choose another file");
            }
        }
        if (!rules.force && !(rules.is_own_output && rules.is_own_output(path))) {
            const bool option = what.rfind("--", 0) == 0;
            refuse(what, path,
                   std::string("already exists and is not a file OOM Lab wrote of this kind; ") +
                       (option ? "choose another name, or pass --force to replace it"
                               : "choose another name or remove it"));
        }
        if (access(path.c_str(), W_OK) != 0) {
            refuse(what, path, std::string("cannot be written: ") + std::strerror(errno));
        }
    } else if (errno != ENOENT) {
        refuse(what, path, std::string("cannot be checked: ") + std::strerror(errno));
    }
    const std::string folder = folder_of(path);
    struct stat folder_info {};
    if (stat(folder.c_str(), &folder_info) != 0 || !S_ISDIR(folder_info.st_mode)) {
        refuse(what, path,
               "cannot be written: the folder " + quoted(folder) +
                   " does not exist; create it or choose another file");
    }
    if (access(folder.c_str(), W_OK | X_OK) != 0) {
        refuse(what, path,
               "cannot be written: the folder " + quoted(folder) + " is not writable (" +
                   std::strerror(errno) + ")");
    }
}

void write_file_atomically(const std::string& path, std::string_view content) {
    AtomicFile file(path);
    file.write_at(0, content.data(), content.size());
    file.commit(content.size());
}

bool file_starts_with(const std::string& path, const std::string& prefix) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return false;
    }
    std::string head(prefix.size(), '\0');
    const ssize_t n = read(fd, head.data(), head.size());
    close(fd);
    return n == static_cast<ssize_t>(prefix.size()) && head == prefix;
}

std::optional<FileStamp> stamp_of(const std::string& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
        return std::nullopt;
    }
    FileStamp stamp;
    stamp.size = static_cast<std::uint64_t>(info.st_size);
    stamp.mtime_ns =
        static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
    stamp.ctime_ns =
        static_cast<std::int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 + info.st_ctim.tv_nsec;
    stamp.inode = static_cast<std::uint64_t>(info.st_ino);
    return stamp;
}

}  // namespace oomlab
