#include "http_client.h"

#include <curl/curl.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "oomlab/common/errors.h"

namespace oomlab::trackers {
namespace {

constexpr long kConnectTimeoutS = 5;
// A request that moves no data for this long is given up; a large upload that moves on
// is never cut short.
constexpr long kStallSeconds = 30;

size_t append_body(char* data, size_t size, size_t count, void* out) {
    static_cast<std::string*>(out)->append(data, size * count);
    return size * count;
}

// libcurl's global state, made once before any request and kept for the process.
void initialise_curl() {
    static const bool initialised = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    if (!initialised) {
        throw Error("libcurl could not start");
    }
}

}  // namespace

HttpReply send(const HttpRequest& request) {
    initialise_curl();
    const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                                   curl_easy_cleanup);
    const std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
        curl_slist_append(nullptr, ("Content-Type: " + request.content_type).c_str()),
        curl_slist_free_all);
    if (!curl || !headers) {
        throw Error("libcurl could not make a request");
    }
    HttpReply reply;
    char error[CURL_ERROR_SIZE] = "";
    CURL* handle = curl.get();
    curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // safe in a worker thread
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutS);
    curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, kStallSeconds);
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
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &reply.body);

    std::unique_ptr<std::FILE, decltype(&std::fclose)> file(nullptr, std::fclose);
    if (!request.body_file.empty()) {
        file.reset(std::fopen(request.body_file.c_str(), "rb"));
        if (!file) {
            throw Error("cannot read " + request.body_file);
        }
        curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);  // PUT from a file
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
    if (code != CURLE_OK) {
        throw Error(*error ? std::string(error) : std::string(curl_easy_strerror(code)));
    }
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &reply.status);
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
