// The kinds of memory a module holds, as rows name them ("parameters", ..., "temporaries"),
// shared by the diff of two runs and the check of a run against its prediction.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "oomlab/run/run_record.h"

namespace oomlab::run {

struct ModuleKind {
    const char* name;
    std::int64_t (*bytes)(const ModuleMemory&);
};

inline constexpr ModuleKind kModuleKinds[] = {
    {"parameters", [](const ModuleMemory& m) { return m.parameters; }},
    {"gradients", [](const ModuleMemory& m) { return m.gradients; }},
    {"optimizer_state", [](const ModuleMemory& m) { return m.optimizer_state; }},
    {"activations", [](const ModuleMemory& m) { return m.layer_activations(); }},
    {"temporaries", [](const ModuleMemory& m) { return m.temporaries(); }},
};

inline const ModuleMemory* find_module(const std::vector<ModuleMemory>& modules,
                                       const std::string& name) {
    const auto found = std::find_if(modules.begin(), modules.end(),
                                    [&](const ModuleMemory& m) { return m.module == name; });
    return found == modules.end() ? nullptr : &*found;
}

}  // namespace oomlab::run
