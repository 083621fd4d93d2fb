// MLflow's REST API (/api/2.0/mlflow/...) as JSON calls, with its refusals turned into errors
// that name the server, the call and what to do.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "http_client.h"
#include "oomlab/trackers/request_control.h"

namespace oomlab::trackers {

// What every MLflow REST reply and request body is.
using Json = nlohmann::json;

class MlflowApi {
public:
    explicit MlflowApi(std::string tracking_uri, RequestControl control = {});

    nlohmann::json get(const std::string& endpoint, const std::string& query);
    // The same, or nullopt where the server has no such call (a 404 without MLflow's error
    // code, or ENDPOINT_NOT_FOUND: an older MLflow).
    std::optional<nlohmann::json> get_if_served(const std::string& endpoint,
                                                const std::string& query);
    nlohmann::json post(const std::string& endpoint, const nlohmann::json& body);
    // The experiment's id, made when missing.
    // The experiment's id, made when missing; `field` names where the name was typed.
    std::string experiment_id(const std::string& name, const std::string& field);
    // The id of the experiment of that name; nullopt when the server has none (or deleted it).
    std::optional<std::string> find_experiment(const std::string& name);
    // Uploads a file's content (or `text`) as an artifact of a run whose artifact URI is
    // `artifact_uri`; false when the server does not serve that URI's artifacts.
    bool put_artifact(const std::string& artifact_uri, const std::string& name,
                      const std::string& text, const std::string& file = "");
    // An artifact's content; nullopt when the server does not serve that URI's artifacts or
    // holds no such file.
    std::optional<std::string> get_artifact(const std::string& artifact_uri,
                                            const std::string& name);

    const std::string& uri() const { return m_uri; }
    // The last call made ("POST /api/2.0/mlflow/runs/create"): what an answer of a shape no
    // MLflow server gives was the answer to.
    const std::string& last_call() const { return m_last_call; }

private:
    // A request to the server's `path`, with the caller's control: its note before each
    // retry, its stop.
    HttpReply send_controlled(const std::string& method, const std::string& path,
                              const std::string& body, const std::string& file,
                              const std::string& content_type) const;
    // What may be missing without an error: nothing, the resource asked about, or the call.
    enum class Missing { Refused, Resource, Call };
    // The answer's JSON; nullopt for what `missing` allows to be missing.
    std::optional<nlohmann::json> call(const std::string& method, const std::string& path,
                                       const std::string& body, Missing missing);

    std::string m_uri;
    RequestControl m_control;
    std::string m_last_call;
    bool m_deleted_experiment = false;  // the last find_experiment found it deleted
};

}  // namespace oomlab::trackers
