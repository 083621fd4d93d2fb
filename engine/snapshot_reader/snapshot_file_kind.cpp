// What kind of file a snapshot's reader was given, by its first bytes: a pickle, a profiler's
// JSON trace, or a snapshot kept in another form (saved as JSON, inside memory_viz's page).
#include "snapshot_file_kind.h"

#include <algorithm>
#include <cstdio>

#include "json_snapshot.h"
#include "memory_viz_page.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/files.h"
#include "timeline_rows.h"

namespace oomlab::snapshot {
namespace {

std::string hex_bytes(const std::string& head) {
    std::string out;
    char code[8];
    for (std::size_t i = 0; i < std::min<std::size_t>(head.size(), 4); ++i) {
        std::snprintf(code, sizeof code, "%s0x%02x", i ? " " : "",
                      static_cast<unsigned char>(head[i]));
        out += code;
    }
    return out.empty() ? "nothing (the file is empty)" : out;
}

}  // namespace

bool looks_like_json(const std::string& head) {
    const auto byte = [&](std::size_t i) {
        return i < head.size() ? static_cast<unsigned char>(head[i]) : 0;
    };
    if ((byte(0) == 0xEF && byte(1) == 0xBB && byte(2) == 0xBF) ||
        (byte(0) == 0xFF && byte(1) == 0xFE) || (byte(0) == 0xFE && byte(1) == 0xFF)) {
        return true;
    }
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    return first != std::string::npos && (head[first] == '{' || head[first] == '[');
}

void refuse_unknown(const std::string& head, const std::string& source) {
    if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80) {
        return;  // PROTO: a pickle of protocol 2 or later
    }
    // A clone without Git LFS, or a repository's raw link, gives the pointer, not the file.
    if (head.rfind("version https://git-lfs.github.com/spec/", 0) == 0) {
        throw BadInput(source +
                       ": a Git LFS pointer, not the file it stands for (its object is kept "
                       "apart, by the pointer's oid and size lines); fetch it with `git lfs "
                       "pull` in the repository, or download the file itself rather than its "
                       "raw pointer");
    }
    throw BadInput(source +
                   ": neither a memory snapshot (a pickle of protocol 2 to 5, as "
                   "torch.cuda.memory._dump_snapshot writes) nor a profiler's JSON "
                   "trace; it starts with " +
                   hex_bytes(head));
}

std::optional<std::string> pickle_of_other_form(const std::string& head,
                                                const std::function<std::string()>& whole,
                                                const std::string& source) {
    if (looks_like_json_snapshot(head)) {
        return pickle_of_json_snapshot(text_as_utf8(source, "memory snapshot", whole()), source);
    }
    if (looks_like_timeline_rows(head)) {  // export_memory_timeline's: its rows by category
        return pickle_of_json_snapshot(
            snapshot_json_of_timeline_rows(text_as_utf8(source, "memory timeline's rows", whole()),
                                           source),
            source);
    }
    if (looks_like_json_trace_events(head)) {  // read as the snapshot it was taken from
        return pickle_of_json_snapshot(
            "{\"device_traces\": [" + text_as_utf8(source, "memory snapshot's trace", whole()) +
                "]}",
            source);
    }
    if (looks_like_html(head)) {
        return snapshot_in_memory_viz_page(whole(), source);
    }
    return std::nullopt;
}

}  // namespace oomlab::snapshot
