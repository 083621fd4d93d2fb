#include "training_run.h"

#include <torch/nn/functional/loss.h>

#include <numeric>

#include "oomlab/common/errors.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/torch_utils/torch_compat.h"
#include "optimizer_factory.h"

namespace oomlab::train {
namespace {

// The loss became NaN or infinite: further steps only spread it through the weights.
class Diverged : public Error {
public:
    using Error::Error;
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

// The part of the run's time a phase of the loop counts for.
std::string_view part_of(std::string_view phase) {
    if (phase == phase::kOptimizer) {
        return part::kUpdate;
    }
    if (phase == phase::kEval) {
        return part::kEvaluation;
    }
    for (const std::string_view same :
         {part::kSetup, part::kData, part::kForward, part::kBackward}) {
        if (phase == same) {
            return same;
        }
    }
    return part::kSetup;
}

std::int64_t batch_bytes(const Batch& batch) {
    return batch.ids.nbytes() + batch.mask.nbytes() + batch.labels.nbytes();
}

}  // namespace

TrainingRun::TrainingRun(const PreparedExperiment& experiment, TrainObserver& observer,
                         const std::atomic<bool>& cancel, bool worst_case_trial)
    : m_experiment(experiment),
      m_observer(observer),
      m_cancel(cancel),
      m_memory(experiment.device, experiment.config.memory.cap_bytes(),
               experiment.config.memory.alloc_conf),
      m_metrics(observer),
      m_schedule(experiment),
      m_worst_case_trial(worst_case_trial) {}

TrainingRun::~TrainingRun() = default;

std::string TrainingRun::divergence_message(std::int64_t step) const {
    std::string message = "the loss became NaN or infinite at step " + std::to_string(step) +
                          ": training diverged. Lower the learning rate (train.lr=" +
                          get_config_value(config(), "train.lr") + ")";
    if (config().memory.precision == DType::Fp16) {
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
        set_up();
        m_worst_case_trial ? train_worst_case() : train_epochs();
        finish_data_parallel();
        outcome.status = RunStatus::Completed;
    } catch (const Diverged& diverged) {
        outcome.status = RunStatus::Failed;
        outcome.error = diverged.what();
    } catch (const Cancelled&) {
        outcome.status = RunStatus::Cancelled;
        outcome.error = "stopped by the user at step " + std::to_string(m_position.step);
    } catch (const OutOfMemory& error) {
        outcome.status = RunStatus::Oom;
        outcome.error = error.what();
    } catch (const c10::Error& error) {
        outcome.status = compat::is_out_of_memory(error) ? RunStatus::Oom : RunStatus::Failed;
        outcome.error = error.what_without_backtrace();
        if (outcome.status == RunStatus::Oom) {
            outcome.error = "out of memory at step " + std::to_string(m_position.step + 1) +
                            " during " + std::string(m_position.phase) + ": " + outcome.error;
            record_oom(outcome.error);
        }
    } catch (const std::exception& error) {
        outcome.status = RunStatus::Failed;
        outcome.error = compat::message_of(error);
    }
    finish(outcome);
    return outcome;
}

void TrainingRun::set_up() {
    if (!config().debug.memory_snapshot.empty()) {
        m_memory.start_history(m_experiment.device);
    }
    torch::manual_seed(config().train.seed);
    m_memory.add_stage(stage::kEmpty);
    enter_phase("setup", memory::AllocationTag::Setup);
    if (m_experiment.device.is_cuda()) {
        // The first tensor on the device creates its context: memory no tensor holds.
        torch::empty({1}, torch::TensorOptions().device(m_experiment.device));
        m_memory.add_stage(stage::kDeviceContext);
    }
    build_model();
    m_memory.add_stage(stage::kWeights);
    if (config().memory.precision == DType::Fp16) {
        m_trained.scaler.emplace(m_experiment.device);
    }
    if (config().data.pin_memory && !pinned()) {
        m_observer.on_event({0, std::string(event_kind::kNote),
                             "data.pin_memory has no effect on the CPU: pinned "
                             "buffers speed up copies to a CUDA device"});
    }
    if (config().data.loading == DataLoading::Eager) {
        enter_phase("data", memory::AllocationTag::Data);
        m_resident = std::make_shared<const ResidentDataset>(make_resident_dataset(
            m_experiment.train_examples, config().train.max_len, m_experiment.device));
        m_memory.add_stage(stage::kData);
    }
}

void TrainingRun::build_model() {
    m_trained.model =
        model::make_classifier(config(), m_experiment.initial_embeddings, m_experiment.num_classes);
    if (config().embeddings.placement == EmbeddingPlacement::Cpu) {
        // The table stays in host memory; each batch copies only the rows it looks up. It never
        // visits the device: a table placed there because the device cannot hold it would not
        // get there, and one that did would leave a segment of its size in the cache.
        const auto* table = m_trained.model->embeddings().ptr().get();
        for (const auto& child : m_trained.model->children()) {
            if (child.get() != table) {
                child->to(m_experiment.device);
            }
        }
        for (auto& parameter : m_trained.model->parameters(/*recurse=*/false)) {
            parameter.set_data(parameter.to(m_experiment.device));
        }
    } else {
        m_trained.model->to(m_experiment.device);
    }
    for (const auto& parameter : m_trained.model->parameters()) {
        if (parameter.requires_grad()) {
            m_trained.trainable.push_back(parameter);
        }
    }
    m_trained.updated = m_trained.trainable;
    if (m_experiment.group) {
        start_data_parallel();
    }
    m_trained.optimizer = make_optimizer(config().train, m_trained.updated);
    m_attribution.mark_parameters();
}

void TrainingRun::finish(RunOutcome& outcome) {
    m_times.switch_to(part::kFinish);
    m_batches.reset();  // stop a streaming producer before the buffers go
    m_leaked_loss = torch::Tensor();
    memory::set_current_tag(memory::AllocationTag::Untagged);
    const std::int64_t step = m_position.step;
    if (m_trained.scaler && m_trained.scaler->skipped_steps() > 0) {
        m_observer.on_event(
            {step, std::string(event_kind::kNote),
             "fp16 loss scaling skipped " + std::to_string(m_trained.scaler->skipped_steps()) +
                 " optimizer step(s) whose gradients overflowed; final scale " +
                 std::to_string(static_cast<std::int64_t>(m_trained.scaler->current_scale()))});
    }
    m_memory.write_snapshot(config(), m_observer, step);
    m_metrics.maybe_flush(/*force=*/true);
    if (const auto diverged_at = m_metrics.diverged_at()) {
        // Found by a flush inside the loop (the error is set), or by this last one.
        if (outcome.status == RunStatus::Completed) {
            outcome.status = RunStatus::Failed;
            outcome.error = divergence_message(*diverged_at);
        }
        m_observer.on_event({*diverged_at, std::string(event_kind::kDiverged), outcome.error});
    }
    const bool sparse_table = config().embeddings.sparse_grad;
    outcome.steps = step;
    outcome.final_train_loss = m_metrics.recent_loss();
    outcome.val_accuracy = m_val_accuracy;
    outcome.breakdown =
        m_memory.breakdown(m_trained, sparse_table, m_resident ? m_resident->bytes() : 0);
    outcome.peak_bytes = m_memory.run_peak();
    outcome.wall_seconds = m_clock.elapsed_seconds();
    outcome.batch_size = m_schedule.batch_size();
    outcome.accumulation = m_schedule.accumulation();
    outcome.by_module = m_attribution.by_module(m_memory.modules_at_peak(), sparse_table);
    outcome.module_samples = m_attribution.take_samples();
    outcome.staircase = m_memory.take_staircase(step);
    outcome.fragmentation = m_memory.fragmentation();
    outcome.time_by_part = m_times.totals();
}

void TrainingRun::train_epochs() {
    const TrainConfig& train = config().train;
    for (int epoch = 1; epoch <= train.epochs || train.max_steps > 0; ++epoch) {
        start_epoch(epoch);
        while (true) {
            try {
                if (!optimizer_step()) {
                    break;
                }
            } catch (const OutOfMemoryOnRank& error) {
                recover_from_oom(error.what());
            } catch (const c10::Error& error) {
                // Several ranks recover only together, from an OOM they agreed on.
                if (m_trained.parallel || !compat::is_out_of_memory(error) ||
                    !recover_from_oom(error.what_without_backtrace())) {
                    throw;
                }
            }
            const std::int64_t step = m_position.step;
            if (train.max_steps > 0 && step >= train.max_steps) {
                evaluate();
                return;
            }
            if (config().eval.every > 0 && step % config().eval.every == 0) {
                evaluate();
            }
        }
        if (config().eval.every == 0 || m_position.step % config().eval.every != 0) {
            evaluate();
        }
        if (train.max_steps == 0 && epoch == train.epochs) {
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
    longest.resize(std::min<std::size_t>(longest.size(), m_schedule.batch_size()));
    // Two optimizer steps: the first creates the optimizer state, the second runs with it.
    // More of the same batches are planned than trained so that, as in a run, the batch
    // source holds as many ahead as it can while the second step trains.
    constexpr int kSteps = 2;
    m_position.epoch = 1;
    m_schedule.plan_repeated(longest,
                             kSteps * m_schedule.accumulation() + kStreamingBatchesAhead + 1);
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
    m_position.epoch = epoch;
    const DataParallel* parallel = m_trained.parallel.get();
    m_schedule.plan_epoch(epoch, parallel ? parallel->rank() : 0,
                          parallel ? parallel->world_size() : 1);
    m_batches.reset();
}

std::unique_ptr<BatchSource> TrainingRun::make_batch_source() const {
    const TrainConfig& train = config().train;
    if (m_resident) {
        return make_resident_batch_source(m_resident, m_experiment.train_examples,
                                          m_schedule.rest(), train.padding, train.max_len);
    }
    return make_streaming_batch_source(m_experiment.train_examples, m_schedule.rest(),
                                       train.padding, train.max_len, m_experiment.device, pinned(),
                                       /*full_at_each_batch=*/m_worst_case_trial);
}

bool TrainingRun::optimizer_step() {
    if (!m_batches) {
        m_batches = make_batch_source();
    }
    {
        const PhaseTimes::Interlude measuring(m_times, part::kMeasurement);
        m_memory.begin_step();
    }
    m_trained.model->train();
    torch::Tensor step_loss;
    std::int64_t samples = 0;
    const int micro_batches = m_trained.parallel ? micro_batches_together(step_loss, samples)
                                                 : this->micro_batches(step_loss, samples);
    if (micro_batches == 0) {
        return false;
    }
    enter_phase(phase::kOptimizer, memory::AllocationTag::Optimizer);
    {
        const memory::ModuleScope in_optimizer(m_attribution.optimizer_id());
        if (m_trained.parallel) {
            m_trained.parallel->before_step();
        }
        step_optimizer();
        if (m_trained.parallel) {
            m_trained.parallel->after_step();
        }
    }
    m_attribution.mark_optimizer_state();
    sample_phase(phase::kOptimizer);
    if (config().memory.empty_cache == EmptyCache::Step) {
        memory::release_cached_memory(m_experiment.device);
    }
    m_schedule.advance(micro_batches);
    ++m_position.step;
    // A short final step averaged over fewer micro-batches than the loss was divided by.
    end_step(step_loss * (double(m_schedule.accumulation()) / micro_batches), samples);
    return true;
}

int TrainingRun::micro_batches(torch::Tensor& step_loss, std::int64_t& samples) {
    int micro_batches = 0;
    for (; micro_batches < m_schedule.accumulation(); ++micro_batches) {
        check_cancel();
        enter_phase("data", memory::AllocationTag::Data);
        std::optional<Batch> batch = m_batches->next();
        if (!batch) {
            break;
        }
        m_memory.note_batch(batch_bytes(*batch));
        sample_phase(phase::kBatch);
        const torch::Tensor loss = train_micro_batch(*batch);
        step_loss = step_loss.defined() ? step_loss + loss.detach() : loss.detach();
        if (config().debug.keep_loss_graph) {
            // Summing the loss tensor itself keeps every step's graph, and so its saved
            // activations, alive.
            m_leaked_loss = m_leaked_loss.defined() ? m_leaked_loss + loss : loss;
        }
        samples += batch->size();
    }
    return micro_batches;
}

torch::Tensor TrainingRun::train_micro_batch(const Batch& batch) {
    enter_phase(phase::kForward, memory::AllocationTag::Forward);
    torch::Tensor loss;
    {
        const auto autocast = autocast_scope();
        const torch::Tensor logits = m_trained.model->forward(batch.ids, batch.mask);
        loss = model::attributed(m_attribution.loss_id(), [&] {
            return torch::nn::functional::cross_entropy(logits, batch.labels) /
                   m_schedule.accumulation();
        });
    }
    sample_phase(phase::kForward);
    enter_phase(phase::kBackward, memory::AllocationTag::Backward);
    {
        // Backward starts in the loss; hooks on each module's output take it from there.
        const memory::ModuleScope in_loss(m_attribution.loss_id());
        // The leak needs the graph kept: summing losses with their graphs makes the next
        // backward through the sum fail unless it retains graphs, the "fix" people reach for.
        (m_trained.scaler ? m_trained.scaler->scale(loss) : loss)
            .backward({}, /*retain_graph=*/config().debug.keep_loss_graph);
    }
    if (m_trained.parallel) {
        m_trained.parallel->after_backward();
    }
    m_attribution.mark_gradients();
    sample_phase(phase::kBackward);
    return loss;
}

void TrainingRun::step_optimizer() {
    GradScaler* scaler = m_trained.scaler ? &*m_trained.scaler : nullptr;
    if (!scaler) {
        m_trained.optimizer->step();
    } else if (!scaler->step(*m_trained.optimizer, m_trained.updated) &&
               scaler->skipped_steps() <= 3) {
        // Early overflows are how the scale finds its level; report the first few only.
        m_observer.on_event(
            {m_position.step + 1, std::string(event_kind::kNote),
             "fp16 gradients overflowed: optimizer step skipped, loss scale now " +
                 std::to_string(static_cast<std::int64_t>(scaler->current_scale()))});
    }
    m_trained.drop_gradients();
}

void TrainingRun::enter_phase(std::string_view phase, memory::AllocationTag tag) {
    m_times.switch_to(part_of(phase));
    m_position.phase = phase;
    memory::set_current_tag(tag);
}

bool TrainingRun::pinned() const {
    // Page-locked host buffers only exist for copies to a CUDA device.
    return config().data.pin_memory && m_experiment.device.is_cuda();
}

std::unique_ptr<compat::AutocastScope> TrainingRun::autocast_scope() const {
    const DType precision = config().memory.precision;
    return std::make_unique<compat::AutocastScope>(
        m_experiment.device.type(), precision != DType::Fp32,
        precision == DType::Bf16 ? at::kBFloat16 : at::kHalf);
}

void TrainingRun::sample_phase(std::string_view phase) {
    const std::int64_t step = m_position.step;
    if (step >= kPhaseSampledSteps && (step + 1) % kPhaseSampleEvery != 0) {
        return;
    }
    memory::MemorySample memory;
    {
        const PhaseTimes::Interlude measuring(m_times, part::kMeasurement);
        memory = m_memory.sample();
        if (const std::optional<memory::ModuleLedger> modules = m_memory.modules_now()) {
            m_attribution.sample(*modules, step + 1, phase);
        }
    }
    record_memory_row(step + 1, phase, memory);
}

void TrainingRun::record_memory_row(std::int64_t step, std::string_view phase,
                                    const memory::MemorySample& memory) {
    const PhaseTimes::Interlude recording(m_times, part::kRecording);
    m_metrics.add(memory_row(step, phase, m_clock.elapsed_ms(), memory));
}

void TrainingRun::end_step(const torch::Tensor& step_loss, std::int64_t samples) {
    const double seconds = m_clock.lap();
    const std::int64_t step = m_position.step;
    memory::MemorySample memory;
    {
        const PhaseTimes::Interlude measuring(m_times, part::kMeasurement);
        memory = m_memory.end_step(step);
    }
    // The rest keeps and sends what was measured (the loss read from its tensor among it).
    const PhaseTimes::Interlude recording(m_times, part::kRecording);
    MetricRow row = memory_row(step, phase::kStep, m_clock.elapsed_ms(), memory);
    if (step > 1 && seconds > 0) {
        row.samples_per_s = static_cast<double>(samples) / seconds;
    }
    m_metrics.add(std::move(row), step_loss);
    m_metrics.maybe_flush(/*force=*/m_observer.pauses_between_steps());
    if (const auto diverged_at = m_metrics.diverged_at()) {
        throw Diverged(divergence_message(*diverged_at));
    }

    TrainProgress progress;
    progress.step = step;
    progress.total_steps = m_schedule.total_steps();
    progress.epoch = m_position.epoch;
    progress.elapsed_seconds = m_clock.elapsed_seconds();
    if (step > 0 && progress.total_steps > 0) {
        progress.eta_seconds = progress.elapsed_seconds / step *
                               std::max<std::int64_t>(0, progress.total_steps - step);
    }
    m_observer.on_progress(progress);
}

}  // namespace oomlab::train
