// A memory snapshot saved as JSON (json.dump of torch.cuda.memory._snapshot(), or of a pickle's
// contents) read as the pickle it was made from: the same dictionaries, lists and values,
// written as pickle opcodes for the snapshot's one reader.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace oomlab::snapshot {

// Whether a file's first bytes open a JSON object whose first key is one a snapshot has
// ("segments", "device_traces", "allocator_settings", "external_annotations").
bool looks_like_json_snapshot(const std::string& head);
// Where a JSON text's first token after `openings` ("[{": a list, then an object) begins,
// white space passed; npos where it does not open so.
std::size_t after_openings(const std::string& head, std::string_view openings);
// A device's trace saved alone as a JSON list of its events ([{"action": "alloc", ...}, ...]):
// one device's, without the segments of a dump.
bool looks_like_json_trace_events(const std::string& head);

// The snapshot `text` holds, as a pickle of protocol 2. Throws BadInput naming `source` and the
// line where the text is not JSON.
std::string pickle_of_json_snapshot(const std::string& text, const std::string& source);

}  // namespace oomlab::snapshot
