// An experiment, prepared and trained. Torch-free: the GUI and the CLI include this header;
// the model, tensors and device live in the training engine (liboomlab_train), which is
// loaded the first time an experiment is prepared or the devices are listed, so commands
// that do not train never load LibTorch.
//
//   std::unique_ptr<Experiment> experiment = Experiment::prepare(config);  // data, vectors
//   RunOutcome outcome = experiment->train(observer, cancel);
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"
#include "oomlab/launch/rendezvous.h"
#include "oomlab/prepare/data_profile.h"
#include "oomlab/run/run_record.h"

namespace oomlab::prepare {
struct TokenizedData;
}

namespace oomlab {

// What preparation found: shown before training and stored with the run.
struct ExperimentInfo {
    std::string device;      // "cpu", "cuda:0 (NVIDIA H100 ...)"
    std::string dataset;     // description of the training data
    std::string embeddings;  // "GloVe 6B.50d from FILE" or "synthetic 6B.50d ..."
    std::int64_t train_examples = 0;
    std::int64_t valid_examples = 0;
    std::vector<std::string> label_names;
    std::int64_t vocab_size = 0;  // rows of the embedding table
    int embedding_dim = 0;
    std::int64_t vectors_found = 0;  // dataset words that have a pre-trained vector
    std::int64_t dataset_words = 0;  // distinct words in the training data
    std::int64_t parameters = 0;     // every parameter, the table included
    std::int64_t trainable_parameters = 0;
    std::int64_t steps_per_epoch = 0;  // optimizer steps
    std::int64_t total_steps = 0;
    DataProfile profile;  // the data's shape as the estimator reads it (no second reading)
};

struct TrainProgress {
    std::int64_t step = 0;  // optimizer steps done
    std::int64_t total_steps = 0;
    int epoch = 0;  // 1-based
    double elapsed_seconds = 0;
    double eta_seconds = -1;  // -1 until it can be estimated
};

// Receives a run's results while it trains, on the training thread. Metrics arrive in
// batches (every ~100 ms or N steps), never one call per step.
class TrainObserver {
public:
    virtual ~TrainObserver() = default;
    virtual void on_metrics(const std::vector<MetricRow>& /*rows*/) {}
    virtual void on_event(const EventRow& /*event*/) {}
    virtual void on_progress(const TrainProgress& /*progress*/) {}
    // Whether the front end pauses between steps (paced, or held by Pause): then each step's
    // rows are sent as it ends, not gathered for a tenth of a second, so what is drawn while
    // it waits is the step it waits after.
    virtual bool pauses_between_steps() const { return false; }
};

// The run rank 0 created, as the other ranks of a data-parallel run join it: its number in
// rank 0's database, its identity (unique across databases) and the settings it trains.
struct RunTicket {
    std::int64_t run_id = 0;
    std::string uid;
    std::string config_json;
};

// The ticket as rank 0 publishes it in the rendezvous store (a line for the number, one for
// the identity, the config after them), and as the others read it back: Error for a value
// that is not one.
std::string run_ticket_text(const RunTicket& ticket);
RunTicket parse_run_ticket(const std::string& text);

struct PrepareOptions {
    std::function<void(const std::string& stage, double fraction)> progress;
    // Join a data-parallel run (every rank prepares the same experiment).
    std::optional<Rendezvous> rendezvous;
    // Set (SIGINT, SIGTERM): stop waiting for the other processes and throw Cancelled.
    const std::atomic<bool>* cancel = nullptr;
    // The dataset, read already: Experiment::prepare reads it before it loads the training
    // engine, which takes it from here.
    std::shared_ptr<const prepare::TokenizedData> data;
};

class Experiment {
public:
    // Validates the config, loads the dataset and the vectors, builds the vocabulary and the
    // model. Throws BadInput (naming the key or file) for anything the user must fix, and
    // Error when the training engine cannot be loaded.
    static std::unique_ptr<Experiment> prepare(const ExperimentConfig& config,
                                               const PrepareOptions& options = {});

    virtual ~Experiment();

    virtual const ExperimentConfig& config() const = 0;
    virtual const ExperimentInfo& info() const = 0;

    // This process's place in a data-parallel run (0 of 1 alone).
    virtual int rank() const = 0;
    virtual int world_size() const = 0;
    // Rank 0 passes the run it created; every rank gets rank 0's ticket back.
    virtual RunTicket share_run(const RunTicket& ticket) = 0;
    // Every rank says whether it refuses to join (why) or not; every rank gets the refusal
    // of the lowest rank that refused ("rank N: why"), or none when all joined.
    virtual std::optional<std::string> first_refusal(const std::optional<std::string>& mine) = 0;
    // Called by every rank once its rows are written, with what it has to tell rank 0 (how it
    // ended, when its database is not rank 0's); rank 0 returns, when all have been, the
    // others' reports by rank.
    virtual std::vector<std::string> wait_until_all_recorded(const std::string& report) = 0;

    // Trains to the end, to `cancel`, or to an out-of-memory. Never throws for those: the
    // outcome carries the status, the error and the figures measured until then.
    virtual RunOutcome train(TrainObserver& observer, const std::atomic<bool>& cancel) = 0;

    // A find-batch-size trial: two optimizer steps on the `batch_size` longest examples,
    // padded as the padding mode would, then the validation pass; nothing is recovered.
    virtual RunOutcome train_worst_case(int batch_size) = 0;
};

// The LibTorch version the engine was built with ("1.13.1"); known without loading it.
std::string torch_version();
// The CUDA version this build's LibTorch was built for ("13.0"); empty for a CPU-only LibTorch.
std::string torch_cuda_version();
// "LibTorch 2.11.0, CUDA 13.0" or "LibTorch 1.13.1, CPU only": what --version says.
std::string torch_build();

struct DeviceInfo {
    std::string name;  // "cpu", "cuda:0"
    std::string description;
    std::int64_t total_bytes = 0;  // 0 when unknown
};
// Loads the training engine.
std::vector<DeviceInfo> available_devices();

// This process, one rank of `rendezvous`, refuses its settings (`why`) before joining the
// group: the other ranks are told through the rendezvous's store, so they stop at once with
// that reason instead of waiting `timeout` for it. Experiment::prepare does this itself; a
// front end calls it for settings it refuses before preparing. Loads the training engine.
void refuse_to_join(const Rendezvous& rendezvous, const std::string& why,
                    std::chrono::seconds timeout);

}  // namespace oomlab
