// What an allocation's stack of frames says: the user's own source line, and what the memory
// was for (forward, backward, optimizer step, copy or cast), as a snapshot's report groups it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pickle_reader.h"

namespace oomlab::snapshot {

// The text at `key` of a record; empty when there is none or it is not text.
const std::string& text_at(const PickleValue& value, std::string_view key);

// A Python frame as PyTorch's profiler names it, "train.py(41): forward": its file, line and
// function. A snapshot made from a profile (torch.cuda._memory_viz._profile_to_snapshot) has
// such names with the filename "none" and line 0. Views into the name read.
struct ProfilerFrame {
    std::string_view file;
    std::int64_t line = 0;  // -1: not recorded
    std::string_view function;
};
std::optional<ProfilerFrame> profiler_frame(std::string_view name);

// A profiler-named frame's source line, "train.py:41 (forward)". A script's own top level is
// "train.py(0): <module>" in the profiler's names (it records a function's first line, and a
// module has none): said as what it is, not as line 0.
std::string profiler_line(const ProfilerFrame& frame);

// Whether `path` holds `part` (written with '/'), whichever separator the path uses: frames
// recorded on Windows name "...\site-packages\torch\optim\adam.py".
bool path_contains(std::string_view path, std::string_view part);
// A file of PyTorch's own package ("torch/..." or ".../torch/..."), on any system, or code
// torch.compile generated for it.
bool in_torch_package(std::string_view path);
// Whether a frame's file is Python's own library (multiprocessing, threading, ...), which a
// program passes through but never writes: its path under lib/pythonX.Y outside site-packages,
// or, as the profiler shortens paths, one of the modules a training loop passes through.
bool in_python_library(std::string_view path);

// The first Python frame outside torch itself ("train.py:41 (forward)"), else the engine's
// category, else kNoPythonFrame.
std::string user_line(const std::vector<PickleValue>& frames);

// "forward", "backward", "optimizer step", "weights", "copy or cast", the engine's own phase ("data
// transfer" among them), or "other".
std::string kind_of(const std::vector<PickleValue>& frames);
// PyTorch's category of a tensor as a kind: "optimizer_state" is "optimizer state".
std::string kind_of(const std::string& category);

}  // namespace oomlab::snapshot
