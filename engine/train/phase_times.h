// Where a run's wall time goes, part by part: each phase of a step (the data, forward,
// backward, the update, evaluation) and the engine's own work around them (measuring memory,
// recording rows), summed over the run (RunOutcome::time_by_part). The parts add up to the
// run's wall time: time always counts for exactly one of them.
#pragma once

#include <array>
#include <chrono>
#include <iterator>
#include <string_view>
#include <vector>

#include "oomlab/run/run_record.h"

namespace oomlab::train {

namespace part {
inline constexpr std::string_view kSetup = "setup";  // the model, the optimizer, eager data
inline constexpr std::string_view kData = "data";    // waiting for the next micro-batch
inline constexpr std::string_view kForward = "forward";
inline constexpr std::string_view kBackward = "backward";
inline constexpr std::string_view kUpdate = "update";  // the optimizer's step
inline constexpr std::string_view kEvaluation = "evaluation";
inline constexpr std::string_view kMeasurement = "measurement";  // memory sampled, attributed
inline constexpr std::string_view kRecording = "recording";      // rows kept, sent, flushed
inline constexpr std::string_view kFinish = "finish";            // the breakdown, the snapshot
}  // namespace part

class PhaseTimes {
public:
    // Time counts for `name` (one of oomlab::train::part) from now until the next switch.
    void switch_to(std::string_view name);

    // `name` for the scope's life, then the part before it again.
    class Interlude {
    public:
        Interlude(PhaseTimes& times, std::string_view name)
            : m_times(times), m_before(times.m_part) {
            m_times.switch_to(name);
        }
        ~Interlude() { m_times.switch_to(m_before); }
        Interlude(const Interlude&) = delete;
        Interlude& operator=(const Interlude&) = delete;

    private:
        PhaseTimes& m_times;
        std::string_view m_before;
    };

    // The totals so far, the part in progress included: a step's parts in order, then the
    // engine's own; parts never entered are left out.
    std::vector<PartTime> totals();

private:
    using Clock = std::chrono::steady_clock;
    static constexpr std::string_view kParts[] = {
        part::kSetup,      part::kData,        part::kForward,   part::kBackward, part::kUpdate,
        part::kEvaluation, part::kMeasurement, part::kRecording, part::kFinish};
    static constexpr std::size_t kCount = std::size(kParts);
    static std::size_t index_of(std::string_view name);

    std::string_view m_part = part::kSetup;
    Clock::time_point m_since = Clock::now();
    std::array<double, kCount> m_seconds{};
    std::array<bool, kCount> m_entered{};
};

}  // namespace oomlab::train
