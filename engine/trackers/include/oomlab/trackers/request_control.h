// What the caller of a tracker's requests controls while they run, from another thread: a
// note each time a busy server is to be asked again, and a flag that ends them early (a
// window closing while a server keeps answering that it is busy); and what its messages call
// the places the server and the experiment were given in.
#pragma once

#include <atomic>
#include <functional>
#include <string>

namespace oomlab::trackers {

struct RequestControl {
    // "MLflow at URI answered POST …/runs/create with status 503: asking again in 4 s (2 of 7)"
    std::function<void(const std::string& note)> on_wait;
    // Set: the request under way ends at once, and so does what sent it, with an Error.
    const std::atomic<bool>* stop = nullptr;
};

// What the person typed the server's address and the experiment into, for messages: the
// command line's options, or the workbench's fields.
struct TrackerFields {
    std::string uri = "--tracking-uri";
    std::string experiment = "--experiment";
};

}  // namespace oomlab::trackers
