#include "snapshot_frames.h"

#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab::snapshot {
namespace {

std::int64_t integer_at(const PickleValue& value, std::string_view key) {
    const PickleValue* item = value.at(key);
    return item ? item->integer() : 0;
}

bool ends_with(const std::string& text, std::string_view end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

bool contains(const std::string& text, std::string_view part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

const std::string& text_at(const PickleValue& value, std::string_view key) {
    static const std::string kNone;
    const PickleValue* item = value.at(key);
    const std::string* text = item ? item->text() : nullptr;
    return text ? *text : kNone;
}

// The user's own source line in an allocation's frames, as memory_viz's "filter frames" shows
// it: the first Python frame outside torch itself (C++ frames and torch's folded), else the
// engine's category, else a note that none was recorded.
std::string user_line(const std::vector<PickleValue>& frames) {
    const PickleValue* first_python = nullptr;
    const auto where = [](const PickleValue& frame) {
        return text_at(frame, "filename") + ":" + std::to_string(integer_at(frame, "line")) + " (" +
               text_at(frame, "name") + ")";
    };
    for (const PickleValue& frame : frames) {
        const std::string* file = &text_at(frame, "filename");
        if (*file == "oomlab") {
            return "oomlab: " + text_at(frame, "name");
        }
        if (!ends_with(*file, ".py")) {
            continue;
        }
        if (file->find("/torch/") == std::string::npos) {
            return where(frame);
        }
        first_python = first_python ? first_python : &frame;
    }
    return first_python ? where(*first_python) : kNoPythonFrame;
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
        const std::string& file = text_at(frame, "filename");
        const std::string& name = text_at(frame, "name");
        if (file == "oomlab") {
            const std::string phase = name.substr(0, name.find(':'));
            return phase == "gradients"   ? "backward"
                   : phase == "optimizer" ? "optimizer step"
                   : phase == "data"      ? "data transfer"
                                          : phase;
        }
        const bool torch_python = ends_with(file, ".py") && contains(file, "/torch/");
        backward |= contains(name, "autograd::Engine") || (torch_python && name == "backward");
        optimizer |= contains(file, "/torch/optim/");
        transfer |= contains(name, "_to_copy") || contains(name, "copy_");
        forward |= ends_with(file, ".py") && name == "forward";
    }
    return backward    ? "backward"
           : optimizer ? "optimizer step"
           : transfer  ? "data transfer"
           : forward   ? "forward"
                       : "other";
}

}  // namespace oomlab::snapshot
