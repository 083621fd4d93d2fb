#include "oomlab/snapshot_writer/module_scope.h"

#include <array>
#include <atomic>
#include <mutex>

namespace oomlab::memory {
namespace {

struct Registry {
    std::mutex mutex;
    std::array<std::string, kMaxModules> names;  // names[0]: no module
    std::size_t count = 1;
};

Registry& registry() {
    static Registry instance;
    return instance;
}

std::atomic<ModuleId> g_current{kNoModule};
std::atomic<std::size_t> g_count{1};  // registry().count, read without the lock

}  // namespace

ModuleId module_id(std::string_view name) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (std::size_t id = 1; id < r.count; ++id) {
        if (r.names[id] == name) {
            return static_cast<ModuleId>(id);
        }
    }
    if (r.count == kMaxModules || name.empty()) {
        return kNoModule;
    }
    r.names[r.count] = std::string(name);
    g_count.store(r.count + 1, std::memory_order_release);
    return static_cast<ModuleId>(r.count++);
}

std::size_t module_count() {
    return g_count.load(std::memory_order_acquire);
}

std::string module_name(ModuleId id) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    return id < r.count ? r.names[id] : std::string();
}

void set_current_module(ModuleId id) {
    g_current.store(id, std::memory_order_relaxed);
}

ModuleId current_module() {
    return g_current.load(std::memory_order_relaxed);
}

ModuleScope::ModuleScope(ModuleId id) : m_previous(current_module()) {
    set_current_module(id);
}

ModuleScope::~ModuleScope() {
    set_current_module(m_previous);
}

}  // namespace oomlab::memory
