#include "snapshot_frames.h"

#include <algorithm>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::snapshot {
namespace {

std::int64_t integer_at(const PickleValue& value, std::string_view key) {
    const PickleValue* item = value.at(key);
    return item ? item->integer() : 0;
}

bool ends_with(std::string_view text, std::string_view end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

bool contains(std::string_view text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

const std::string& text_at(const PickleValue& value, std::string_view key) {
    static const std::string kNone;
    const PickleValue* item = value.at(key);
    const std::string* text = item ? item->text() : nullptr;
    return text ? *text : kNone;
}

std::optional<ProfilerFrame> profiler_frame(std::string_view name) {
    const std::size_t open = name.find(".py(");
    if (open == std::string_view::npos) {
        return std::nullopt;
    }
    const std::size_t digits = open + 4;
    const std::size_t close = name.find("): ", digits);
    if (close == std::string_view::npos || close == digits || close - digits > 9 ||
        name.find_first_not_of("0123456789", digits) != close) {
        return std::nullopt;
    }
    std::int64_t line = 0;
    for (const char digit : name.substr(digits, close - digits)) {
        line = line * 10 + (digit - '0');
    }
    return ProfilerFrame{name.substr(0, digits - 1), line, name.substr(close + 3)};
}

std::string profiler_line(const ProfilerFrame& frame) {
    std::string line(frame.file);
    if (frame.line == 0 && frame.function == "<module>") {
        return line + ": its top level (the profiler records no line there)";
    }
    return line.append(":").append(std::to_string(frame.line)).append(" (").append(frame.function) +
           ")";
}

namespace {

// A frame's file, line and function, read from the profiler's name where the snapshot was made
// from a profile (its filename "none").
ProfilerFrame parts_of(const PickleValue& frame) {
    const std::string& file = text_at(frame, "filename");
    const std::string& name = text_at(frame, "name");
    if (file == "none") {
        if (auto named = profiler_frame(name)) {
            return *named;
        }
    }
    return {file, integer_at(frame, "line"), name};
}

bool in_torch(std::string_view file) {
    return file.compare(0, 6, "torch/") == 0 || contains(file, "/torch/");
}

}  // namespace

// The user's own source line in an allocation's frames, as memory_viz's "filter frames" shows
// it: the first Python frame outside torch itself (C++ frames and torch's folded), else the
// engine's category, else a note that none was recorded.
std::string user_line(const std::vector<PickleValue>& frames) {
    std::optional<ProfilerFrame> first_python;
    for (const PickleValue& frame : frames) {
        const ProfilerFrame parts = parts_of(frame);
        if (parts.file == "oomlab") {
            return "oomlab: " + std::string(parts.function);
        }
        if (!ends_with(parts.file, ".py")) {
            continue;
        }
        if (!in_torch(parts.file)) {
            return profiler_line(parts);
        }
        if (!first_python) {
            first_python = parts;
        }
    }
    return first_python ? profiler_line(*first_python) : kNoPythonFrame;
}

// What an allocation was for, as far as its frames tell: the engine's own tag, else PyTorch's
// autograd engine or backward() (backward), torch.optim (optimizer step), a copy between
// devices or dtypes (data transfer), a module's forward (forward); the first that applies in
// that order, else "other".
std::string kind_of(const std::vector<PickleValue>& frames) {
    bool backward = false;
    bool optimizer = false;
    bool transfer = false;
    bool forward = false;
    for (const PickleValue& frame : frames) {
        const ProfilerFrame parts = parts_of(frame);
        const std::string_view file = parts.file;
        const std::string_view name = parts.function;
        if (file == "oomlab") {
            const std::string phase(name.substr(0, name.find(':')));
            return phase == "gradients"   ? "backward"
                   : phase == "optimizer" ? "optimizer step"
                   : phase == "data"      ? "data transfer"
                                          : phase;
        }
        const bool torch_python = ends_with(file, ".py") && in_torch(file);
        backward |= contains(name, "autograd::Engine") || (torch_python && name == "backward");
        optimizer |= contains(file, "torch/optim/");
        transfer |= contains(name, "_to_copy") || contains(name, "copy_");
        forward |= ends_with(file, ".py") && name == "forward";
    }
    return backward    ? "backward"
           : optimizer ? "optimizer step"
           : transfer  ? "data transfer"
           : forward   ? "forward"
                       : "other";
}

std::string kind_of(const std::string& category) {
    std::string kind = category;
    std::replace(kind.begin(), kind.end(), '_', ' ');
    return kind;
}

}  // namespace oomlab::snapshot
