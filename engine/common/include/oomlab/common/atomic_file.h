// Writing a file so that readers see either the old one or the complete new one: bytes go to
// a temporary file beside the target, renamed over it at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oomlab {

class AtomicFile {
public:
    // Throws Error naming the target (never the temporary file) when it cannot be written.
    // Removes the temporary files earlier writers of the target abandoned first.
    explicit AtomicFile(std::string target);
    ~AtomicFile();  // removes the temporary file unless committed
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    void write_at(std::uint64_t offset, const void* data, std::uint64_t bytes);
    // Sets the final size and renames into place. No fsync: the files written this way (GloVe
    // caches, snapshots) are derived data whose readers reject a file cut short by a crash.
    void commit(std::uint64_t file_bytes);

    // Removes the temporary files of `target` (TARGET.tmp-PID-N) whose writer, a process of
    // this machine, is gone and that nothing touched for a minute: a run killed while its
    // GloVe cache was written left 100 MB that no later run removed. Returns how many.
    static std::size_t remove_abandoned(const std::string& target);

private:
    std::string m_target;
    std::string m_temp_path;
    int m_fd = -1;
    bool m_committed = false;
};

}  // namespace oomlab
