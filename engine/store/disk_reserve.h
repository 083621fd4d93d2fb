// Space set aside beside a database ("<database>-reserve") so that a store on a full disk can
// still end its run as failed and delete runs to free space: when a write finds the disk
// full, the reserve is given back and the write tried once more. Recreated when there is
// room again.
#pragma once

#include <cstdint>
#include <string>

namespace oomlab::store {

class DiskReserve {
public:
    static constexpr std::int64_t kBytes = 128 << 10;

    explicit DiskReserve(std::string database_path);

    // Makes the reserve kBytes large if the disk has room; never fails.
    void ensure() const;
    // Gives the reserve's space back; false when there was none.
    bool release() const;

private:
    std::string m_path;
};

// Whether the disk holding `database_path` has less room left than SQLite needs to open a
// file in WAL mode (its -shm file).
bool disk_is_full(const std::string& database_path);

}  // namespace oomlab::store
