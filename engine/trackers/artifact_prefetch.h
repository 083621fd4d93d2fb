// Artifacts of a batch of runs, fetched in order on a thread of their own while the caller
// reads those fetched before: the server's time and the caller's overlap (an import of 3,000
// runs spends about as long parsing and storing each run as the server takes to serve it).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mlflow_api.h"

namespace oomlab::trackers {

class ArtifactPrefetch {
public:
    struct Wanted {
        std::string artifact_uri;
        std::string name;
    };

    // Starts fetching each of `wanted` with a copy of `api` (its address, its stop); the notes
    // of its retries reach `api`'s own note from the thread that takes.
    ArtifactPrefetch(const MlflowApi& api, const RequestControl& control,
                     std::vector<Wanted> wanted);
    ~ArtifactPrefetch();  // fetches no further, and waits for the request under way
    ArtifactPrefetch(const ArtifactPrefetch&) = delete;
    ArtifactPrefetch& operator=(const ArtifactPrefetch&) = delete;

    // The i-th artifact as MlflowApi::get_artifact answers it, waiting for it; the error that
    // fetching it met is thrown here.
    std::optional<std::string> take(std::size_t i);

private:
    void fetch_all(MlflowApi api);

    std::vector<Wanted> m_wanted;
    std::function<void(const std::string&)> m_note;

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<std::optional<std::string>> m_files;
    std::size_t m_fetched = 0;         // how many of m_wanted are in m_files
    std::exception_ptr m_error;        // what stopped the fetching, thrown for each one after it
    std::vector<std::string> m_notes;  // of retries, not yet passed on
    bool m_abandoned = false;

    std::thread m_thread;  // last: started once the rest is made
};

}  // namespace oomlab::trackers
