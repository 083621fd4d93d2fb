// PyTorch 2.x's "allocator_settings" of a snapshot as PYTORCH_CUDA_ALLOC_CONF would set them:
// the settings that differ from the defaults. Read field by field: the variable's own text may
// name keys another version does not know.
#pragma once

#include <optional>
#include <string>

#include "pickle_reader.h"

namespace oomlab::snapshot {

// Nothing where the snapshot has no such dict. `problem` gets what of them PyTorch would not
// take and the replay leaves out (a garbage_collection_threshold of nan).
std::optional<std::string> recorded_alloc_conf(const PickleValue* settings, std::string& problem);

}  // namespace oomlab::snapshot
