// Running a few copies of a job on their own threads.
#pragma once

#include <algorithm>
#include <atomic>
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

// Runs task(0) .. task(tasks - 1) on `threads` threads that each take the next task as they
// become free. A thread the system pauses then delays at most the task in its hands: the others
// carry on with the rest, which fixed shares would not.
template <typename Task>
void run_tasks(std::size_t threads, std::size_t tasks, Task&& task) {
    std::atomic<std::size_t> next{0};
    run_parallel(std::min(threads, tasks), [&](std::size_t) {
        for (std::size_t i = next++; i < tasks; i = next++) {
            task(i);
        }
    });
}

}  // namespace oomlab::glove_detail
