#include "oomlab/common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "oomlab/common/errors.h"
#include "oomlab/common/format.h"

namespace oomlab {
namespace {

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

[[noreturn]] void refuse(const std::string& what, const std::string& path,
                         const std::string& problem) {
    throw BadInput(what + ": " + quoted(path) + " " + problem, {what});
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
               errno == ENOENT ? "does not exist" : std::string("cannot be read: ") +
                                                        std::strerror(errno));
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
        refuse(what, path, "cannot be written: the folder " + quoted(folder) +
                               " does not exist; create it or choose another file");
    }
    if (access(folder.c_str(), W_OK | X_OK) != 0) {
        refuse(what, path,
               "cannot be written: the folder " + quoted(folder) + " is not writable (" +
                   std::strerror(errno) + ")");
    }
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

}  // namespace oomlab
