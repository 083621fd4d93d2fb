#include "mlflow_api.h"

#include "http_client.h"
#include "oomlab/common/errors.h"
#include "oomlab/common/utf8.h"

namespace oomlab::trackers {
namespace {

constexpr std::string_view kArtifactScheme = "mlflow-artifacts:/";

std::string without_trailing_slashes(std::string uri) {
    while (!uri.empty() && uri.back() == '/') {
        uri.pop_back();
    }
    return uri;
}

}  // namespace

MlflowApi::MlflowApi(std::string tracking_uri, RequestControl control)
    : m_uri(without_trailing_slashes(std::move(tracking_uri))), m_control(std::move(control)) {}

HttpReply MlflowApi::send_controlled(const std::string& method, const std::string& path,
                                     const std::string& body, const std::string& file,
                                     const std::string& content_type) const {
    HttpRequest request;
    request.method = method;
    request.url = m_uri + path;
    request.body = body;
    request.body_file = file;
    request.content_type = content_type;
    request.stop = m_control.stop;
    if (m_control.on_wait) {
        request.before_retry = [this, call = m_last_call](long status, double seconds, int retry,
                                                          int most) {
            m_control.on_wait("MLflow at " + m_uri + " answered " + call + " with status " +
                              std::to_string(status) + ": asking again in " +
                              std::to_string(long(seconds + 0.5)) + " s (" + std::to_string(retry) +
                              " of " + std::to_string(most) + ")");
        };
    }
    return send(request);
}

std::optional<nlohmann::json> MlflowApi::call(const std::string& method, const std::string& path,
                                              const std::string& body, Missing missing) {
    HttpReply reply;
    m_last_call = method + " " + path.substr(0, path.find('?'));
    try {
        reply = send_controlled(method, path, body, "", "application/json");
    } catch (const BadInput&) {
        throw;  // a setting of ours refused (OOMLAB_TRACKER_RETRIES): not the server's doing
    } catch (const AnswerNotWhole& error) {
        // It is there: "start it" would send the user to the wrong place.
        throw Error("MLflow at " + m_uri + " gave no whole answer to " + m_last_call + " (" +
                    error.what() +
                    "): is this the address of an MLflow tracking server? Nothing was changed "
                    "in the run database");
    } catch (const Error& error) {
        throw Error("MLflow at " + m_uri + " did not answer (" + error.what() +
                    "): start it (mlflow server --host 127.0.0.1 --port 5000) or check "
                    "the tracking server's address; nothing was changed in the run database");
    }
    const auto answer = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    if (reply.status == 200 && answer.is_object()) {
        return answer;
    }
    if (answered_for_a_moment(reply)) {
        const std::string said = answer.is_object() ? answer.value("message", std::string()) : "";
        throw Error("MLflow at " + m_uri + " answered " + m_last_call + " with status " +
                    std::to_string(reply.status) + ", " + std::to_string(reply.tries) +
                    (reply.tries == 1 ? " time" : " times") +
                    ": it is busy or failing, and its log says why (OOMLAB_TRACKER_RETRIES "
                    "sets how many times to ask)" +
                    (said.empty() ? std::string() : " (" + said + ")"));
    }
    const std::string code = answer.is_object() ? answer.value("error_code", "") : "";
    // A call the server does not have: 404 without MLflow's error code, or ENDPOINT_NOT_FOUND
    // (a run gone meanwhile is RESOURCE_DOES_NOT_EXIST, and refused as any other).
    if (missing == Missing::Call && reply.status == 404 &&
        (code.empty() || code == "ENDPOINT_NOT_FOUND")) {
        return std::nullopt;
    }
    if (code.empty()) {
        throw Error("MLflow at " + m_uri + ": " + method + " " + path +
                    " was answered with status " + std::to_string(reply.status) +
                    " and no MLflow reply: is this the address of an MLflow tracking server?");
    }
    if (missing == Missing::Resource && code == "RESOURCE_DOES_NOT_EXIST") {
        return std::nullopt;
    }
    throw Error("MLflow at " + m_uri + " refused " + path + " (" + std::to_string(reply.status) +
                " " + code + "): " + answer.value("message", std::string("no reason given")));
}

nlohmann::json MlflowApi::get(const std::string& endpoint, const std::string& query) {
    return *call("GET", "/api/2.0/mlflow/" + endpoint + "?" + query, "", Missing::Refused);
}

std::optional<nlohmann::json> MlflowApi::get_if_served(const std::string& endpoint,
                                                       const std::string& query) {
    return call("GET", "/api/2.0/mlflow/" + endpoint + "?" + query, "", Missing::Call);
}

nlohmann::json MlflowApi::post(const std::string& endpoint, const nlohmann::json& body) {
    return *call("POST", "/api/2.0/mlflow/" + endpoint,
                 body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                 Missing::Refused);
}

std::string MlflowApi::experiment_id(const std::string& name, const std::string& field) {
    if (const auto found = find_experiment(name)) {
        return *found;
    }
    if (m_deleted_experiment) {
        throw Error("MLflow at " + m_uri + ": the experiment " + quoted_excerpt(name) +
                    " was deleted there; restore it (mlflow experiments restore) or choose "
                    "another in " +
                    field);
    }
    try {
        return post("experiments/create", {{"name", name}}).at("experiment_id").get<std::string>();
    } catch (const Error&) {
        // Made meanwhile by another process sending to it (a class's runs ending together).
        if (const auto made = find_experiment(name)) {
            return *made;
        }
        throw;
    }
}

std::optional<std::string> MlflowApi::find_experiment(const std::string& name) {
    const auto found =
        call("GET", "/api/2.0/mlflow/experiments/get-by-name?experiment_name=" + url_escape(name),
             "", Missing::Resource);
    m_deleted_experiment = false;
    if (!found) {
        return std::nullopt;
    }
    const auto& experiment = found->at("experiment");
    if (experiment.value("lifecycle_stage", "") == "deleted") {
        m_deleted_experiment = true;
        return std::nullopt;
    }
    return experiment.at("experiment_id").get<std::string>();
}

std::optional<std::string> MlflowApi::get_artifact(const std::string& artifact_uri,
                                                   const std::string& name) {
    if (artifact_uri.rfind(kArtifactScheme, 0) != 0) {
        return std::nullopt;
    }
    const std::string path = "/api/2.0/mlflow-artifacts/artifacts/" +
                             artifact_uri.substr(kArtifactScheme.size()) + "/" + url_escape(name);
    m_last_call = "GET " + path;
    HttpReply reply;
    try {
        reply = send_controlled("GET", path, "", "", "application/json");
    } catch (const BadInput&) {
        throw;  // a setting of ours refused (OOMLAB_TRACKER_RETRIES): not the server's doing
    } catch (const Error& error) {
        throw Error("MLflow at " + m_uri + " did not answer for the artifact " + name + " (" +
                    error.what() + ")");
    }
    if (reply.status != 200) {
        return std::nullopt;
    }
    return std::move(reply.body);
}

bool MlflowApi::put_artifact(const std::string& artifact_uri, const std::string& name,
                             const std::string& text, const std::string& file) {
    if (artifact_uri.rfind(kArtifactScheme, 0) != 0) {
        return false;  // stored where the server does not serve it (a path, a bucket)
    }
    std::string path = "/api/2.0/mlflow-artifacts/artifacts/" +
                       artifact_uri.substr(kArtifactScheme.size()) + "/" + url_escape(name);
    m_last_call = "PUT " + path;
    HttpReply reply;
    try {
        reply = send_controlled("PUT", path, text, file, "application/octet-stream");
    } catch (const BadInput&) {
        throw;  // a setting of ours refused (OOMLAB_TRACKER_RETRIES): not the server's doing
    } catch (const Error& error) {
        throw Error("MLflow at " + m_uri + " did not take the artifact " + name + " (" +
                    error.what() + ")");
    }
    if (reply.status != 200) {
        throw Error("MLflow at " + m_uri + " refused the artifact " + name + " (status " +
                    std::to_string(reply.status) + ", asked " + std::to_string(reply.tries) +
                    (reply.tries == 1 ? " time" : " times") + "): " + reply.body.substr(0, 300));
    }
    return true;
}

}  // namespace oomlab::trackers
