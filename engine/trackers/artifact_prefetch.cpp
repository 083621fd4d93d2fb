#include "artifact_prefetch.h"

#include <utility>

namespace oomlab::trackers {

ArtifactPrefetch::ArtifactPrefetch(const MlflowApi& api, const RequestControl& control,
                                   std::vector<Wanted> wanted)
    : m_wanted(std::move(wanted)), m_note(control.on_wait), m_files(m_wanted.size()) {
    RequestControl own = control;
    if (m_note) {
        own.on_wait = [this](const std::string& note) {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_notes.push_back(note);
            m_changed.notify_all();
        };
    }
    m_thread = std::thread(&ArtifactPrefetch::fetch_all, this, MlflowApi(api.uri(), own));
}

ArtifactPrefetch::~ArtifactPrefetch() {
    {
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_abandoned = true;
    }
    m_thread.join();
}

void ArtifactPrefetch::fetch_all(MlflowApi api) {
    for (std::size_t i = 0; i < m_wanted.size(); ++i) {
        {
            const std::lock_guard<std::mutex> lock(m_mutex);
            if (m_abandoned) {
                return;
            }
        }
        std::optional<std::string> file;
        try {
            file = api.get_artifact(m_wanted[i].artifact_uri, m_wanted[i].name);
        } catch (...) {
            const std::lock_guard<std::mutex> lock(m_mutex);
            m_error = std::current_exception();
            m_changed.notify_all();
            return;
        }
        const std::lock_guard<std::mutex> lock(m_mutex);
        m_files[i] = std::move(file);
        m_fetched = i + 1;
        m_changed.notify_all();
    }
}

std::optional<std::string> ArtifactPrefetch::take(std::size_t i) {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (true) {
        // The retries' notes are said from here, the caller's thread, as they come.
        std::vector<std::string> notes = std::exchange(m_notes, {});
        if (!notes.empty()) {
            lock.unlock();
            for (const std::string& note : notes) {
                m_note(note);
            }
            lock.lock();
            continue;
        }
        if (m_fetched > i) {
            return std::move(m_files[i]);
        }
        if (m_error) {
            std::rethrow_exception(m_error);
        }
        m_changed.wait(lock);
    }
}

}  // namespace oomlab::trackers
