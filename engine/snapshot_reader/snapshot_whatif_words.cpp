// snapshot whatif's results in words and as JSON: each device's replay under the recorded
// settings and under those asked for, told against what the program itself reserved.
#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "oomlab/common/format.h"
#include "oomlab/snapshot_reader/snapshot_headroom.h"
#include "oomlab/snapshot_reader/snapshot_whatif.h"

namespace oomlab {
namespace {

std::string percent(double share) {
    std::ostringstream text;
    text.setf(std::ios::fixed);
    text.precision(1);
    text << share << "%";
    return text.str();
}

std::string conf_or_defaults(const std::string& conf) {
    return conf.empty() ? "(PyTorch's defaults)" : conf;
}

nlohmann::ordered_json whatif_json(const allocator::WhatIf& whatif) {
    nlohmann::ordered_json ooms = nlohmann::json::array();
    for (const allocator::OomOutcome& oom : whatif.ooms) {
        ooms.push_back({{"event", oom.event}, {"request", oom.request}, {"happens", oom.happens}});
    }
    return {{"capacity", whatif.capacity},
            {"peak_reserved", whatif.peak_reserved},
            {"reserved_unallocated_at_peak", whatif.peak_reserved - whatif.allocated_at_peak},
            {"peak_event", event_number(whatif.peak_event)},  // a state, as `show` counts it
            {"segments_at_peak", whatif.segments_at_peak},
            {"reserved_at_end", whatif.reserved_at_end},
            {"first_over_capacity", whatif.first_over_capacity
                                        ? nlohmann::ordered_json(*whatif.first_over_capacity)
                                        : nlohmann::ordered_json()},
            {"failed_allocations", whatif.failed_allocations},
            {"ooms", ooms}};
}

}  // namespace

std::string unrecorded_settings_words(bool from_trace) {
    return from_trace ? "a profiler's trace does not record the allocator's settings"
                      : "the snapshot carries no allocator_settings";
}

std::string snapshot_whatif_json(const SnapshotReport& report,
                                 const std::vector<SnapshotWhatIf>& results) {
    nlohmann::ordered_json devices = nlohmann::json::array();
    for (const SnapshotWhatIf& result : results) {
        const allocator::Fidelity& fidelity = result.fidelity;
        nlohmann::ordered_json misses = nlohmann::json::array();
        for (const allocator::FidelityMiss& miss : fidelity.misses) {
            misses.push_back({{"event", miss.event},
                              {"request", miss.request},
                              {"recorded", miss.recorded},
                              {"modelled", miss.modelled}});
        }
        // null where the file does not record them (a trace)
        const nlohmann::ordered_json recorded_conf =
            result.settings_recorded ? nlohmann::ordered_json(result.recorded_conf)
                                     : nlohmann::ordered_json();
        // null where the file does not record it (a trace before PyTorch 1.10)
        const nlohmann::ordered_json program =
            result.program_reserved_recorded ? nlohmann::ordered_json(result.program_peak_reserved)
                                             : nlohmann::ordered_json();
        devices.push_back({{"device", result.device},
                           {"recorded_alloc_conf", recorded_conf},
                           {"notes", result.notes},
                           {"alloc_conf", result.conf},
                           {"capacity_source", result.capacity_source},
                           {"fidelity",
                            {{"segment_allocs_recorded", fidelity.segment_allocs_recorded},
                             {"segment_allocs_modelled", fidelity.segment_allocs_modelled},
                             {"agreed", fidelity.agreed},
                             {"allocations", fidelity.allocations},
                             {"blocks_agreed", fidelity.blocks_agreed},
                             {"not_placed", fidelity.not_placed},
                             {"disagreements", misses},
                             {"segments_recorded", result.segments_recorded}}},
                           {"program_peak_reserved", program},
                           {"baseline_is_the_programs", result.baseline_is_the_programs},
                           {"recorded", whatif_json(result.recorded)},
                           {"replayed", whatif_json(result.replayed)}});
    }
    return nlohmann::ordered_json{{"source", report.source}, {"devices", devices}}.dump();
}

std::string snapshot_whatif_text(const SnapshotReport& report,
                                 const std::vector<SnapshotWhatIf>& results,
                                 const WhatIfControls& controls) {
    std::ostringstream out;
    if (results.empty()) {
        const bool others =
            std::any_of(report.devices.begin(), report.devices.end(),
                        [](const SnapshotDevice& device) { return !device.changes.empty(); });
        out << report.source
            << (others ? ": no caching allocator served its allocations (the CPU's, or a "
                         "profile's made into a snapshot), so there is no recorded run to "
                         "replay; `snapshot show` says what PyTorch's caching allocator would "
                         "reserve for them on a GPU\n"
                       : ": no device has a trace of allocations to replay\n");
    }
    for (const SnapshotWhatIf& result : results) {
        const allocator::Fidelity& f = result.fidelity;
        out << snapshot_device_name(result.device) << ", recorded with "
            << (result.settings_recorded
                    ? conf_or_defaults(result.recorded_conf)
                    : "settings not known (" +
                          unrecorded_settings_words(!result.segments_recorded) +
                          "): replayed with PyTorch's defaults")
            << "\n";
        for (const std::string& note : result.notes) {
            out << "  note: " << note << "\n";
        }
        if (!result.segments_recorded && !result.program_reserved_recorded) {
            out << "  a profiler's trace records no segments, and one before PyTorch 1.10 no "
                   "totals either: the model's segments are not checked one by one\n";
        } else if (!result.segments_recorded) {
            out << "  a profiler's trace records its totals, not its segments: the model's "
                   "segments are not checked one by one; its reserved figures are told against "
                   "the trace's below\n";
        } else if (f.segment_allocs_recorded == 0) {
            // Nothing to compare the model with, and nothing a setting of how segments are
            // opened, split or rounded could change, unless the model opens some.
            out << "  the trace opens no segment: every request fit the segments held before "
                   "its first event, so there is no segment opening to check the model against"
                << (f.segment_allocs_modelled == 0
                        ? " and no setting changes what this trace reserved (record the "
                          "history before the model is built for a replay that can)"
                        : "; the model would have opened " +
                              std::to_string(f.segment_allocs_modelled))
                << "\n";
        } else {
            out << "  the model, following the trace: " << f.agreed << " of "
                << f.segment_allocs_recorded
                << " segments opened by the same request with the same size ("
                << percent(100.0 * double(f.agreed) / double(f.segment_allocs_recorded))
                << "); it would have opened " << f.segment_allocs_modelled << "\n";
        }
        for (std::size_t i = 0; i < f.misses.size() && i < controls.misses_shown; ++i) {
            const allocator::FidelityMiss& miss = f.misses[i];
            out << "    event " << event_number(miss.event) << ": " << format_bytes(miss.request)
                << " asked; recorded "
                << (miss.recorded ? "a segment of " + format_bytes(miss.recorded) : "none")
                << ", modelled "
                << (miss.modelled ? "a segment of " + format_bytes(miss.modelled) : "none") << "\n";
        }
        if (f.misses.size() > controls.misses_shown) {
            out << "    ... " << f.misses.size() - controls.misses_shown << " more ("
                << controls.all_misses << " lists them)\n";
        }
        const auto describe = [&](const std::string& title, const allocator::WhatIf& whatif) {
            out << "  replayed under " << title << ": peak reserved "
                << format_bytes(whatif.peak_reserved) << " (after event "
                << event_number(whatif.peak_event) << ": "
                << format_bytes(whatif.peak_reserved - whatif.allocated_at_peak)
                << " of it held no tensor), " << whatif.segments_at_peak << " segments then\n";
            for (const allocator::OomOutcome& oom : whatif.ooms) {
                out << "    the out-of-memory error at event " << event_number(oom.event) << " ("
                    << format_bytes(oom.request) << ") "
                    << (oom.happens ? "still happens" : "does not happen") << "\n";
            }
            if (result.capacity_given) {
                out << "    on the device: "
                    << headroom_words({"", whatif.peak_reserved, event_number(whatif.peak_event),
                                       whatif.capacity - whatif.peak_reserved,
                                       whatif.first_over_capacity})
                    << "\n";
            }
            if (whatif.failed_allocations > 0) {
                out << "    " << whatif.failed_allocations
                    << " of the trace's allocations fail, the first at event "
                    << event_number(*whatif.first_over_capacity) << "\n";
            }
        };
        out << "  capacity: "
            << (result.recorded.capacity ? format_bytes(result.recorded.capacity) + ", " : "")
            << (result.capacity_given ? controls.device_memory : result.capacity_source)
            << (result.recorded.capacity && !result.capacity_given
                    ? " (" + controls.device_memory + " sets another)"
                    : "")
            << "\n";
        if (result.capacity_given) {
            out << "  as it ran, on the device: "
                << headroom_words(
                       {"", result.program_peak_reserved, result.program_peak_reserved_event,
                        result.recorded.capacity - result.program_peak_reserved, std::nullopt})
                << "\n";
        }
        describe(result.settings_recorded ? "the recorded " + conf_or_defaults(result.recorded_conf)
                                          : std::string("PyTorch's defaults"),
                 result.recorded);
        if (!result.program_reserved_recorded) {
            out << "    not comparable with the program: the trace records no reserved figure "
                   "(the profiler wrote no totals before PyTorch 1.10), so compare what-ifs with "
                   "this replay\n";
        } else if (!result.baseline_is_the_programs) {
            out << "    not the program's: it reserved at most "
                << format_bytes(result.program_peak_reserved) << " (the "
                << (result.segments_recorded ? "snapshot" : "trace")
                << "'s figure); the replay differs by more than 2%, so compare "
                   "what-ifs with this replay, not with the program\n";
        }
        if (result.conf != result.recorded_conf) {
            describe(conf_or_defaults(result.conf), result.replayed);
        }
    }
    return out.str();
}

}  // namespace oomlab
