// Which module of the model is running, so the bytes its forward and backward allocate can be
// attributed to it (the allocator only sees sizes). Modules are interned by name: "embeddings",
// "block 1", "loss"; the same name means the same module in every run of the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace oomlab::memory {

using ModuleId = std::uint8_t;
inline constexpr ModuleId kNoModule = 0;
inline constexpr std::size_t kMaxModules = 64;

// The id of the module called `name`, registered on first use. Past kMaxModules - 1 names,
// kNoModule: the bytes of further modules count as no module's.
ModuleId module_id(std::string_view name);
std::string module_name(ModuleId id);  // "" for kNoModule
// Ids below this are in use (kNoModule included); lock-free, for the allocator's ledger.
std::size_t module_count();

// The running module. Process-wide, like the loop's allocation tag: backward may run on
// another thread than the forward that set it.
void set_current_module(ModuleId id);
ModuleId current_module();

// Makes `id` the running module while the scope lives.
class ModuleScope {
public:
    explicit ModuleScope(ModuleId id);
    ~ModuleScope();
    ModuleScope(const ModuleScope&) = delete;
    ModuleScope& operator=(const ModuleScope&) = delete;

private:
    ModuleId m_previous;
};

}  // namespace oomlab::memory
