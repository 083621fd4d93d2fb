#include "oomlab/trackers/served_file.h"

#include "http_client.h"

namespace oomlab::trackers {

bool is_http_url(const std::string& text) {
    return text.rfind("http://", 0) == 0 || text.rfind("https://", 0) == 0;
}

std::string fetch_served_file(const std::string& url) {
    HttpRequest request;
    request.url = url;
    HttpReply reply;
    try {
        reply = send(request);
    } catch (const Error& error) {
        throw Error(url + ": " + error.what());
    }
    if (reply.status != 200) {
        throw BadInput(url + ": the server answered HTTP " + std::to_string(reply.status) +
                       ", not the file; check the address (open it in a browser)");
    }
    return std::move(reply.body);
}

}  // namespace oomlab::trackers
