// What to change after a run ran out of memory. Each fix is a set of settings, checked with
// the estimator against the memory the run had: only fixes predicted to fit are offered, the
// cheapest first. The CLI prints them on exit 3 and puts them in the summary of an `oom`
// run; the workbench offers each one as "apply and run".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/config/config_keys.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/run/fragmentation.h"
#include "oomlab/run/run_record.h"

namespace oomlab {

// What a fix costs, cheapest first.
enum class FixCost {
    None,          // a mistake undone, or memory that bought nothing: the same training
    Slower,        // the same training with more compute or more copies
    Precision,     // the same training in lower precision
    Results,       // different training: effective batch, optimizer, table rows or freezing
    LargerDevice,  // more memory than the run had
};
std::string_view fix_cost_name(FixCost cost);  // "none", "slower", "precision", ...
std::optional<FixCost> fix_cost_named(std::string_view name);

struct OomFix {
    Settings set;        // the keys to change and their new values
    std::string reason;  // one or two sentences: why it helps and what it costs
    FixCost cost = FixCost::None;
    std::int64_t predicted_peak_bytes = 0;
};

struct OomSituation {
    ExperimentConfig config;      // the run that ran out of memory
    DataProfile profile;          // its data (see profile_data)
    std::int64_t capacity_bytes;  // what the run could use: memory.cap_mb, or the device
    bool on_cuda = false;         // whether the table could move to the host
    int world_size = 1;           // processes of a data-parallel run: capacity is per process
    // The allocator's free space at the OOM, where it told (CUDA, or the CPU's model).
    std::optional<Fragmentation> free_space = std::nullopt;
};

// The estimator's predictions are scaled up by what the run showed when it predicted that
// the failing settings fit; a fix must then leave 5% of the capacity free. An OOM the free
// space shows was fragmentation is offered expandable segments first: the same tensors, in
// segments that grow instead of splitting.
std::vector<OomFix> suggest_oom_fixes(const OomSituation& situation);

// The capacity a run had: its cap, else the device's total (0 when unknown).
std::int64_t run_capacity_bytes(const ExperimentConfig& config, std::int64_t device_total_bytes);

// The fixes as `run --json` lists them under "fixes", and as a run keeps them in its
// database: [{"set": {key: value}, "predicted_peak_bytes", "cost", "reason"}].
std::string oom_fixes_json(const std::vector<OomFix>& fixes);
// Read back; throws BadInput naming `source` and what is wrong.
std::vector<OomFix> parse_oom_fixes_json(const std::string& text, const std::string& source);

// The offered fix a run trained with (every one of its settings), or null.
const OomFix* fix_tried_by(const std::vector<OomFix>& offered, const RunRecord& tried);

// A tried fix against what was offered and what failed: "predicted 9.1 MiB -> measured
// 8.7 MiB, accuracy 41.0% -> 43.5%" (what is unknown is left out).
std::string tried_fix_figures(const RunRecord& failed, const RunRecord& tried,
                              const std::vector<OomFix>& offered);

}  // namespace oomlab
