#include "snapshot_stages.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "oomlab/common/utf8.h"

namespace oomlab::snapshot {

namespace {

const std::string& text_field(const PickleValue& record, std::string_view key,
                              const SnapshotFields& fields, const SnapshotFields::Where& where) {
    const PickleValue* value = record.at(key);
    if (!value || !value->text()) {
        fields.refuse(where, "\"" + std::string(key) + "\" is " +
                                 (value ? kind_of_value(*value) : std::string("missing")) +
                                 ", not a string");
    }
    return *value->text();
}

}  // namespace

std::vector<SnapshotAnnotation> read_annotations(const PickleValue& root,
                                                 const SnapshotFields& fields) {
    std::vector<SnapshotAnnotation> annotations;
    const std::vector<PickleValue>& items =
        fields.list(root, "external_annotations", [] { return std::string("the root"); });
    annotations.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        const auto where = [&] { return "external_annotations[" + std::to_string(i) + "]"; };
        const PickleValue& item = items[i];
        if (!item.dict()) {
            fields.refuse(where, "an annotation is " + kind_of_value(item) + ", not a dict");
        }
        SnapshotAnnotation annotation;
        const std::string& stage = text_field(item, "stage", fields, where);
        if (stage != "START" && stage != "END") {
            fields.refuse(where, "\"stage\" is \"" + stage + "\", not START or END");
        }
        annotation.start = stage == "START";
        annotation.name = &text_field(item, "name", fields, where);
        annotation.device = fields.whole(item, "device", where, -1, INT32_MAX);
        annotation.time_us = fields.whole(item, "time_us", where, INT64_MIN, INT64_MAX);
        annotations.push_back(std::move(annotation));
    }
    return annotations;
}

void place_stages(SnapshotDevice& device, const std::vector<SnapshotAnnotation>& annotations,
                  const EventClock& clock) {
    std::vector<const SnapshotAnnotation*> mine;
    for (const SnapshotAnnotation& annotation : annotations) {
        if (annotation.device == device.index) {
            mine.push_back(&annotation);
        }
    }
    if (mine.empty()) {
        return;
    }
    if (!clock.has_times()) {
        device.stages_problem = std::to_string(mine.size()) +
                                " annotations of stages, but the trace's events carry no times "
                                "(\"time_us\", PyTorch 2.1 and later): no peak by stage";
        return;
    }
    std::stable_sort(mine.begin(), mine.end(),
                     [](const SnapshotAnnotation* a, const SnapshotAnnotation* b) {
                         return a->time_us < b->time_us;
                     });
    std::vector<std::int64_t> times;
    times.reserve(mine.size());
    for (const SnapshotAnnotation* annotation : mine) {
        times.push_back(annotation->time_us);
    }
    // An annotation at time T: the first event at or after T is the first after it, so the
    // state after that many events is where a stage starts, or the last it ends with.
    const std::vector<std::size_t> states = clock.first_events_at(times);
    // Each distinct text made printable once, and each printable name a stage once started.
    constexpr std::uint32_t kNotStarted = UINT32_MAX;
    std::unordered_map<const std::string*, std::uint32_t> name_of_text;
    std::unordered_map<std::string, std::uint32_t> name_ids;
    std::vector<std::uint32_t> stage_of_name;
    const auto name_of = [&](const std::string* text) {
        const auto [known, added] = name_of_text.try_emplace(text, 0);
        if (added) {
            const auto [named, fresh] =
                name_ids.try_emplace(printable_line(*text), std::uint32_t(name_ids.size()));
            if (fresh) {
                stage_of_name.push_back(kNotStarted);
            }
            known->second = named->second;
        }
        return known->second;
    };
    std::vector<std::vector<std::size_t>> open;  // each stage's starts not yet ended
    for (std::size_t k = 0; k < mine.size(); ++k) {
        const std::uint32_t name = name_of(mine[k]->name);
        std::uint32_t& stage = stage_of_name[name];
        if (mine[k]->start) {
            if (stage == kNotStarted) {
                stage = std::uint32_t(device.stages.size());
                SnapshotAnnotatedStage added;
                added.name = printable_line(*mine[k]->name);
                added.peak_allocated = -1;
                device.stages.push_back(std::move(added));
                open.emplace_back();
            }
            open[stage].push_back(states[k]);
        } else if (stage != kNotStarted && !open[stage].empty()) {
            device.stage_spans.push_back({stage, open[stage].back(), states[k]});
            open[stage].pop_back();
        }
    }
    for (std::uint32_t stage = 0; stage < open.size(); ++stage) {
        for (const std::size_t first : open[stage]) {
            device.stage_spans.push_back({stage, first, device.events});
        }
    }
    std::stable_sort(
        device.stage_spans.begin(), device.stage_spans.end(),
        [](const SnapshotStageSpan& a, const SnapshotStageSpan& b) { return a.end < b.end; });
    for (const SnapshotStageSpan& span : device.stage_spans) {
        ++device.stages[span.stage].spans;
        device.stages[span.stage].events += span.end - span.first;
    }
}

StagePeaks::StagePeaks(SnapshotDevice& device) : m_device(device) {}

void StagePeaks::follow(std::size_t state, std::int64_t allocated, std::int64_t reserved) {
    const std::vector<SnapshotStageSpan>& spans = m_device.stage_spans;
    while (!m_falling.empty() && m_falling.back().allocated < allocated) {
        m_falling.pop_back();
    }
    m_falling.push_back({state, allocated, reserved});
    for (; m_next_span < spans.size() && spans[m_next_span].end == state; ++m_next_span) {
        const SnapshotStageSpan& span = spans[m_next_span];
        // The highest state since the span's first: the earliest kept from then on.
        const auto peak = std::lower_bound(
            m_falling.begin(), m_falling.end(), span.first,
            [](const Candidate& candidate, std::size_t first) { return candidate.state < first; });
        SnapshotAnnotatedStage& stage = m_device.stages[span.stage];
        if (peak->allocated > stage.peak_allocated) {
            stage.peak_allocated = peak->allocated;
            stage.peak_event = peak->state;
            stage.reserved_at_peak = peak->reserved;
        }
    }
}

}  // namespace oomlab::snapshot

namespace oomlab {

std::vector<std::string> stages_at(const SnapshotDevice& device, std::size_t event) {
    std::vector<bool> running(device.stages.size(), false);
    for (const SnapshotStageSpan& span : device.stage_spans) {
        if (span.first <= event && event <= span.end) {
            running[span.stage] = true;
        }
    }
    std::vector<std::string> names;
    for (std::size_t stage = 0; stage < running.size(); ++stage) {
        if (running[stage]) {
            names.push_back(device.stages[stage].name);
        }
    }
    return names;
}

std::vector<SnapshotAnnotatedStage> stages_by_peak(const SnapshotDevice& device) {
    std::vector<SnapshotAnnotatedStage> stages = device.stages;
    std::stable_sort(stages.begin(), stages.end(),
                     [](const SnapshotAnnotatedStage& a, const SnapshotAnnotatedStage& b) {
                         return a.peak_allocated > b.peak_allocated;
                     });
    return stages;
}

}  // namespace oomlab
