#include "memory_viz_page.h"

#include <cctype>
#include <cstdint>

#include "oomlab/common/errors.h"

namespace oomlab::snapshot {
namespace {

// The six bits a base64 character stands for; -1 for one that is not base64's.
int sextet(char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

// Standard base64 up to its padding; a character outside it ends nothing silently: the caller
// is told where. Written here: no library the project uses decodes base64 outside Qt, and the
// engine does not link Qt.
std::string from_base64(const std::string& text, std::size_t begin, std::size_t end,
                        const std::string& source) {
    std::string out;
    out.reserve((end - begin) / 4 * 3);
    std::uint32_t bits = 0;
    int held = 0;
    for (std::size_t i = begin; i < end && text[i] != '='; ++i) {
        const int value = sextet(text[i]);
        if (value < 0) {
            throw BadInput(source +
                           ": the snapshot in this memory_viz page is cut or changed: "
                           "\"" +
                           std::string(1, text[i]) + "\" at byte " + std::to_string(i) +
                           " is not base64; save the page again, or give the snapshot's pickle");
        }
        bits = (bits << 6) | std::uint32_t(value);
        held += 6;
        if (held >= 8) {
            held -= 8;
            out += char((bits >> held) & 0xFF);
        }
    }
    return out;
}

}  // namespace

bool looks_like_html(const std::string& head) {
    const std::size_t first = head.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || head[first] != '<') {
        return false;
    }
    std::string lower = head.substr(first, 14);
    for (char& c : lower) {
        c = char(std::tolower(static_cast<unsigned char>(c)));
    }
    return lower.rfind("<!doctype html", 0) == 0 || lower.rfind("<html", 0) == 0;
}

std::string snapshot_in_memory_viz_page(const std::string& html, const std::string& source) {
    // _memory_viz's page: add_local_files([{"name": "snapshot.pickle", "base64": "gASV..."}])
    constexpr std::string_view kData = "\"base64\": \"";
    const std::size_t files = html.find("add_local_files");
    const std::size_t data = files == std::string::npos ? files : html.find(kData, files);
    if (data != std::string::npos) {
        const std::size_t begin = data + kData.size();
        const std::size_t end = html.find('"', begin);
        if (end == std::string::npos) {
            throw BadInput(source +
                           ": a memory_viz page whose snapshot is cut short; save the "
                           "page again, or give the snapshot's pickle");
        }
        return from_base64(html, begin, end, source);
    }
    if (html.find("Memory Timeline HTML") != std::string::npos) {
        throw BadInput(source +
                       ": the profiler's export_memory_timeline page, a picture of the timeline "
                       "without its events; export the trace with prof.export_chrome_trace(\""
                       "trace.json\") (recorded with profile_memory=True), or record a snapshot "
                       "with torch.cuda.memory._dump_snapshot");
    }
    // The first memory_viz pages (PyTorch 1.13 and 2.0's trace_plot) held the trace as
    // JavaScript: "let alloc_data = {actions, elements_size, elements_info, ...}".
    if (html.find("alloc_data") != std::string::npos) {
        throw BadInput(
            source +
            ": an early memory_viz page, its trace written as JavaScript (alloc_data: "
            "its allocations and frees, without the segments), which this reader does "
            "not read; record a snapshot with torch.cuda.memory._record_memory_history() "
            "and torch.cuda.memory._dump_snapshot(\"snapshot.pickle\") and give that");
    }
    throw BadInput(source +
                   ": an HTML page without a snapshot in it (memory_viz's pages hold one); give "
                   "the snapshot's pickle (torch.cuda.memory._dump_snapshot) or a profiler's "
                   "JSON trace");
}

}  // namespace oomlab::snapshot
