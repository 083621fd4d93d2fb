// HTTP requests through libcurl, for trackers' REST APIs: a body of text or a file, an answer
// with its status and body, and bounded time, so that a server that hangs cannot hang a run.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "oomlab/common/errors.h"

namespace oomlab::trackers {

struct HttpReply {
    long status = 0;
    std::string body;
    long retry_after_s = 0;  // the server's Retry-After, in seconds; 0 when it gave none
    int tries = 1;           // how many times the request was sent for this answer
};

struct HttpRequest {
    std::string method = "GET";  // GET, POST, PUT
    std::string url;
    std::string body;
    std::string body_file;  // sent instead of body when set (a large artifact)
    std::string content_type = "application/json";
    // Called before a busy server is asked again: its status, the wait, which retry of how many.
    std::function<void(long status, double seconds, int retry, int most)> before_retry;
    const std::atomic<bool>* stop = nullptr;  // set: the request ends at once (Error "stopped")
};

// A request that reached the server but got no whole answer: past 64 MiB, trickled, or out of
// time after connecting. The server is there; what it sent is not a tracker's answer.
class AnswerNotWhole : public Error {
public:
    using Error::Error;
    ~AnswerNotWhole() override;
};

// Sends `request`. Throws Error when no answer came (refused, unreachable, timed out), with
// libcurl's reason, AnswerNotWhole when one came but not whole; an answer of any status is
// returned, after sending again (with backoff)
// while the server answers that it is busy or failed for a moment (429, 500, 502-504, and
// MLflow's "QueuePool limit").
HttpReply send(const HttpRequest& request);

// Whether `reply` says the server is busy or failed for a moment, so that the same request
// may be answered otherwise later.
bool answered_for_a_moment(const HttpReply& reply);

}  // namespace oomlab::trackers

namespace oomlab::trackers {

// `text` percent-encoded for a URL's query or path segment.
std::string url_escape(const std::string& text);

}  // namespace oomlab::trackers
