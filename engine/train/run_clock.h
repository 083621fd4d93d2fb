// A run's wall clock: time since it began, and each step's time without the evaluations.
#pragma once

#include <chrono>

namespace oomlab::train {

class RunClock {
public:
    double elapsed_seconds() const { return seconds_since(m_start); }
    double elapsed_ms() const { return elapsed_seconds() * 1000.0; }
    // Seconds since the last lap ended (or the run began); a new lap starts now.
    double lap() {
        const auto now = Clock::now();
        const double seconds = std::chrono::duration<double>(now - m_lap_start).count();
        m_lap_start = now;
        return seconds;
    }
    // The lap in progress starts again now: what happened since is not part of it.
    void restart_lap() { m_lap_start = Clock::now(); }

private:
    using Clock = std::chrono::steady_clock;
    static double seconds_since(Clock::time_point then) {
        return std::chrono::duration<double>(Clock::now() - then).count();
    }

    Clock::time_point m_start = Clock::now();
    Clock::time_point m_lap_start = m_start;
};

}  // namespace oomlab::train
