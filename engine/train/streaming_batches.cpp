#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "batching.h"
#include "oomlab/snapshot_writer/allocation_tag.h"

namespace oomlab::train {
namespace {

class StreamingBatchSource final : public BatchSource {
public:
    StreamingBatchSource(const EncodedExamples& examples,
                         std::vector<std::vector<std::int64_t>> plan, Padding padding, int max_len,
                         const torch::Device& device, bool pinned, bool full_at_each_batch)
        : m_device(device), m_pinned(pinned), m_full_at_each_batch(full_at_each_batch) {
        m_producer = std::thread([this, &examples, plan = std::move(plan), padding, max_len] {
            produce(examples, plan, padding, max_len);
        });
    }

    ~StreamingBatchSource() override {
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_stopping = true;
        }
        m_changed.notify_all();
        m_producer.join();
    }

    std::optional<Batch> next() override {
        std::unique_lock<std::mutex> lock(m_mutex);
        m_changed.wait(lock, [this] { return !m_ready.empty() || m_done; });
        if (m_error) {
            std::rethrow_exception(m_error);
        }
        if (m_ready.empty()) {
            return std::nullopt;
        }
        Batch host = std::move(m_ready.front());
        m_ready.pop_front();
        m_changed.notify_all();
        if (m_full_at_each_batch) {
            // The thread refills (the queue, then one more built) and waits: while this batch
            // trains, the source holds the most it ever holds, whatever the threads' pace.
            m_changed.wait(lock, [this] {
                return m_done ||
                       (m_ready.size() >= std::size_t{kStreamingBatchesAhead} && m_holding_built);
            });
        }
        lock.unlock();
        if (m_device.is_cpu()) {
            return host;
        }
        const bool async = m_pinned;
        return Batch{host.ids.to(m_device, async), host.mask.to(m_device, async),
                     host.labels.to(m_device, async)};
    }

private:
    void produce(const EncodedExamples& examples,
                 const std::vector<std::vector<std::int64_t>>& plan, Padding padding, int max_len) {
        const memory::ThreadTagScope tag(memory::AllocationTag::Data);
        try {
            for (const auto& members : plan) {
                Batch batch = make_host_batch(examples, members, padding, max_len, m_pinned);
                std::unique_lock<std::mutex> lock(m_mutex);
                m_holding_built = true;
                m_changed.notify_all();
                m_changed.wait(lock, [this] {
                    return m_ready.size() < std::size_t{kStreamingBatchesAhead} || m_stopping;
                });
                m_holding_built = false;
                if (m_stopping) {
                    break;
                }
                m_ready.push_back(std::move(batch));
                lock.unlock();
                m_changed.notify_all();
            }
        } catch (...) {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_error = std::current_exception();
        }
        {
            std::lock_guard<std::mutex> lock(m_mutex);
            m_done = true;
        }
        m_changed.notify_all();
    }

    torch::Device m_device;
    bool m_pinned;
    bool m_full_at_each_batch;
    bool m_holding_built = false;  // a built batch waits for room in m_ready
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Batch> m_ready;
    bool m_done = false;
    bool m_stopping = false;
    std::exception_ptr m_error;
    std::thread m_producer;  // last: starts after every other member exists
};

}  // namespace

std::unique_ptr<BatchSource> make_streaming_batch_source(
    const EncodedExamples& examples, std::vector<std::vector<std::int64_t>> plan, Padding padding,
    int max_len, const torch::Device& device, bool pinned, bool full_at_each_batch) {
    return std::make_unique<StreamingBatchSource>(examples, std::move(plan), padding, max_len,
                                                  device, pinned, full_at_each_batch);
}

}  // namespace oomlab::train
