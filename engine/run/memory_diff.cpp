#include "oomlab/run/memory_diff.h"

#include <algorithm>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "module_kinds.h"

namespace oomlab {
namespace {

using run::find_module;
using run::kModuleKinds;
using run::ModuleKind;

void sort_by_difference(std::vector<MemoryDifference>& rows) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
        return std::llabs(x.difference()) > std::llabs(y.difference());
    });
}

}  // namespace

MemoryDiff diff_memory(const RunOutcome& a, const RunOutcome& b) {
    MemoryDiff diff;
    diff.a_peak = a.peak_bytes;
    diff.b_peak = b.peak_bytes;
    for (const auto& [name, run] : {std::pair{"A", &a}, std::pair{"B", &b}}) {
        if (!run->has_breakdown()) {
            diff.notes.push_back(std::string(name) + " (" +
                                 std::string(run_status_name(run->status)) +
                                 ") has no breakdown recorded: only the peaks are compared");
        }
    }
    if (!diff.notes.empty()) {
        return diff;
    }
    for (std::size_t i = 0; i < kBreakdownKeys.size(); ++i) {
        MemoryDifference row{std::string(kBreakdownKeys[i]), "", breakdown_field(a.breakdown, i),
                             breakdown_field(b.breakdown, i)};
        if (row.difference() != 0) {
            diff.by_category.push_back(std::move(row));
        }
    }
    // A's modules in their order, then those only B has.
    std::vector<std::string> names;
    for (const auto* modules : {&a.by_module, &b.by_module}) {
        for (const ModuleMemory& module : *modules) {
            if (std::find(names.begin(), names.end(), module.module) == names.end()) {
                names.push_back(module.module);
            }
        }
    }
    for (const std::string& name : names) {
        const ModuleMemory* in_a = find_module(a.by_module, name);
        const ModuleMemory* in_b = find_module(b.by_module, name);
        for (const ModuleKind& kind : kModuleKinds) {
            MemoryDifference row{kind.name, name, in_a ? kind.bytes(*in_a) : 0,
                                 in_b ? kind.bytes(*in_b) : 0};
            if (row.difference() != 0) {
                diff.by_module.push_back(std::move(row));
            }
        }
    }
    // The categories in the peak first; the allocator's cache and process memory beside it.
    const auto beside = std::stable_partition(
        diff.by_category.begin(), diff.by_category.end(), [](const MemoryDifference& row) {
            const auto key = std::find(kBreakdownKeys.begin(), kBreakdownKeys.end(), row.category);
            return std::size_t(key - kBreakdownKeys.begin()) < kBreakdownInPeak;
        });
    std::vector<MemoryDifference> outside(beside, diff.by_category.end());
    diff.by_category.erase(beside, diff.by_category.end());
    sort_by_difference(diff.by_category);
    sort_by_difference(outside);
    diff.by_category.insert(diff.by_category.end(), outside.begin(), outside.end());
    sort_by_difference(diff.by_module);
    return diff;
}

std::string memory_diff_json(const MemoryDiff& diff) {
    using Json = nlohmann::ordered_json;
    const auto rows = [](const std::vector<MemoryDifference>& from) {
        Json list = Json::array();
        for (const MemoryDifference& row : from) {
            list.push_back({{"category", row.category},
                            {"module", row.module},
                            {"a_bytes", row.a_bytes},
                            {"b_bytes", row.b_bytes},
                            {"difference", row.difference()}});
        }
        return list;
    };
    const Json document = {{"a_peak_bytes", diff.a_peak},
                           {"b_peak_bytes", diff.b_peak},
                           {"by_category", rows(diff.by_category)},
                           {"by_module", rows(diff.by_module)},
                           {"notes", diff.notes}};
    return document.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace oomlab
