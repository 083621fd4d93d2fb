// A web page saved from PyTorch's memory tools: torch.cuda._memory_viz's (trace_plot,
// segment_plot) holds the snapshot it shows, as base64 in the page; the profiler's
// export_memory_timeline(".html") holds only a picture of the timeline.
#pragma once

#include <string>

namespace oomlab::snapshot {

// Whether a file's first bytes begin an HTML page ("<!DOCTYPE html", "<html").
bool looks_like_html(const std::string& head);

// The snapshot's pickle that the page `html` embeds. Throws BadInput naming `source` where the
// page holds none: export_memory_timeline's picture, or a page of another kind.
std::string snapshot_in_memory_viz_page(const std::string& html, const std::string& source);

}  // namespace oomlab::snapshot
