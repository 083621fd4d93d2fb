// The one place where input and output paths are checked before anything is read or written.
// Every file the engine reads (configs, datasets, GloVe files, lessons, databases) and every
// file it writes (caches, snapshots, exports) goes through these, so a rule holds for all of
// them: a FIFO or a device is never opened, a file is never read without bound, an output
// never replaces an input, a device node or a file the tool did not write.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oomlab {

enum class PathKind { File, Folder, FileOrFolder };

// What tells one version of a file from another without reading it: new content changes the
// size or the modification time, a file put in its place the inode, and the change time is
// set by the kernel on every change, so that a modification time put back is still seen.
struct FileStamp {
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    std::uint64_t inode = 0;

    bool operator==(const FileStamp& other) const {
        return size == other.size && mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns &&
               inode == other.inode;
    }
};

// The stamp of a path (followed if a link); nullopt when it cannot be read, with errno set.
std::optional<FileStamp> stamp_of(const std::string& path);

// Throws BadInput naming `what` (a config key such as "dataset.path", or an option such as
// "--config") and the path when the path does not exist, cannot be read, or is not of `kind`
// (a FIFO, a socket or a device is never a file).
void check_input_path(const std::string& path, const std::string& what,
                      PathKind kind = PathKind::File);

// Reads a whole regular file of at most `max_bytes`; throws BadInput naming `what` and the path.
std::string read_input_file(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes);

// read_input_file for text: a UTF-16 file (with its byte-order mark, or recognisable by its
// zero bytes) is decoded to UTF-8, a UTF-8 byte-order mark is dropped, and classic Mac line
// endings (CR alone, no LF anywhere) become LF. Other zero bytes mean the file is not text:
// BadInput naming `what`, the path and the line.
std::string read_text_input(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes);

// The same rules for bytes already read (the first part of a file, for instance).
std::string text_as_utf8(const std::string& path, const std::string& what, std::string bytes);

struct OutputRules {
    std::string what;                 // "--out", "debug.memory_snapshot": named in messages
    std::vector<std::string> inputs;  // what the same command reads: never overwritten
    bool force = false;               // replace an existing file the tool did not write
    // Recognises a file of the kind this output writes, which may be replaced without force.
    std::function<bool(const std::string& path)> is_own_output;
};

// Throws BadInput unless `path` can be written: its folder exists and is writable, it is not
// one of the inputs (under any name), and if it exists it is a regular file that
// `is_own_output` recognises (or force is set).
void check_output_path(const std::string& path, const OutputRules& rules);

// Writes `content` to `path` through a temporary file renamed over it, so a failed write
// leaves the old file. Throws Error naming `path`. Check the path first (check_output_path).
void write_file_atomically(const std::string& path, std::string_view content);

// Whether the first bytes of the file at `path` are `prefix` (false when unreadable).
bool file_starts_with(const std::string& path, const std::string& prefix);

}  // namespace oomlab
