#include "phase_times.h"

#include <algorithm>
#include <string>

namespace oomlab::train {

void PhaseTimes::switch_to(std::string_view name) {
    const Clock::time_point now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - m_since).count();
    const auto same = [&](const PartTime& t) { return t.part == m_part; };
    auto total = std::find_if(m_totals.begin(), m_totals.end(), same);
    if (total == m_totals.end()) {
        total = m_totals.insert(m_totals.end(), PartTime{std::string(m_part), 0.0});
    }
    total->seconds += seconds;
    m_part = name;
    m_since = now;
}

std::vector<PartTime> PhaseTimes::totals() {
    switch_to(m_part);
    // A step's order, then the engine's own work.
    constexpr std::string_view kOrder[] = {part::kSetup,       part::kData,      part::kForward,
                                           part::kBackward,    part::kUpdate,    part::kEvaluation,
                                           part::kMeasurement, part::kRecording, part::kFinish};
    std::vector<PartTime> ordered;
    for (const std::string_view name : kOrder) {
        for (const PartTime& total : m_totals) {
            if (total.part == name) {
                ordered.push_back(total);
            }
        }
    }
    return ordered;
}

}  // namespace oomlab::train
