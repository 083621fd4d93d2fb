// A snapshot's report as `snapshot show --json` writes it.
#include <nlohmann/json.hpp>

#include "oomlab/snapshot_reader/snapshot_advice.h"
#include "oomlab/snapshot_reader/snapshot_gpu_estimate.h"
#include "oomlab/snapshot_reader/snapshot_report.h"

namespace oomlab {

std::string snapshot_report_json(const SnapshotReport& report, std::optional<std::size_t> at) {
    using Json = nlohmann::ordered_json;
    const auto groups = [](const std::vector<SnapshotLine>& from, const char* name) {
        Json list = Json::array();
        for (const SnapshotLine& group : from) {
            list.push_back({{name, group.where},
                            {"bytes", group.bytes},
                            {"blocks", group.blocks},
                            {"block_bytes", line_bytes_held(group)}});
        }
        return list;
    };
    const auto pools = [](const std::vector<SnapshotPool>& from) {
        Json list = Json::array();
        for (const SnapshotPool& pool : from) {
            list.push_back({{"pool", {pool.owner, pool.id}},
                            {"segments", pool.segments},
                            {"reserved_bytes", pool.reserved},
                            {"allocated_bytes", pool.allocated}});
        }
        return list;
    };
    const auto recorded = [](bool known, std::int64_t bytes) {
        return known ? Json(bytes) : Json();
    };
    Json devices = Json::array();
    for (const SnapshotDevice& d : report.devices) {
        Json ooms = Json::array();
        for (const SnapshotOom& oom : d.ooms) {
            ooms.push_back({{"event", oom.event},
                            {"requested_bytes", oom.requested},
                            {"device_free_bytes", oom.device_free},
                            {"allocated_bytes", oom.allocated},
                            {"reserved_bytes", oom.reserved},
                            {"refused_by_process_limit", refused_by_process_limit(oom)}});
        }
        Json stages = Json::array();
        for (const SnapshotAnnotatedStage& stage : stages_by_peak(d)) {
            stages.push_back({{"name", stage.name},
                              {"times", stage.spans},
                              {"events", stage.events},
                              {"peak_allocated_bytes", stage.peak_allocated},
                              {"peak_event", stage.peak_event},
                              {"reserved_at_peak_bytes", stage.reserved_at_peak}});
        }
        Json gpu;
        if (const std::optional<GpuEstimate> estimate = gpu_estimate(d)) {
            gpu = {{"peak_allocated_bytes", estimate->gpu_peak_allocated},
                   {"peak_reserved_bytes", estimate->peak_reserved},
                   {"segments_at_peak", estimate->segments_at_peak},
                   {"peak_reserved_expandable_bytes", estimate->peak_reserved_expandable},
                   {"cublas_workspaces_bytes", estimate->cublas_workspaces},
                   {"optimizer_steps_multi_tensor", estimate->updates_gathered},
                   {"attention_calls_fused", estimate->attention_fused},
                   {"attention_backward_calls_fused", estimate->attention_backward_fused},
                   {"recurrent_calls_as_cudnn", estimate->recurrent_as_cudnn},
                   {"convolution_calls_as_cudnn", estimate->convolutions_as_cudnn},
                   {"dropout_calls_as_masks", estimate->dropouts_as_masks},
                   {"sums_with_reduction_buffers", estimate->sums_with_buffers},
                   {"leaves_out", kGpuEstimateLeavesOut}};
        }
        Json advice = Json::array();
        for (const SnapshotAdvice& item : snapshot_advice(d, report.alloc_conf)) {
            advice.push_back({{"what", item.what}, {"why", item.why}});
        }
        devices.push_back(
            {{"device", d.index},
             {"name", snapshot_device_name(d.index)},
             {"segments", d.segments},
             // null where the file does not record it (a trace's pieces, an old trace's
             // reserved)
             {"reserved_bytes", recorded(d.reserved_recorded, d.reserved)},
             {"allocated_bytes", d.allocated},
             {"cached_free_bytes", recorded(d.reserved_recorded, d.cached_free)},
             {"largest_free_block", recorded(!d.from_trace, d.largest_free_block)},
             {"pending_free_bytes", d.pending_free},
             {"from_trace", d.from_trace},
             {"requested_bytes", d.requested >= 0 ? Json(d.requested) : Json()},
             {"pools", pools(d.pools)},
             {"events", d.events},
             {"from_profile", d.from_profile},
             {"peak_allocated_bytes", d.peak_allocated},
             {"peak_reserved_bytes", recorded(d.reserved_recorded, d.peak_reserved)},
             {"peak_event", d.peak_event},
             {"reserved_at_peak_bytes", recorded(d.reserved_recorded, d.reserved_at_peak)},
             {"at_peak", groups(d.at_peak, "where")},
             {"at_peak_by_kind", groups(d.at_peak_by_kind, "kind")},
             {"at_peak_by_metadata", groups(d.at_peak_by_metadata, "metadata")},
             {"stages", stages},
             {"stages_at_peak", stages_at(d, d.peak_event)},
             {"gpu_estimate", gpu},
             {"stages_problem", d.stages_problem.empty() ? Json() : Json(d.stages_problem)},
             {"ooms", ooms},
             {"trace_problems", d.trace_problems},
             {"advice", advice}});
        if (at) {
            const SnapshotMoment moment = snapshot_moment(d, *at);
            devices.back()["at_event"] = {{"event", moment.event},
                                          {"allocated_bytes", moment.allocated},
                                          {"reserved_bytes", moment.reserved},
                                          {"by_kind", groups(moment.by_kind, "kind")},
                                          {"by_line", groups(moment.by_line, "where")},
                                          {"by_metadata", groups(moment.by_metadata, "metadata")}};
        }
    }
    Json document{{"source", report.source}, {"devices", devices}};
    if (!report.experiment_json.empty()) {
        // The settings of the OOM Lab run that recorded it, as `config show --json` has them.
        document["experiment"] = Json::parse(report.experiment_json);
    }
    if (!report.alloc_conf_problem.empty()) {
        document["alloc_conf_problem"] = report.alloc_conf_problem;
    }
    if (!report.experiment_problem.empty()) {
        document["experiment_problem"] = report.experiment_problem;
    }
    return document.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oomlab
