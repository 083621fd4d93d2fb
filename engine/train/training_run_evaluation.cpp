// A training run's validation pass, over this rank's share of the batches when data parallel.
#include <torch/nn/functional/loss.h>

#include <cstdio>

#include "oomlab/torch_utils/torch_compat.h"
#include "training_run.h"

namespace oomlab::train {

// Sums of the loss and of the right answers over this rank's share of the batches; the
// error, where the share ran out of memory on a rank of several.
struct EvaluationShare {
    torch::Tensor loss_sum = torch::zeros({}, torch::kDouble);
    torch::Tensor correct = torch::zeros({}, torch::kLong);
    std::optional<std::string> out_of_memory;
};

EvaluationShare TrainingRun::evaluate_share() {
    const EncodedExamples& examples = m_experiment.valid_examples;
    const TrainConfig& train = config().train;
    DataParallel* parallel = m_trained.parallel.get();
    BatchPlan plan = plan_batches(examples.size(), lengths_of(examples), m_schedule.batch_size(),
                                  train.padding, train.seed, /*epoch=*/0);
    if (parallel) {
        // Each rank evaluates every n-th batch; the sums are combined by the caller.
        BatchPlan mine;
        for (std::size_t i = parallel->rank(); i < plan.size(); i += parallel->world_size()) {
            mine.push_back(std::move(plan[i]));
        }
        plan = std::move(mine);
    }
    auto batches = make_streaming_batch_source(examples, plan, train.padding, train.max_len,
                                               m_experiment.device, pinned());
    EvaluationShare share;
    // Without no_grad every batch's graph stays alive until the sums are dropped: the mistake
    // eval.no_grad=false demonstrates.
    std::vector<torch::Tensor> kept_graphs;
    try {
        while (std::optional<Batch> batch = batches->next()) {
            if (!parallel) {
                check_cancel();  // several ranks stop together, at a step
            }
            const auto autocast = autocast_scope();
            const torch::Tensor logits = m_trained.model->forward(batch->ids, batch->mask);
            const torch::Tensor loss = torch::nn::functional::cross_entropy(
                logits, batch->labels,
                torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
            if (!config().eval.no_grad) {
                kept_graphs.push_back(loss);
            }
            share.loss_sum += loss.detach().to(torch::kCPU, torch::kDouble);
            share.correct += logits.argmax(1).eq(batch->labels).sum().to(torch::kCPU);
        }
    } catch (const c10::Error& error) {
        // A rank whose share runs out of memory still meets the others where the sums are
        // combined, so that every rank ends out of memory together instead of waiting there.
        if (!parallel || !compat::is_out_of_memory(error)) {
            throw;
        }
        share.out_of_memory = error.what_without_backtrace();
        batches.reset();
        kept_graphs.clear();
    }
    sample_phase(phase::kEval);
    m_memory.sample();  // the evaluation's peak counts even when its phase is not recorded
    return share;
}

void TrainingRun::evaluate() {
    const EncodedExamples& examples = m_experiment.valid_examples;
    if (examples.size() == 0) {
        return;
    }
    enter_phase(phase::kEval, memory::AllocationTag::Eval);
    m_trained.model->eval();
    std::optional<torch::NoGradGuard> no_grad;
    if (config().eval.no_grad) {
        no_grad.emplace();
    }
    if (m_trained.parallel) {
        // ZeRO-3: the ranks may evaluate different numbers of batches, so every part is
        // gathered once for all of them, not around each forward.
        m_trained.parallel->gather_all();
    }
    EvaluationShare share = evaluate_share();
    if (m_trained.parallel) {
        m_trained.parallel->release_all();
        evaluation_together(share.out_of_memory);
    }
    if (config().memory.empty_cache == EmptyCache::Eval) {
        memory::release_cached_memory(m_experiment.device);
    }
    if (m_trained.parallel) {
        torch::Tensor sums = torch::stack({share.loss_sum, share.correct.to(torch::kDouble)});
        m_trained.parallel->sum(sums);
        share.loss_sum = sums[0];
        share.correct = sums[1].to(torch::kLong);
    }
    const double count = static_cast<double>(examples.size());
    MetricRow row;
    row.step = m_position.step;
    row.phase = phase::kEval;
    row.wall_ms = m_clock.elapsed_ms();
    row.loss = share.loss_sum.item<double>() / count;
    row.accuracy = static_cast<double>(share.correct.item<std::int64_t>()) / count;
    m_val_accuracy = row.accuracy;
    m_metrics.add(row);
    m_metrics.maybe_flush(/*force=*/true);
    m_clock.restart_lap();  // a step's throughput excludes the evaluation
    char message[96];
    std::snprintf(message, sizeof message, "validation loss %.4f, accuracy %.2f%%", *row.loss,
                  *row.accuracy * 100.0);
    m_observer.on_event({m_position.step, std::string(event_kind::kEval), message});
}

}  // namespace oomlab::train
