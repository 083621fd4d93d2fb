// Running a few copies of a job on their own threads.
#pragma once

#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace oomlab::glove_detail {

inline int hardware_threads() {
    const unsigned count = std::thread::hardware_concurrency();
    return count == 0 ? 1 : static_cast<int>(count);
}

// Calls job(0) .. job(count - 1), each on its own thread (job 0 on the caller's), and waits
// for all of them. The first exception thrown by a job is rethrown here.
template <typename Job>
void run_parallel(std::size_t count, Job&& job) {
    if (count <= 1) {
        if (count == 1) {
            job(std::size_t{0});
        }
        return;
    }
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto guarded = [&](std::size_t index) {
        try {
            job(index);
        } catch (...) {
            std::lock_guard<std::mutex> lock(failure_mutex);
            if (!failure) {
                failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> workers;
    workers.reserve(count - 1);
    try {
        for (std::size_t i = 1; i < count; ++i) {
            workers.emplace_back(guarded, i);
        }
    } catch (...) {  // could not start a thread: finish the ones that did start
        for (std::thread& worker : workers) {
            worker.join();
        }
        throw;
    }
    guarded(0);
    for (std::thread& worker : workers) {
        worker.join();
    }
    if (failure) {
        std::rethrow_exception(failure);
    }
}

}  // namespace oomlab::glove_detail
