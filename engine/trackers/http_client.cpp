#include "http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <thread>

#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab::trackers {
namespace {

constexpr long kConnectTimeoutS = 5;
// A request that moves less than a kibibyte a second for this long (OOMLAB_TRACKER_STALL_S)
// while it is sent or answered is given up (a server that trickles its answer). The time a
// busy server takes before it answers is not counted: that only the whole request's time
// bounds.
constexpr long kStallSeconds = 30;
constexpr curl_off_t kSlowestBytesPerSecond = 1024;
// A whole request takes at most this long (OOMLAB_TRACKER_TIMEOUT_S), an upload that much
// more for each 256 KiB it sends.
constexpr long kRequestSeconds = 120;
constexpr long kUploadBytesPerSecond = 256 << 10;
// A tracking server's answers are a few kibibytes of JSON; more is not read.
constexpr std::size_t kMostAnswerBytes = std::size_t(64) << 20;
// An answer that says the server is busy or failed for a moment (too many requests, an
// internal error such as SQLite's "database is locked", a gateway's) is asked again, as
// MLflow's own client does: this many times (OOMLAB_TRACKER_RETRIES), after 1, 2, 4... s up
// to kLongestWaitS (2 to 3 minutes in all), each with up to half as much again at random so
// that a class's runs ending together do not come back together; a Retry-After the server
// gives is waited instead, up to kLongestWaitS.
constexpr int kRetries = 7;
constexpr double kLongestWaitS = 60;

struct Pace {
    const std::atomic<bool>* stop = nullptr;
    long stall_seconds = kStallSeconds;
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    curl_off_t moved_since = 0;
    bool stalled = false;
    bool stopped = false;
};

constexpr char kStopped[] = "stopped before it was answered";

int check_pace(void* data, curl_off_t, curl_off_t received, curl_off_t to_send, curl_off_t sent) {
    Pace& pace = *static_cast<Pace*>(data);
    if (pace.stop != nullptr && pace.stop->load()) {
        pace.stopped = true;
        return 1;
    }
    const auto now = std::chrono::steady_clock::now();
    const curl_off_t moved = received + sent;
    const bool awaiting_answer = received == 0 && sent >= to_send;
    if (awaiting_answer || now - pace.since >= std::chrono::seconds(pace.stall_seconds)) {
        if (!awaiting_answer &&
            moved - pace.moved_since < kSlowestBytesPerSecond * pace.stall_seconds) {
            pace.stalled = true;
            return 1;  // libcurl stops the transfer
        }
        pace.since = now;
        pace.moved_since = moved;
    }
    return 0;
}

struct Answer {
    std::string* body = nullptr;
    bool too_long = false;
};

size_t append_body(char* data, size_t size, size_t count, void* out) {
    Answer& answer = *static_cast<Answer*>(out);
    if (answer.body->size() + size * count > kMostAnswerBytes) {
        answer.too_long = true;
        return 0;  // libcurl stops the transfer
    }
    answer.body->append(data, size * count);
    return size * count;
}

// A setting of the environment that is a whole number from `least` to `most` (`unset` when
// it is not set); anything else ("abc", 99999999999, -1) is refused, not read as some number.
long whole_setting(const char* name, long least, long most, long unset) {
    const char* set = std::getenv(name);
    if (!set || !*set) {
        return unset;
    }
    const std::string_view text(set);
    long value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < least || value > most) {
        throw BadInput(std::string(name) + "=" + quoted_excerpt(text) +
                       ": give a whole number from " + std::to_string(least) + " to " +
                       std::to_string(most) + " (unset, " + std::to_string(unset) + ")");
    }
    return value;
}

constexpr long kMostSeconds = 7 * 24 * 3600;  // a week
constexpr int kMostRetries = 100;

long request_seconds(const HttpRequest& request) {
    long seconds = whole_setting("OOMLAB_TRACKER_TIMEOUT_S", 1, kMostSeconds, kRequestSeconds);
    if (!request.body_file.empty()) {
        std::error_code error;
        const auto bytes = std::filesystem::file_size(request.body_file, error);
        seconds += error ? 0 : long(bytes / kUploadBytesPerSecond);
    }
    return seconds;
}

int retries() {
    return int(whole_setting("OOMLAB_TRACKER_RETRIES", 0, kMostRetries, kRetries));
}

double wait_before_try(int retry, long retry_after_s) {
    if (retry_after_s > 0) {
        return std::min(double(retry_after_s), kLongestWaitS);
    }
    static thread_local std::mt19937 random{std::random_device{}()};
    const double backoff = double(1 << retry);
    return std::min(backoff * std::uniform_real_distribution<double>(1.0, 1.5)(random),
                    kLongestWaitS);
}

// libcurl's global state, made once before any request and kept for the process.
void initialise_curl() {
    static const bool initialised = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    if (!initialised) {
        throw Error("libcurl could not start");
    }
}

// The thread's handle: libcurl keeps its connections open between requests, so an import's
// thousands of requests to one server share one connection instead of each opening its own.
CURL* thread_handle() {
    thread_local const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle(
        curl_easy_init(), curl_easy_cleanup);
    return handle.get();
}

// Resets the handle's options when a request ends (its connections stay), so that it keeps
// no pointer into the request's buffers.
struct ResetAfterRequest {
    CURL* handle;
    ~ResetAfterRequest() { curl_easy_reset(handle); }
};

HttpReply send_once(const HttpRequest& request) {
    CURL* handle = thread_handle();
    const std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
        curl_slist_append(nullptr, ("Content-Type: " + request.content_type).c_str()),
        curl_slist_free_all);
    if (!handle || !headers) {
        throw Error("libcurl could not make a request");
    }
    HttpReply reply;
    char error[CURL_ERROR_SIZE] = "";
    const ResetAfterRequest reset{handle};
    curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // safe in a worker thread
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutS);
    Pace pace;
    pace.stall_seconds = whole_setting("OOMLAB_TRACKER_STALL_S", 1, kMostSeconds, kStallSeconds);
    pace.stop = request.stop;
    curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, check_pace);
    curl_easy_setopt(handle, CURLOPT_XFERINFODATA, &pace);
    curl_easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
    const long seconds = request_seconds(request);
    curl_easy_setopt(handle, CURLOPT_TIMEOUT, seconds);
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
    // MLflow's own variables for a server behind basic authentication, as its client reads
    // them: never part of the address, so never printed or stored.
    const char* user = std::getenv("MLFLOW_TRACKING_USERNAME");
    const char* password = std::getenv("MLFLOW_TRACKING_PASSWORD");
    if (user != nullptr && password != nullptr) {
        curl_easy_setopt(handle, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
        curl_easy_setopt(handle, CURLOPT_USERNAME, user);
        curl_easy_setopt(handle, CURLOPT_PASSWORD, password);
    }
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, append_body);
    Answer answer{&reply.body};
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &answer);

    std::unique_ptr<std::FILE, decltype(&std::fclose)> file(nullptr, std::fclose);
    if (!request.body_file.empty()) {
        file.reset(std::fopen(request.body_file.c_str(), "rb"));
        if (!file) {
            throw Error("cannot read " + request.body_file);
        }
        curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);  // PUT from a file
        std::error_code unknown;
        const auto bytes = std::filesystem::file_size(request.body_file, unknown);
        if (!unknown) {
            curl_easy_setopt(handle, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(bytes));
        }
        curl_easy_setopt(handle, CURLOPT_READDATA, file.get());
    } else if (request.method != "GET") {
        curl_easy_setopt(handle, CURLOPT_POSTFIELDS, request.body.c_str());
        curl_easy_setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
    }
    if (request.method != "GET" && request.method != "POST") {
        curl_easy_setopt(handle, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    const CURLcode code = curl_easy_perform(handle);
    if (answer.too_long) {
        throw AnswerNotWhole("its answer passed " + std::to_string(kMostAnswerBytes >> 20) +
                             " MiB, more than a tracking server answers");
    }
    double connected_after = 0;  // 0: never connected (libcurl's own words say why)
    curl_easy_getinfo(handle, CURLINFO_CONNECT_TIME, &connected_after);
    if (pace.stopped) {
        throw Error(kStopped);
    }
    if (pace.stalled) {
        throw AnswerNotWhole("less than 1 KiB a second for " + std::to_string(pace.stall_seconds) +
                             " s while it was sent or answered (OOMLAB_TRACKER_STALL_S gives it "
                             "longer)");
    }
    if (code == CURLE_OPERATION_TIMEDOUT && connected_after > 0) {
        throw AnswerNotWhole("no whole answer within " + std::to_string(seconds) +
                             " s (OOMLAB_TRACKER_TIMEOUT_S gives a request more time)");
    }
    if (code != CURLE_OK) {
        throw Error(*error ? std::string(error) : std::string(curl_easy_strerror(code)));
    }
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &reply.status);
    curl_off_t retry_after = 0;
    curl_easy_getinfo(handle, CURLINFO_RETRY_AFTER, &retry_after);
    reply.retry_after_s = long(retry_after);
    return reply;
}

}  // namespace

bool answered_for_a_moment(const HttpReply& reply) {
    const long status = reply.status;
    // MLflow's server answers 400 when its database connections stay taken for 30 s
    // (SQLAlchemy's QueuePool): a busy server's answer, as a 503 is.
    return status == 429 || status == 500 || status == 502 || status == 503 || status == 504 ||
           (status == 400 && reply.body.find("QueuePool limit") != std::string::npos);
}

AnswerNotWhole::~AnswerNotWhole() = default;

HttpReply send(const HttpRequest& request) {
    initialise_curl();
    const int most = retries();  // refused before anything is sent
    HttpReply reply = send_once(request);
    for (int retry = 0; retry < most && answered_for_a_moment(reply); ++retry) {
        const double seconds = wait_before_try(retry, reply.retry_after_s);
        if (request.before_retry) {
            request.before_retry(reply.status, seconds, retry + 1, most);
        }
        // Waited in short steps, so that a stop ends the wait too.
        const auto until =
            std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
        while (std::chrono::steady_clock::now() < until) {
            if (request.stop != nullptr && request.stop->load()) {
                throw Error(kStopped);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        reply = send_once(request);
        reply.tries = retry + 2;
    }
    return reply;
}

}  // namespace oomlab::trackers

namespace oomlab::trackers {

std::string url_escape(const std::string& text) {
    initialise_curl();
    const std::unique_ptr<char, decltype(&curl_free)> escaped(
        curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size())), curl_free);
    if (!escaped) {
        throw Error("libcurl could not escape a URL");
    }
    return escaped.get();
}

}  // namespace oomlab::trackers
