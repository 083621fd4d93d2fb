// The run store: one SQLite file (WAL) holding runs, their metrics and events.
//
// Each thread opens its own RunStore. Opening migrates the schema forward (PRAGMA
// user_version) and marks runs left `running` by a process that no longer exists as
// `interrupted`. Metrics are appended in one transaction per call.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oomlab/run/metric_thinning.h"
#include "oomlab/run/run_record.h"

namespace oomlab {

struct NewRun {
    std::string name;
    std::string config_json;  // the effective config
    std::string device;       // "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)"
    std::string engine_version;
    std::string torch_version;
    int world_size = 1;             // processes training the run together (data parallel)
    std::string prediction_json{};  // the estimator's prediction (prediction_json), or empty
};

// A run whole: its record, its identity across databases, its rows and its events. What an
// export reads (trackers::TrackedRun) and what an import of a run made elsewhere writes.
struct WholeRun {
    RunRecord run;
    std::string uid;
    std::vector<MetricRow> metrics;
    std::vector<EventRow> events;
};

struct RunFilter {
    std::optional<RunStatus> status;
    std::string name_contains;
    std::int64_t limit = 0;  // 0: all
};

class RunStore {
public:
    // Creates the file (and its folder) if needed. Throws BadInput naming the file when it
    // is not a database or was written by a newer schema.
    static RunStore open(const std::string& path);
    ~RunStore();
    RunStore(RunStore&&) noexcept;
    RunStore& operator=(RunStore&&) noexcept;

    const std::string& path() const;
    int schema_version() const;

    std::int64_t create_run(const NewRun& run);
    // The identity create_run gave the run: 128 random bits in hex, unique across databases
    // (empty for a run made before identities were kept).
    std::string run_uid(std::int64_t run_id) const;
    // The run with that identity in this database, if it holds it.
    std::optional<std::int64_t> run_with_uid(const std::string& uid) const;
    // A run made elsewhere (another machine's, read back from a tracker), ended, in one
    // transaction: its uid, times, settings, tags, notes, prediction, rows, events and outcome
    // (its fix_of, an id of another database, is not kept). Returns its id here. Throws
    // BadInput when this database holds a run of that uid already, or the uid is empty.
    std::int64_t add_whole_run(const WholeRun& whole);
    void append_metrics(std::int64_t run_id, const std::vector<MetricRow>& rows);
    void add_event(std::int64_t run_id, const EventRow& event);
    void finish_run(std::int64_t run_id, const RunOutcome& outcome);
    // Another rank of a data-parallel run (rank 0 finishes the run): writes its last rows and
    // where its bytes came from, leaving the run's row to rank 0.
    void finish_rank(std::int64_t run_id, int rank, const RunOutcome& outcome);

    std::vector<RunRecord> list_runs(const RunFilter& filter = {}) const;
    // One run with where its bytes came from (by module, staircase, free space at an OOM);
    // list_runs leaves those out.
    std::optional<RunRecord> find_run(std::int64_t run_id) const;
    std::vector<MetricRow> metrics(std::int64_t run_id) const;
    // The rows a plot can show (see MetricThinning), read a row at a time: memory that does not
    // grow with the run; the mean throughput from every row.
    ThinnedMetrics thinned_metrics(std::int64_t run_id,
                                   std::size_t points = kPlotPointsPerSeries) const;
    std::vector<EventRow> events(std::int64_t run_id) const;
    // The rows written after row `last_id` (0: all), in the order they were written; `last_id`
    // becomes the last one's. For following a run other processes write.
    std::vector<MetricRow> metrics_after(std::int64_t run_id, std::int64_t& last_id) const;
    std::vector<EventRow> events_after(std::int64_t run_id, std::int64_t& last_id) const;
    // The activations of each module at the phase boundaries of the sampled steps.
    std::vector<ModuleSample> module_samples(std::int64_t run_id) const;

    bool delete_run(std::int64_t run_id);  // false when there is no such run
    void rename_run(std::int64_t run_id, const std::string& name);
    void set_notes(std::int64_t run_id, const std::string& notes);
    void set_tags(std::int64_t run_id, const std::string& tags);  // comma-separated
    // The fixes a run that ran out of memory was offered (oom_fixes_json).
    void set_fixes(std::int64_t run_id, const std::string& fixes_json);
    // What a tracker gets with the run besides its figures (RunRecord::tracker_tags).
    void set_tracker_tags(std::int64_t run_id, const std::map<std::string, std::string>& tags);
    // `run_id` tries one of the fixes offered to `fixed_run`: false (nothing written) when that
    // run is no longer in this database (deleted while its fix trained). Throws when `run_id`
    // is not.
    bool set_fix_of(std::int64_t run_id, std::int64_t fixed_run);
    // The runs that tried a fix of `run_id`, oldest first.
    std::vector<RunRecord> fix_runs_of(std::int64_t run_id) const;

    // The run that process `pid` of this host created at or after `since` and left
    // unfinished when it died, ended `failed` with `error` (what a launcher saw: "rank 0 was
    // killed by signal 9") and with what its rows say it did. Returns its id, or nothing when
    // that process wrote no such run.
    std::optional<std::int64_t> fail_run_of_dead_writer(std::int64_t pid,
                                                        std::chrono::system_clock::time_point since,
                                                        const std::string& error);

    // The GUI's database: $XDG_DATA_HOME/oomlab/runs.sqlite (or ~/.local/share/...).
    static std::string default_path();

private:
    struct Impl;
    explicit RunStore(std::unique_ptr<Impl> impl);
    // What open() falls back to when the file cannot be opened as usual (its disk is full, or
    // it cannot be written here): the runs can be read (list, show, export), and every write
    // says `why` not and `what_to_do`.
    static RunStore open_read_only(const std::string& path, const std::string& why,
                                   const std::string& what_to_do);
    std::unique_ptr<Impl> m_impl;
};

}  // namespace oomlab
