// When each event of a trace happened (its "time_us", PyTorch 2.1 and later), in two bytes an
// event: the microseconds since the event before, a step that goes back or past 65 ms kept
// aside. What it answers is where an annotation's time falls among the events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace oomlab::snapshot {

class EventClock {
public:
    // Event `event` (the next one, counted from 0) happened at `time_us`; an event without a
    // time leaves the whole trace without one.
    void add(std::size_t event, const std::int64_t* time_us);
    bool has_times() const { return !m_steps.empty() && m_complete; }
    // For each of `times` (ascending): the first event at or after it (the events' count when
    // none is). One pass over the events.
    std::vector<std::size_t> first_events_at(const std::vector<std::int64_t>& times) const;
    std::uint64_t bytes() const {
        return m_steps.size() * sizeof(std::uint16_t) + m_leaps.capacity() * sizeof(Leap);
    }

private:
    static constexpr std::uint16_t kLeap = UINT16_MAX;  // the step is in m_leaps
    struct Leap {
        std::size_t event;
        std::int64_t time_us;
    };

    std::deque<std::uint16_t> m_steps;
    std::vector<Leap> m_leaps;  // in event order
    std::int64_t m_last = 0;
    bool m_complete = true;
};

}  // namespace oomlab::snapshot
