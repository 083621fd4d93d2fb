// What an allocation's stack of frames says: the user's own source line, and what the memory
// was for (forward, backward, optimizer step, data transfer), as a snapshot's report groups it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pickle_reader.h"

namespace oomlab::snapshot {

// The text at `key` of a record; empty when there is none or it is not text.
const std::string& text_at(const PickleValue& value, std::string_view key);

// The first Python frame outside torch itself ("train.py:41 (forward)"), else the engine's
// category, else kNoPythonFrame.
std::string user_line(const std::vector<PickleValue>& frames);

// "forward", "backward", "optimizer step", "data transfer", the engine's own phase, or "other".
std::string kind_of(const std::vector<PickleValue>& frames);

}  // namespace oomlab::snapshot
