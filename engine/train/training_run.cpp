#include "train/training_run.h"

#include <torch/nn/functional/loss.h>

#include <numeric>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "torch_utils/torch_compat.h"
#include "train/optimizer_factory.h"

namespace oomlab::train {
namespace {

// The loss became NaN or infinite: further steps only spread it through the weights.
class Diverged : public Error {
public:
    Diverged(std::int64_t step, const std::string& message) : Error(message), m_step(step) {}
    std::int64_t step() const { return m_step; }

private:
    std::int64_t m_step;
};

constexpr std::int64_t kPhaseSampledSteps = 20;  // every phase of the first steps ...
constexpr std::int64_t kPhaseSampleEvery = 50;   // ... then of every 50th

MetricRow memory_row(std::int64_t step, std::string_view phase, double wall_ms,
                     const memory::MemorySample& memory) {
    MetricRow row;
    row.step = step;
    row.phase = phase;
    row.wall_ms = wall_ms;
    row.allocated_bytes = memory.allocated;
    row.reserved_bytes = memory.reserved;
    row.peak_bytes = memory.step_peak;
    row.device_used_bytes = memory.device_used;
    row.device_total_bytes = memory.device_total;
    row.alloc_retries = memory.alloc_retries;
    row.oom_count = memory.oom_count;
    return row;
}

std::int64_t batch_bytes(const Batch& batch) {
    return batch.ids.nbytes() + batch.mask.nbytes() + batch.labels.nbytes();
}

}  // namespace

TrainingRun::TrainingRun(const PreparedExperiment& experiment, TrainObserver& observer,
                         const std::atomic<bool>& cancel, bool worst_case_trial)
    : m_experiment(experiment),
      m_config(experiment.config),
      m_observer(observer),
      m_cancel(cancel),
      m_start(std::chrono::steady_clock::now()),
      m_memory(experiment.device, experiment.config.memory.cap_bytes()),
      m_metrics(observer),
      m_batch_size(experiment.config.train.batch_size),
      m_accumulation(experiment.config.train.accumulation),
      m_total_steps(experiment.info.total_steps),
      m_loss_id(memory::module_id("loss")),
      m_optimizer_id(memory::module_id("optimizer")),
      m_worst_case_trial(worst_case_trial) {}

TrainingRun::~TrainingRun() = default;

double TrainingRun::elapsed_seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

std::string TrainingRun::divergence_message(std::int64_t step) const {
    std::string message = "the loss became NaN or infinite at step " + std::to_string(step) +
                          ": training diverged. Lower the learning rate (train.lr=" +
                          get_config_value(m_config, "train.lr") + ")";
    if (m_config.memory.precision == DType::Fp16) {
        message += ", or train in bf16 or fp32 (fp16 overflows without headroom)";
    }
    return message + "; the steps before are saved";
}

void TrainingRun::check_cancel() const {
    if (m_cancel.load(std::memory_order_relaxed)) {
        throw Cancelled();
    }
}

RunOutcome TrainingRun::execute() {
    RunOutcome outcome;
    try {
        if (!m_config.debug.memory_snapshot.empty()) {
            m_history = std::make_unique<memory::MemoryHistory>(m_experiment.device);
        }
        torch::manual_seed(m_config.train.seed);
        const memory::MemorySample empty = m_memory.sample();
        add_stage(stage::kEmpty, empty.allocated, empty.device_used);
        enter_phase("setup", memory::AllocationTag::Setup);
        if (m_experiment.device.is_cuda()) {
            // The first tensor on the device creates its context: memory no tensor holds.
            torch::empty({1}, torch::TensorOptions().device(m_experiment.device));
            const memory::MemorySample context = m_memory.sample();
            add_stage(stage::kDeviceContext, context.allocated, context.device_used);
        }
        m_model = model::make_classifier(m_config, m_experiment.initial_embeddings,
                                         m_experiment.num_classes);
        m_model->to(m_experiment.device);
        if (m_config.embeddings.placement == EmbeddingPlacement::Cpu) {
            // The table stays in host memory; each batch copies only the rows it looks up.
            m_model->embeddings()->to(torch::kCPU);
        }
        for (const auto& parameter : m_model->parameters()) {
            if (parameter.requires_grad()) {
                m_trainable.push_back(parameter);
            }
        }
        m_updated = m_trainable;
        if (m_experiment.group) {
            start_data_parallel();
        }
        m_optimizer = make_optimizer(m_config.train, m_updated);
        attribute_parameters();
        const memory::MemorySample weights = m_memory.sample();
        add_stage(stage::kWeights, weights.allocated, weights.device_used);
        if (m_config.memory.precision == DType::Fp16) {
            m_scaler.emplace(m_experiment.device);
        }
        if (m_config.data.pin_memory && !pinned()) {
            m_observer.on_event({0, std::string(event_kind::kNote),
                                 "data.pin_memory has no effect on the CPU: pinned "
                                 "buffers speed up copies to a CUDA device"});
        }
        if (m_config.data.loading == DataLoading::Eager) {
            enter_phase("data", memory::AllocationTag::Data);
            m_resident = std::make_shared<const ResidentDataset>(make_resident_dataset(
                m_experiment.train_examples, m_config.train.max_len, m_experiment.device));
            const memory::MemorySample data = m_memory.sample();
            add_stage(stage::kData, data.allocated, data.device_used);
        }
        m_worst_case_trial ? train_worst_case() : train_epochs();
        finish_data_parallel();
        outcome.status = RunStatus::Completed;
    } catch (const Diverged& diverged) {
        outcome.status = RunStatus::Failed;
        outcome.error = diverged.what();
    } catch (const Cancelled&) {
        outcome.status = RunStatus::Cancelled;
        outcome.error = "stopped by the user at step " + std::to_string(m_step);
    } catch (const OutOfMemory& error) {
        outcome.status = RunStatus::Oom;
        outcome.error = error.what();
    } catch (const c10::Error& error) {
        outcome.status = compat::is_out_of_memory(error) ? RunStatus::Oom : RunStatus::Failed;
        outcome.error = error.what_without_backtrace();
        if (outcome.status == RunStatus::Oom) {
            outcome.error = "out of memory at step " + std::to_string(m_step + 1) + " during " +
                            std::string(m_phase) + ": " + outcome.error;
            record_oom(outcome.error);
        }
    } catch (const std::exception& error) {
        outcome.status = RunStatus::Failed;
        outcome.error = compat::message_of(error);
    }
    m_batches.reset();  // stop a streaming producer before the buffers go
    m_leaked_loss = torch::Tensor();
    memory::set_current_tag(memory::AllocationTag::Untagged);
    if (m_scaler && m_scaler->skipped_steps() > 0) {
        m_observer.on_event(
            {m_step, std::string(event_kind::kNote),
             "fp16 loss scaling skipped " + std::to_string(m_scaler->skipped_steps()) +
                 " optimizer step(s) whose gradients overflowed; final scale " +
                 std::to_string(static_cast<std::int64_t>(m_scaler->current_scale()))});
    }
    write_snapshot();
    m_metrics.maybe_flush(/*force=*/true);
    if (const auto step = m_metrics.diverged_at()) {
        // Found by a flush inside the loop (the error is set), or by this last one.
        if (outcome.status == RunStatus::Completed) {
            outcome.status = RunStatus::Failed;
            outcome.error = divergence_message(*step);
        }
        m_observer.on_event({*step, std::string(event_kind::kDiverged), outcome.error});
    }
    outcome.steps = m_step;
    outcome.final_train_loss = m_metrics.recent_loss();
    outcome.val_accuracy = m_val_accuracy;
    outcome.breakdown = measure_breakdown();
    outcome.peak_bytes = m_memory.run_peak();
    outcome.wall_seconds = elapsed_seconds();
    outcome.batch_size = m_batch_size;
    outcome.accumulation = m_accumulation;
    outcome.by_module = measure_by_module();
    outcome.module_samples = std::move(m_module_samples);
    if (m_step >= 2 && m_last_step) {
        add_stage(stage::kSteadyState, m_last_step->step_peak, m_last_step->device_used);
    }
    outcome.staircase = std::move(m_staircase);
    outcome.fragmentation = m_fragmentation;
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
            } catch (const OutOfMemoryOnRank& error) {
                recover_from_oom(error.what());
            } catch (const c10::Error& error) {
                // Several ranks recover only together, from an OOM they agreed on.
                if (m_parallel || !compat::is_out_of_memory(error) ||
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
    // More of the same batches are planned than trained so that, as in a run, the batch
    // source holds as many ahead as it can while the second step trains.
    constexpr int kSteps = 2;
    m_epoch = 1;
    m_plan.assign(kSteps * m_accumulation + kStreamingBatchesAhead + 1, longest);
    m_cursor = 0;
    m_batches.reset();
    try {
        for (int step = 0; step < kSteps; ++step) {
            optimizer_step();
        }
        m_batches.reset();  // the batches planned beyond the trial
    } catch (const OutOfMemoryOnRank& error) {
        recover_from_oom(error.what());  // a trial stops at an OOM: ends it on every rank
    }
    evaluate();
}

void TrainingRun::start_epoch(int epoch) {
    m_plan = plan_batches(m_experiment.train_examples, m_batch_size, m_config.train.padding,
                          m_config.train.seed, epoch);
    if (m_parallel) {
        m_plan = shard_plan(std::move(m_plan), m_batch_size, m_parallel->rank(),
                            m_parallel->world_size());
    }
    m_cursor = 0;
    m_batches.reset();
}

bool TrainingRun::optimizer_step() {
    if (!m_batches) {
        std::vector<std::vector<std::int64_t>> rest(m_plan.begin() + m_cursor, m_plan.end());
        m_batches =
            m_resident ? make_resident_batch_source(m_resident, m_experiment.train_examples,
                                                    std::move(rest), m_config.train.padding,
                                                    m_config.train.max_len)
                       : make_streaming_batch_source(m_experiment.train_examples, std::move(rest),
                                                     m_config.train.padding, m_config.train.max_len,
                                                     m_experiment.device, pinned(),
                                                     /*full_at_each_batch=*/m_worst_case_trial);
    }
    m_memory.begin_step();
    m_model->train();
    torch::Tensor step_loss;
    std::int64_t samples = 0;
    const int micro_batches = m_parallel ? micro_batches_together(step_loss, samples)
                                         : this->micro_batches(step_loss, samples);
    if (micro_batches == 0) {
        return false;
    }
    enter_phase(phase::kOptimizer, memory::AllocationTag::Optimizer);
    {
        const memory::ModuleScope in_optimizer(m_optimizer_id);
        if (m_parallel) {
            m_parallel->before_step();
        }
        step_optimizer();
        if (m_parallel) {
            m_parallel->after_step();
        }
    }
    retag_optimizer_state();
    sample_phase(phase::kOptimizer);
    if (m_config.memory.empty_cache == EmptyCache::Step) {
        memory::release_cached_memory(m_experiment.device);
    }
    m_cursor += micro_batches;
    ++m_step;
    // A short final step averaged over fewer micro-batches than the loss was divided by.
    end_step(step_loss * (double(m_accumulation) / micro_batches), samples);
    return true;
}

int TrainingRun::micro_batches(torch::Tensor& step_loss, std::int64_t& samples) {
    int micro_batches = 0;
    for (; micro_batches < m_accumulation; ++micro_batches) {
        check_cancel();
        enter_phase("data", memory::AllocationTag::Data);
        std::optional<Batch> batch = m_batches->next();
        if (!batch) {
            break;
        }
        m_largest_batch_bytes = std::max(m_largest_batch_bytes, batch_bytes(*batch));
        sample_phase(phase::kBatch);
        enter_phase(phase::kForward, memory::AllocationTag::Forward);
        torch::Tensor loss;
        {
            const auto autocast = autocast_scope();
            const torch::Tensor logits = m_model->forward(batch->ids, batch->mask);
            loss = model::attributed(m_loss_id, [&] {
                return torch::nn::functional::cross_entropy(logits, batch->labels) / m_accumulation;
            });
        }
        sample_phase(phase::kForward);
        enter_phase(phase::kBackward, memory::AllocationTag::Backward);
        {
            // Backward starts in the loss; hooks on each module's output take it from there.
            const memory::ModuleScope in_loss(m_loss_id);
            // The leak needs the graph kept: summing losses with their graphs makes the next
            // backward through the sum fail unless it retains graphs, the "fix" people reach
            // for.
            (m_scaler ? m_scaler->scale(loss) : loss)
                .backward({}, /*retain_graph=*/m_config.debug.keep_loss_graph);
        }
        if (m_parallel) {
            m_parallel->after_backward();
        }
        retag_gradients();
        sample_phase(phase::kBackward);
        step_loss = step_loss.defined() ? step_loss + loss.detach() : loss.detach();
        if (m_config.debug.keep_loss_graph) {
            // Summing the loss tensor itself keeps every step's graph, and so its saved
            // activations, alive.
            m_leaked_loss = m_leaked_loss.defined() ? m_leaked_loss + loss : loss;
        }
        samples += batch->size();
    }
    return micro_batches;
}

void TrainingRun::step_optimizer() {
    if (!m_scaler) {
        m_optimizer->step();
    } else if (!m_scaler->step(*m_optimizer, m_updated) && m_scaler->skipped_steps() <= 3) {
        // Early overflows are how the scale finds its level; report the first few only.
        m_observer.on_event(
            {m_step + 1, std::string(event_kind::kNote),
             "fp16 gradients overflowed: optimizer step skipped, loss scale now " +
                 std::to_string(static_cast<std::int64_t>(m_scaler->current_scale()))});
    }
    // Drop the gradients (set to none, as PyTorch 2 does) rather than zeroing them in place.
    for (auto& parameter : m_model->parameters()) {
        parameter.mutable_grad() = torch::Tensor();
    }
}

void TrainingRun::enter_phase(std::string_view phase, memory::AllocationTag tag) {
    m_phase = phase;
    memory::set_current_tag(tag);
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

void TrainingRun::sample_phase(std::string_view phase) {
    if (m_step >= kPhaseSampledSteps && (m_step + 1) % kPhaseSampleEvery != 0) {
        return;
    }
    record_memory_row(m_step + 1, phase, m_memory.sample());
    sample_modules(phase);
}

void TrainingRun::record_memory_row(std::int64_t step, std::string_view phase,
                                    const memory::MemorySample& memory) {
    m_metrics.add(memory_row(step, phase, elapsed_seconds() * 1000.0, memory));
}

void TrainingRun::end_step(const torch::Tensor& step_loss, std::int64_t samples) {
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - m_last_step_end).count();
    m_last_step_end = now;

    const memory::MemorySample memory = m_memory.sample();
    if (memory.step_peak >= m_at_peak.step_peak) {
        m_at_peak = memory;
    }
    if (m_step == 1) {
        // Gradients are gone by now; the state the first update created stays.
        add_stage(stage::kOptimizerState, memory.allocated, memory.device_used);
        add_stage(stage::kFirstPeak, memory.step_peak, memory.device_used);
    }
    m_last_step = memory;
    MetricRow row = memory_row(m_step, phase::kStep, elapsed_seconds() * 1000.0, memory);
    if (m_step > 1 && seconds > 0) {
        row.samples_per_s = static_cast<double>(samples) / seconds;
    }
    m_metrics.add(std::move(row), step_loss);
    m_metrics.maybe_flush();
    if (const auto step = m_metrics.diverged_at()) {
        throw Diverged(*step, divergence_message(*step));
    }

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

}  // namespace oomlab::train
