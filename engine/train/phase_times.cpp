#include "phase_times.h"

#include <algorithm>
#include <string>

namespace oomlab::train {

std::size_t PhaseTimes::index_of(std::string_view name) {
    return std::size_t(std::find(std::begin(kParts), std::end(kParts), name) - std::begin(kParts));
}

void PhaseTimes::switch_to(std::string_view name) {
    const Clock::time_point now = Clock::now();
    const std::size_t index = index_of(m_part);
    m_seconds.at(index) += std::chrono::duration<double>(now - m_since).count();
    m_entered.at(index) = true;  // a name outside oomlab::train::part throws
    m_part = name;
    m_since = now;
}

std::vector<PartTime> PhaseTimes::totals() {
    switch_to(m_part);
    std::vector<PartTime> totals;
    for (std::size_t i = 0; i < kCount; ++i) {
        if (m_entered[i]) {
            totals.push_back({std::string(kParts[i]), m_seconds[i]});
        }
    }
    return totals;
}

}  // namespace oomlab::train
