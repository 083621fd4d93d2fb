#include "snapshot_frames.h"

#include <algorithm>
#include <iterator>

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::snapshot {
namespace {

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

bool path_contains(std::string_view path, std::string_view part) {
    const auto same = [](char a, char b) { return a == b || (a == '\\' && b == '/'); };
    return std::search(path.begin(), path.end(), part.begin(), part.end(), same) != path.end();
}

bool in_torch_package(std::string_view path) {
    const auto starts = [&](std::string_view start) {
        return path.size() >= start.size() && path_contains(path.substr(0, start.size()), start);
    };
    // Code torch.compile generated (torchinductor's cache) is PyTorch's too, not the user's.
    return starts("torch/") || path_contains(path, "/torch/") ||
           path_contains(path, "/torchinductor_");
}

bool in_python_library(std::string_view path) {
    const bool installed =
        path_contains(path, "/site-packages/") || path_contains(path, "/dist-packages/");
    if (path_contains(path, "/lib/python") || path_contains(path, "/Lib/")) {
        return !installed;
    }
    constexpr std::string_view kModules[] = {
        "multiprocessing/", "concurrent/",  "asyncio/",   "threading.py",  "queue.py",
        "pickle.py",        "copy.py",      "copyreg.py", "contextlib.py", "functools.py",
        "runpy.py",         "selectors.py", "socket.py"};
    for (std::string_view module : kModules) {
        if (path.substr(0, module.size()) == module) {
            return true;
        }
    }
    return false;
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
    if (frame.line < 0) {
        return line.append(" (").append(frame.function) + ")";
    }
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
    // A line outside 64 bits (torch.compile's frames carry 2**64-1) or none: not known.
    const PickleValue* line = frame.at("line");
    return {file, line && line->kind() == PickleValue::Kind::Int ? line->integer() : -1, name};
}

// "NAME" of "<prefix>NAME<end>..." in a C++ frame's name; empty where it is not so.
std::string_view between(std::string_view name, std::string_view prefix, std::string_view end) {
    const std::size_t begin = name.find(prefix);
    if (begin == std::string_view::npos) {
        return {};
    }
    const std::size_t stop = name.find(end, begin + prefix.size());
    return stop == std::string_view::npos
               ? std::string_view()
               : name.substr(begin + prefix.size(), stop - begin - prefix.size());
}

// Of C++ frames alone (recorded with stacks="all"; autograd's engine runs backward in a thread
// of its own, with no Python frame): the op that allocated and the autograd node that called
// it, "aten::mm in AddmmBackward0"; empty where the frames name neither.
std::string cpp_op(const std::vector<PickleValue>& frames) {
    std::string_view op, node;
    bool workspace = false;
    for (const PickleValue& frame : frames) {  // innermost first
        const std::string& name = text_at(frame, "name");
        workspace |= name.find("getNewWorkspace") != std::string::npos;  // cuBLAS's
        if (const std::string_view called = between(name, "at::_ops::", "::call(");
            !called.empty()) {
            op = called;
        }
        node = between(name, "torch::autograd::generated::", "::apply(");
        if (node.empty() && name.find("torch::autograd::AccumulateGrad::") != std::string::npos) {
            node = "AccumulateGrad";
        }
        if (!node.empty()) {
            break;
        }
    }
    std::string named = op.empty() ? "" : "aten::" + std::string(op);
    if (!node.empty()) {
        named += (named.empty() ? "in " : " in ") + std::string(node);
    }
    if (workspace) {
        named = named.empty() ? "cuBLAS's workspace" : "cuBLAS's workspace, " + named;
    }
    return named;
}

// A model's parameters made or put on the device: a torch.nn module's constructor, Module.to's
// and .cuda()'s conversion of each (module.py's _apply), a state dict's or a pretrained model's
// load, a program's own weight initialiser (FlexGen's init_weight_list).
bool is_weights_frame(std::string_view file, std::string_view name) {
    if (!ends_with(file, ".py")) {
        return false;
    }
    if (path_contains(file, "torch/nn/modules/")) {
        return name == "__init__" || name == "_apply" || name == "reset_parameters";
    }
    return contains(name, "init_weight") || contains(name, "load_state_dict") ||
           name == "from_pretrained" || contains(name, "load_weights");
}

// A program's own function that only makes tensors for its callers: the line that called it
// says what the memory is for.
bool is_allocation_helper(std::string_view function) {
    constexpr std::string_view kHelpers[] = {"allocate",        "_allocate", "alloc", "malloc",
                                             "allocate_tensor", "empty",     "zeros"};
    return std::find(std::begin(kHelpers), std::end(kHelpers), function) != std::end(kHelpers);
}

}  // namespace

// The user's own source line in an allocation's frames, as memory_viz's "filter frames" shows
// it: the first Python frame outside torch itself (C++ frames and torch's folded; a program's
// own allocation helper, such as FlexGen's allocate(), passed for its caller), else the engine's
// category, else the op its C++ frames name, else a note that none was recorded.
std::string user_line(const std::vector<PickleValue>& frames) {
    std::optional<ProfilerFrame> first_python;
    std::optional<ProfilerFrame> helper;
    for (const PickleValue& frame : frames) {
        const ProfilerFrame parts = parts_of(frame);
        if (parts.file == "oomlab") {
            return "oomlab: " + std::string(parts.function);
        }
        if (!ends_with(parts.file, ".py")) {
            continue;
        }
        if (!in_torch_package(parts.file) && !in_python_library(parts.file)) {
            if (is_allocation_helper(parts.function)) {
                helper = helper ? helper : parts;
                continue;
            }
            return profiler_line(parts);
        }
        if (!first_python) {
            first_python = parts;
        }
    }
    if (helper) {  // nothing called it from the program's own code
        return profiler_line(*helper);
    }
    if (first_python) {
        return profiler_line(*first_python);
    }
    const std::string op = cpp_op(frames);
    return op.empty() ? kNoPythonFrame : std::string(kNoPythonFrame) + " " + op;
}

// What an allocation was for, as far as its frames tell: the engine's own tag, else PyTorch's
// autograd engine or backward() (backward), torch.optim (optimizer step), a copy between
// a model's parameters made, moved or loaded (weights; before a copy, which moving them is), a
// copy between devices or dtypes (copy or cast: the frames do not tell which), a module's
// forward (forward);
// the first that applies in that order, else "other"; scaled_dot_product_attention's math kernel
// (C++ frames) before all but backward. Of an optimizer's step and a forward, the frame nearer
// the allocation (frames run from the innermost) tells: Lightning runs the forward inside
// optimizer.step(closure).
std::string kind_of(const std::vector<PickleValue>& frames) {
    bool backward = false;
    bool optimizer = false;
    bool transfer = false;
    bool forward = false;
    bool math_attention = false;
    bool weights = false;
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
        const bool torch_python = ends_with(file, ".py") && in_torch_package(file);
        backward |= contains(name, "autograd::Engine") || (torch_python && name == "backward");
        optimizer |= !forward && path_contains(file, "torch/optim/");
        transfer |= contains(name, "_to_copy") || contains(name, "copy_");
        math_attention |= contains(name, "_scaled_dot_product_attention_math");
        forward |= !optimizer && ends_with(file, ".py") && name == "forward";
        weights |= !forward && is_weights_frame(file, name);
    }
    return backward         ? "backward"
           : math_attention ? kMathAttentionFallbackKind
           : optimizer      ? "optimizer step"
           : weights        ? "weights"
           : transfer       ? "copy or cast"
           : forward        ? "forward"
                            : "other";
}

std::string kind_of(const std::string& category) {
    std::string kind = category;
    std::replace(kind.begin(), kind.end(), '_', ' ');
    return kind;
}

}  // namespace oomlab::snapshot
