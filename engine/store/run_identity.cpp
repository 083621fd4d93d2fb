#include "run_identity.h"

#include <cstdio>
#include <random>

#include "oomlab/store/run_store.h"
#include "run_store_impl.h"

namespace oomlab {

std::string store::new_run_uid() {
    std::random_device random;
    std::string uid;
    for (int word = 0; word < 4; ++word) {
        char hex[9];
        std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(random()));
        uid += hex;
    }
    return uid;
}

std::string RunStore::run_uid(std::int64_t run_id) const {
    auto select = m_impl->database.prepare("SELECT uid FROM runs WHERE id = ?1");
    select.bind_int(1, run_id);
    return select.step() ? select.column_text(0) : std::string();
}

std::optional<std::int64_t> RunStore::run_with_uid(const std::string& uid) const {
    auto select = m_impl->database.prepare("SELECT id FROM runs WHERE uid = ?1");
    select.bind_text(1, uid);
    return select.step() ? std::optional(select.column_int(0)) : std::nullopt;
}

}  // namespace oomlab
