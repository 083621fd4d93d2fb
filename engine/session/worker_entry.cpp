// One rank of a job handed to worker processes: the run or the search, reported back.
#include "oomlab/session/worker_entry.h"

#include <chrono>
#include <iostream>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/launch/exit_code.h"
#include "oomlab/launch/worker_jobs.h"
#include "oomlab/launch/worker_report.h"
#include "oomlab/session/batch_size_search.h"
#include "oomlab/session/run_session.h"

namespace oomlab {
namespace {

// Tells the launcher which run to follow, once rank 0 has created it, and asks for the pause
// after each step the launcher writes (the workbench's training pace): every rank alike, so
// none waits for the others in a collective.
class WorkerListener final : public RunListener {
public:
    WorkerListener(int rank, std::string folder) : m_rank(rank), m_folder(std::move(folder)) {}
    void on_run_created(std::int64_t run_id, const ExperimentInfo& /*info*/) override {
        if (m_rank == 0) {
            report_run_id(run_id);
        }
    }
    int step_pause_ms() const override {
        const auto now = std::chrono::steady_clock::now();
        if (now >= m_next_read) {  // a pace changes by hand: a few reads a second suffice
            m_pause_ms = read_step_pause_ms(m_folder);
            m_next_read = now + kReadInterval;
        }
        return m_pause_ms;
    }

private:
    static constexpr auto kReadInterval = std::chrono::milliseconds(200);
    int m_rank;
    std::string m_folder;
    mutable int m_pause_ms = 0;
    mutable std::chrono::steady_clock::time_point m_next_read{};
};

int record_run(const std::string& folder, const WorkerTask& task, const ExperimentConfig& config,
               const std::optional<Rendezvous>& rendezvous, const std::atomic<bool>& stop) {
    const int rank = rendezvous ? rendezvous->rank : 0;
    RunStore store = RunStore::open(task.db_path);
    WorkerListener listener(rank, folder);
    const RunResult result =
        run_and_record(config, task.run_name, store, listener, stop, rendezvous);
    const ExitCode exit_code = exit_code_of(result.outcome.status);
    if (exit_code != kExitOk && !result.outcome.error.empty()) {
        std::cerr << "error: rank " << rank << ": " << result.outcome.error << '\n';
    }
    return exit_code;
}

int search_batch_size(const ExperimentConfig& config, const std::optional<Rendezvous>& rendezvous) {
    BatchSizeSearch so_far;  // the launcher shows the trials as they come
    const BatchSizeSearch search = find_batch_size(
        config,
        [&](const BatchTrial& trial) {
            so_far.trials.push_back(trial);
            report_batch_search(so_far, /*done=*/false);
        },
        rendezvous);
    report_batch_search(search, /*done=*/true);
    return search.batch_size > 0 ? kExitOk : kExitOutOfMemory;
}

}  // namespace

int run_worker_task(const std::string& folder, const std::atomic<bool>& stop) {
    try {
        const WorkerTask task = read_worker_task(folder);
        const ExperimentConfig config = load_config_file(task.config_file);
        validate_config(config);
        const std::optional<Rendezvous> rendezvous = rendezvous_from_environment();
        return task.kind == WorkerTask::Kind::Run
                   ? record_run(folder, task, config, rendezvous, stop)
                   : search_batch_size(config, rendezvous);
    } catch (const BadInput& error) {
        report_bad_input(error);  // with its keys, for the launcher's form
        std::cerr << "error: " << error.what() << '\n';
        return kExitBadInput;
    }
}

}  // namespace oomlab
