// A training run's validation pass, over this rank's share of the batches when data parallel.
#include <torch/nn/functional/loss.h>

#include <cstdio>

#include "torch_utils/torch_compat.h"
#include "train/training_run.h"

namespace oomlab::train {

void TrainingRun::evaluate() {
    const EncodedExamples& examples = m_experiment.valid_examples;
    if (examples.size() == 0) {
        return;
    }
    enter_phase(phase::kEval, memory::AllocationTag::Eval);
    m_model->eval();
    std::optional<torch::NoGradGuard> no_grad;
    if (m_config.eval.no_grad) {
        no_grad.emplace();
    }
    auto plan = plan_batches(examples, m_batch_size, m_config.train.padding, m_config.train.seed,
                             /*epoch=*/0);
    if (m_parallel) {
        // Each rank evaluates every n-th batch; the sums are combined below.
        std::vector<std::vector<std::int64_t>> mine;
        for (std::size_t i = m_parallel->rank(); i < plan.size(); i += m_parallel->world_size()) {
            mine.push_back(std::move(plan[i]));
        }
        plan = std::move(mine);
    }
    auto batches =
        make_streaming_batch_source(examples, plan, m_config.train.padding, m_config.train.max_len,
                                    m_experiment.device, pinned());
    torch::Tensor loss_sum = torch::zeros({}, torch::kDouble);
    torch::Tensor correct = torch::zeros({}, torch::kLong);
    // Without no_grad every batch's graph stays alive until the sums are dropped: the mistake
    // eval.no_grad=false demonstrates.
    std::vector<torch::Tensor> kept_graphs;
    // A rank whose share runs out of memory still meets the others where the sums are
    // combined, so that every rank ends out of memory together instead of waiting there.
    std::optional<std::string> out_of_memory;
    try {
        while (std::optional<Batch> batch = batches->next()) {
            if (!m_parallel) {
                check_cancel();  // several ranks stop together, at a step
            }
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
    } catch (const c10::Error& error) {
        if (!m_parallel || !compat::is_out_of_memory(error)) {
            throw;
        }
        out_of_memory = error.what_without_backtrace();
        batches.reset();
        kept_graphs.clear();
    }
    if (m_parallel) {
        evaluation_together(out_of_memory);
    }
    sample_phase(phase::kEval);
    m_memory.sample();  // the evaluation's peak counts even when its phase is not recorded
    kept_graphs.clear();
    if (m_config.memory.empty_cache == EmptyCache::Eval) {
        memory::release_cached_memory(m_experiment.device);
    }
    const double count = static_cast<double>(examples.size());
    if (m_parallel) {
        torch::Tensor sums = torch::stack({loss_sum, correct.to(torch::kDouble)});
        m_parallel->sum(sums);
        loss_sum = sums[0];
        correct = sums[1].to(torch::kLong);
    }
    MetricRow row;
    row.step = m_step;
    row.phase = phase::kEval;
    row.wall_ms = elapsed_seconds() * 1000.0;
    row.loss = loss_sum.item<double>() / count;
    row.accuracy = static_cast<double>(correct.item<std::int64_t>()) / count;
    m_val_accuracy = row.accuracy;
    m_metrics.add(row);
    m_metrics.maybe_flush(/*force=*/true);
    m_last_step_end = std::chrono::steady_clock::now();  // a step's throughput excludes eval
    char message[96];
    std::snprintf(message, sizeof message, "validation loss %.4f, accuracy %.2f%%", *row.loss,
                  *row.accuracy * 100.0);
    m_observer.on_event({m_step, std::string(event_kind::kEval), message});
}

}  // namespace oomlab::train
