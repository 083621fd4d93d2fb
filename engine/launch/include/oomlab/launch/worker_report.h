// What the worker processes of a data-parallel run tell the program that started them, beside
// their exit codes: the id of the run rank 0 created (so the launcher follows that run and no
// other that happens to be written to the same database), a batch-size search's trials and
// answer, and a refused config's message with the keys it is about (so a form can mark them). As
// torchrun's error file, the launcher names a folder in the environment; a worker started without
// it writes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/common/errors.h"
#include "oomlab/run/batch_search.h"

namespace oomlab {

inline constexpr const char* kWorkerReportVariable = "OOMLAB_WORKER_REPORT";

// Worker side; each does nothing without the variable, and a report that cannot be written
// is a warning on standard error (the run itself goes on).
void report_run_id(std::int64_t run_id);
// Rank 0 of a find-batch-size: its trials so far, then (`done`) the whole search.
void report_batch_search(const BatchSizeSearch& search, bool done);
void report_bad_input(const BadInput& error);  // as this process's rank (RANK)

// Launcher side: reads what the workers wrote into `folder`.
class WorkerReports {
public:
    explicit WorkerReports(std::string folder) : m_folder(std::move(folder)) {}

    // The run rank 0 created, once it has.
    std::optional<std::int64_t> run_id() const;
    // The batch-size search rank 0 reported: its trials so far; `done` once it has its answer.
    struct BatchSearch {
        BatchSizeSearch search;
        bool done = false;
    };
    std::optional<BatchSearch> batch_search() const;
    // Each rank's refusal, in rank order, for ranks 0..world_size-1.
    std::vector<BadInput> bad_inputs(int world_size) const;

private:
    std::string m_folder;
};

}  // namespace oomlab
