#include "training_run.h"

#include <torch/nn/functional/loss.h>

#include <numeric>

#include "../train/torch_compat.h"
#include "oomlab/common/errors.h"
#include "optimizer_factory.h"

namespace oomlab::train {
namespace {

constexpr std::int64_t kPhaseSampledSteps = 20;  // every phase of the first steps ...
constexpr std::int64_t kPhaseSampleEvery = 50;   // ... then of every 50th
constexpr std::int64_t kBytesPerMiB = 1 << 20;

std::int64_t batch_bytes(const Batch& batch) {
    return batch.ids.nbytes() + batch.mask.nbytes() + batch.labels.nbytes();
}

// Splits the micro-batches from `first` on into batches of `size`, keeping their order.
std::vector<std::vector<std::int64_t>> rechunk(const std::vector<std::vector<std::int64_t>>& plan,
                                               std::size_t first, int size) {
    std::vector<std::int64_t> rest;
    for (std::size_t i = first; i < plan.size(); ++i) {
        rest.insert(rest.end(), plan[i].begin(), plan[i].end());
    }
    std::vector<std::vector<std::int64_t>> result;
    for (std::size_t start = 0; start < rest.size(); start += size) {
        result.emplace_back(rest.begin() + start,
                            rest.begin() + std::min(rest.size(), start + size));
    }
    return result;
}

}  // namespace

TrainingRun::TrainingRun(const Experiment::Impl& experiment, TrainObserver& observer,
                         const std::atomic<bool>& cancel, bool worst_case_trial)
    : m_experiment(experiment),
      m_config(experiment.config),
      m_observer(observer),
      m_cancel(cancel),
      m_start(std::chrono::steady_clock::now()),
      m_memory(experiment.config.memory.cap_mb * kBytesPerMiB),
      m_metrics(observer),
      m_batch_size(experiment.config.train.batch_size),
      m_accumulation(experiment.config.train.accumulation),
      m_total_steps(experiment.info.total_steps),
      m_worst_case_trial(worst_case_trial) {}

TrainingRun::~TrainingRun() = default;

double TrainingRun::elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

void TrainingRun::check_cancel() const {
    if (m_cancel.load(std::memory_order_relaxed)) {
        throw Cancelled();
    }
}

RunOutcome TrainingRun::execute() {
    RunOutcome outcome;
    try {
        torch::manual_seed(m_config.train.seed);
        m_phase = "setup";
        m_model = model::make_classifier(m_config, m_experiment.initial_embeddings,
                                         m_experiment.num_classes);
        m_model->to(m_experiment.device);
        std::vector<torch::Tensor> trainable;
        for (const auto& parameter : m_model->parameters()) {
            if (parameter.requires_grad()) {
                trainable.push_back(parameter);
            }
        }
        m_optimizer = make_optimizer(m_config.train, trainable);
        if (m_config.data.pin_memory && !pinned()) {
            m_observer.on_event({0, "note", "data.pin_memory has no effect on the CPU: pinned "
                                            "buffers speed up copies to a CUDA device"});
        }
        if (m_config.data.loading == DataLoading::Eager) {
            m_phase = "data";
            m_resident = std::make_shared<const ResidentDataset>(make_resident_dataset(
                m_experiment.train_examples, m_config.train.max_len, m_experiment.device));
        }
        m_worst_case_trial ? train_worst_case() : train_epochs();
        outcome.status = RunStatus::Completed;
    } catch (const Cancelled&) {
        outcome.status = RunStatus::Cancelled;
        outcome.error = "stopped by the user at step " + std::to_string(m_step);
    } catch (const OutOfMemory& error) {
        outcome.status = RunStatus::Oom;
        outcome.error = error.what();
        m_observer.on_event({m_step + 1, "oom", outcome.error});
    } catch (const c10::Error& error) {
        outcome.status = compat::is_out_of_memory(error) ? RunStatus::Oom : RunStatus::Failed;
        outcome.error = error.what_without_backtrace();
        if (outcome.status == RunStatus::Oom) {
            outcome.error = "out of memory at step " + std::to_string(m_step + 1) + " during " +
                            m_phase + ": " + outcome.error;
            m_observer.on_event({m_step + 1, "oom", outcome.error});
        }
    } catch (const std::exception& error) {
        outcome.status = RunStatus::Failed;
        outcome.error = error.what();
    }
    m_batches.reset();  // stop a streaming producer before the buffers go
    m_leaked_loss = torch::Tensor();
    m_metrics.maybe_flush(/*force=*/true);
    outcome.steps = m_step;
    outcome.final_train_loss = m_metrics.recent_loss();
    outcome.val_accuracy = m_val_accuracy;
    outcome.breakdown = measure_breakdown();
    outcome.peak_bytes = m_memory.run_peak();
    outcome.wall_seconds = elapsed_seconds();
    return outcome;
}

void TrainingRun::train_epochs() {
    for (m_epoch = 1; m_epoch <= m_config.train.epochs || m_config.train.max_steps > 0; ++m_epoch) {
        start_epoch(m_epoch);
        while (true) {
            try {
                if (!optimizer_step()) {
                    break;
                }
            } catch (const c10::Error& error) {
                if (!compat::is_out_of_memory(error) ||
                    !recover_from_oom(error.what_without_backtrace())) {
                    throw;
                }
            }
            if (m_config.train.max_steps > 0 && m_step >= m_config.train.max_steps) {
                evaluate();
                return;
            }
            if (m_config.eval.every > 0 && m_step % m_config.eval.every == 0) {
                evaluate();
            }
        }
        if (m_config.eval.every == 0 || m_step % m_config.eval.every != 0) {
            evaluate();
        }
        if (m_config.train.max_steps == 0 && m_epoch == m_config.train.epochs) {
            return;
        }
    }
}

void TrainingRun::train_worst_case() {
    const EncodedExamples& examples = m_experiment.train_examples;
    std::vector<std::int64_t> longest(examples.size());
    std::iota(longest.begin(), longest.end(), 0);
    std::stable_sort(longest.begin(), longest.end(), [&](std::int64_t a, std::int64_t b) {
        return examples.length(a) > examples.length(b);
    });
    longest.resize(std::min<std::size_t>(longest.size(), m_batch_size));
    // Two optimizer steps: the first creates the optimizer state, the second runs with it.
    m_epoch = 1;
    m_plan.assign(2 * m_accumulation, longest);
    m_cursor = 0;
    m_batches.reset();
    while (optimizer_step()) {
    }
    evaluate();
}

void TrainingRun::start_epoch(int epoch) {
    m_plan = plan_batches(m_experiment.train_examples, m_batch_size, m_config.train.padding,
                          m_config.train.seed, epoch);
    m_cursor = 0;
    m_batches.reset();
}

bool TrainingRun::optimizer_step() {
    if (!m_batches) {
        std::vector<std::vector<std::int64_t>> rest(m_plan.begin() + m_cursor, m_plan.end());
        m_batches = m_resident ? make_resident_batch_source(m_resident, m_experiment.train_examples,
                                                            std::move(rest),
                                                            m_config.train.padding,
                                                            m_config.train.max_len)
                               : make_streaming_batch_source(
                                     m_experiment.train_examples, std::move(rest),
                                     m_config.train.padding, m_config.train.max_len,
                                     m_experiment.device, pinned());
    }
    m_memory.begin_step();
    m_model->train();
    torch::Tensor step_loss;
    std::int64_t samples = 0;
    int micro_batches = 0;
    for (; micro_batches < m_accumulation; ++micro_batches) {
        check_cancel();
        m_phase = "data";
        std::optional<Batch> batch = m_batches->next();
        if (!batch) {
            break;
        }
        m_largest_batch_bytes = std::max(m_largest_batch_bytes, batch_bytes(*batch));
        sample_phase("batch");
        m_phase = "forward";
        torch::Tensor loss;
        {
            const auto autocast = autocast_scope();
            const torch::Tensor logits = m_model->forward(batch->ids, batch->mask);
            loss = torch::nn::functional::cross_entropy(logits, batch->labels) / m_accumulation;
        }
        sample_phase("forward");
        m_phase = "backward";
        // The leak needs the graph kept: summing losses with their graphs makes the next
        // backward through the sum fail unless it retains graphs, the "fix" people reach for.
        loss.backward({}, /*retain_graph=*/m_config.debug.keep_loss_graph);
        sample_phase("backward");
        step_loss = step_loss.defined() ? step_loss + loss.detach() : loss.detach();
        if (m_config.debug.keep_loss_graph) {
            // Summing the loss tensor itself keeps every step's graph, and so its saved
            // activations, alive.
            m_leaked_loss = m_leaked_loss.defined() ? m_leaked_loss + loss : loss;
        }
        samples += batch->size();
    }
    if (micro_batches == 0) {
        return false;
    }
    m_phase = "optimizer";
    m_optimizer->step();
    // Drop the gradients (set to none, as PyTorch 2 does) rather than zeroing them in place.
    for (auto& parameter : m_model->parameters()) {
        parameter.mutable_grad() = torch::Tensor();
    }
    sample_phase("optimizer");
    if (m_config.memory.empty_cache == EmptyCache::Step) {
        memory::release_cached_memory(m_experiment.device);
    }
    m_cursor += micro_batches;
    ++m_step;
    // A short final step averaged over fewer micro-batches than the loss was divided by.
    end_step(step_loss * (double(m_accumulation) / micro_batches), samples);
    return true;
}

bool TrainingRun::pinned() const {
    // Page-locked host buffers only exist for copies to a CUDA device.
    return m_config.data.pin_memory && m_experiment.device.is_cuda();
}

std::unique_ptr<compat::AutocastScope> TrainingRun::autocast_scope() const {
    const DType precision = m_config.memory.precision;
    return std::make_unique<compat::AutocastScope>(
        m_experiment.device.type(), precision != DType::Fp32,
        precision == DType::Bf16 ? at::kBFloat16 : at::kHalf);
}

void TrainingRun::sample_phase(const char* phase) {
    if (m_step >= kPhaseSampledSteps && (m_step + 1) % kPhaseSampleEvery != 0) {
        return;
    }
    const memory::MemorySample memory = m_memory.sample();
    MetricRow row;
    row.step = m_step + 1;
    row.phase = phase;
    row.wall_ms = elapsed_seconds() * 1000.0;
    row.allocated_bytes = memory.allocated;
    row.reserved_bytes = memory.reserved;
    row.peak_bytes = memory.step_peak;
    row.device_used_bytes = memory.device_used;
    m_metrics.add(std::move(row));
}

void TrainingRun::end_step(const torch::Tensor& step_loss, std::int64_t samples) {
    static thread_local auto last_step_end = std::chrono::steady_clock::now();
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - last_step_end).count();
    last_step_end = now;

    const memory::MemorySample memory = m_memory.sample();
    if (memory.step_peak >= m_at_peak.step_peak) {
        m_at_peak = memory;
    }
    MetricRow row;
    row.step = m_step;
    row.phase = "step";
    row.wall_ms = elapsed_seconds() * 1000.0;
    row.allocated_bytes = memory.allocated;
    row.reserved_bytes = memory.reserved;
    row.peak_bytes = memory.step_peak;
    row.device_used_bytes = memory.device_used;
    if (m_step > 1 && seconds > 0) {
        row.samples_per_s = static_cast<double>(samples) / seconds;
    }
    m_metrics.add(std::move(row), step_loss);
    m_metrics.maybe_flush();

    TrainProgress progress;
    progress.step = m_step;
    progress.total_steps = m_total_steps;
    progress.epoch = m_epoch;
    progress.elapsed_seconds = elapsed_seconds();
    if (m_step > 0 && m_total_steps > 0) {
        progress.eta_seconds =
            progress.elapsed_seconds / m_step * std::max<std::int64_t>(0, m_total_steps - m_step);
    }
    m_observer.on_progress(progress);
}

void TrainingRun::evaluate() {
    const EncodedExamples& examples = m_experiment.valid_examples;
    if (examples.size() == 0) {
        return;
    }
    m_phase = "eval";
    m_model->eval();
    std::optional<torch::NoGradGuard> no_grad;
    if (m_config.eval.no_grad) {
        no_grad.emplace();
    }
    const auto plan = plan_batches(examples, m_batch_size, m_config.train.padding,
                                   m_config.train.seed, /*epoch=*/0);
    auto batches = make_streaming_batch_source(examples, plan, m_config.train.padding,
                                               m_config.train.max_len, m_experiment.device,
                                               pinned());
    torch::Tensor loss_sum = torch::zeros({}, torch::kDouble);
    torch::Tensor correct = torch::zeros({}, torch::kLong);
    // Without no_grad every batch's graph stays alive until the sums are dropped: the mistake
    // eval.no_grad=false demonstrates.
    std::vector<torch::Tensor> kept_graphs;
    while (std::optional<Batch> batch = batches->next()) {
        check_cancel();
        const auto autocast = autocast_scope();
        const torch::Tensor logits = m_model->forward(batch->ids, batch->mask);
        const torch::Tensor loss = torch::nn::functional::cross_entropy(
            logits, batch->labels,
            torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
        if (!m_config.eval.no_grad) {
            kept_graphs.push_back(loss);
        }
        loss_sum += loss.detach().to(torch::kCPU, torch::kDouble);
        correct += logits.argmax(1).eq(batch->labels).sum().to(torch::kCPU);
    }
    sample_phase("eval");
    kept_graphs.clear();
    if (m_config.memory.empty_cache == EmptyCache::Eval) {
        memory::release_cached_memory(m_experiment.device);
    }
    const double count = static_cast<double>(examples.size());
    MetricRow row;
    row.step = m_step;
    row.phase = "eval";
    row.wall_ms = elapsed_seconds() * 1000.0;
    row.loss = loss_sum.item<double>() / count;
    row.accuracy = static_cast<double>(correct.item<std::int64_t>()) / count;
    m_val_accuracy = row.accuracy;
    m_metrics.add(row);
    m_metrics.maybe_flush(/*force=*/true);
    char message[96];
    std::snprintf(message, sizeof message, "validation loss %.4f, accuracy %.2f%%", *row.loss,
                  *row.accuracy * 100.0);
    m_observer.on_event({m_step, "eval", message});
}

bool TrainingRun::recover_from_oom(const std::string& message) {
    const OnOom policy = m_config.memory.on_oom;
    const std::string where = "out of memory at step " + std::to_string(m_step + 1) +
                              " during " + m_phase;
    // Release what the failed step held before deciding anything.
    m_batches.reset();
    m_leaked_loss = torch::Tensor();
    for (auto& parameter : m_model->parameters()) {
        parameter.mutable_grad() = torch::Tensor();
    }
    if (policy == OnOom::Stop || std::string(m_phase) == "eval") {
        throw OutOfMemory(where + ": " + message);
    }
    if (m_batch_size == 1) {
        throw OutOfMemory(where + " with a batch of 1, the smallest there is: " + message);
    }
    const int old_batch = m_batch_size;
    const int old_accumulation = m_accumulation;
    m_batch_size = std::max(1, m_batch_size / 2);
    if (policy == OnOom::Adapt) {
        m_accumulation *= 2;
    }
    m_plan = rechunk(m_plan, m_cursor, m_batch_size);
    m_cursor = 0;
    const std::string action =
        policy == OnOom::Adapt
            ? "micro-batch " + std::to_string(old_batch) + " -> " + std::to_string(m_batch_size) +
                  ", accumulation " + std::to_string(old_accumulation) + " -> " +
                  std::to_string(m_accumulation) + " (same effective batch)"
            : "batch " + std::to_string(old_batch) + " -> " + std::to_string(m_batch_size);
    m_observer.on_event({m_step + 1, "oom", where + ": " + message});
    m_observer.on_event({m_step + 1, policy == OnOom::Adapt ? "adapt" : "halve",
                         "retrying the step with " + action});
    const std::int64_t remaining_epochs = m_config.train.epochs - m_epoch;
    if (m_config.train.max_steps == 0) {
        m_total_steps = m_step +
                        static_cast<std::int64_t>((m_plan.size() + m_accumulation - 1) /
                                                  m_accumulation) +
                        remaining_epochs * steps_per_epoch(m_experiment.train_examples.size(),
                                                           m_batch_size, m_accumulation);
    }
    return true;
}

MemoryBreakdown TrainingRun::measure_breakdown() const {
    MemoryBreakdown breakdown;
    if (!m_model) {
        return breakdown;
    }
    const torch::Tensor& table = m_model->embeddings()->weight();
    for (const auto& parameter : m_model->parameters()) {
        const auto bytes = static_cast<std::int64_t>(parameter.nbytes());
        if (parameter.is_same(table)) {
            breakdown.embedding_table += bytes;
        } else {
            breakdown.parameters += bytes;
        }
        // Gradients exist during every step (dense unless the table's are sparse).
        if (parameter.requires_grad() && !(parameter.is_same(table) && m_config.embeddings.sparse_grad)) {
            breakdown.gradients += bytes;
        }
    }
    breakdown.optimizer_state = m_optimizer ? optimizer_state_bytes(*m_optimizer) : 0;
    breakdown.data = (m_resident ? m_resident->bytes() : 0) + m_largest_batch_bytes;
    const std::int64_t resident = breakdown.embedding_table + breakdown.parameters +
                                  breakdown.gradients + breakdown.optimizer_state + breakdown.data;
    breakdown.activations = std::max<std::int64_t>(0, m_memory.run_peak() - resident);
    // Cache and the rest of the device as seen at the end of the step that peaked.
    breakdown.allocator_cache = std::max<std::int64_t>(0, m_at_peak.reserved - m_at_peak.allocated);
    if (m_at_peak.device_used) {
        breakdown.other = std::max<std::int64_t>(0, *m_at_peak.device_used - m_at_peak.reserved);
    }
    return breakdown;
}

}  // namespace oomlab::train
