// The rows the profiler's export_memory_timeline writes to a .raw.json: [time in ns, action,
// bytes, category] for each tensor made, versioned or freed on one device, with PyTorch's
// category of each (torch.profiler._memory_profiler). Read as that device's trace, whose
// allocations carry their category: the memory over time by what it was for.
#pragma once

#include <string>

namespace oomlab::snapshot {

// Whether a file's first bytes open a JSON list of lists of numbers.
bool looks_like_timeline_rows(const std::string& head);

// The rows of `text` as a snapshot saved as JSON: one device's trace, each tensor an allocation
// and a free at an address of its own (the rows name none: a free is matched to the last
// allocation of its size and category), no segments. Throws BadInput naming `source` and the
// row that is not [time, action, bytes, category].
std::string snapshot_json_of_timeline_rows(const std::string& text, const std::string& source);

}  // namespace oomlab::snapshot
