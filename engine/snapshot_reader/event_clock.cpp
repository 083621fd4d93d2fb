#include "event_clock.h"

namespace oomlab::snapshot {

void EventClock::add(std::size_t event, const std::int64_t* time_us) {
    if (!m_complete) {
        return;
    }
    if (!time_us || event != m_steps.size()) {
        m_complete = false;
        std::deque<std::uint16_t>().swap(m_steps);
        std::vector<Leap>().swap(m_leaps);
        return;
    }
    const std::int64_t step = *time_us - m_last;
    if (m_steps.empty() || step < 0 || step >= kLeap) {
        m_steps.push_back(kLeap);
        m_leaps.push_back({event, *time_us});
    } else {
        m_steps.push_back(std::uint16_t(step));
    }
    m_last = *time_us;
}

std::vector<std::size_t> EventClock::first_events_at(const std::vector<std::int64_t>& times) const {
    std::vector<std::size_t> events;
    events.reserve(times.size());
    std::size_t event = 0;
    std::int64_t now = 0;  // the time of `event`, once event < m_steps.size()
    auto leap = m_leaps.begin();
    const auto time_of = [&](std::size_t at) {
        if (m_steps[at] == kLeap) {
            return (leap++)->time_us;
        }
        return now + m_steps[at];
    };
    if (!m_steps.empty()) {
        now = time_of(0);
    }
    for (const std::int64_t time : times) {
        // A later time's first event is never before an earlier one's: every event before
        // that was earlier than the earlier time.
        while (event < m_steps.size() && now < time) {
            ++event;
            if (event < m_steps.size()) {
                now = time_of(event);
            }
        }
        events.push_back(event);
    }
    return events;
}

}  // namespace oomlab::snapshot
