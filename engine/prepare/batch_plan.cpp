#include "oomlab/prepare/batch_plan.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace oomlab::prepare {
namespace {

constexpr std::int64_t kBucketWindowBatches = 50;
// run_batches plans at most this many examples (all epochs together, about a second's work);
// a run longer than that is assumed to meet its worst batch.
constexpr std::int64_t kMostExamplesPlanned = 20'000'000;

}  // namespace

BatchPlan plan_batches(std::int64_t count, const ExampleLength& length, int batch_size,
                       Padding padding, std::uint64_t seed, int epoch) {
    std::vector<std::int64_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 random(seed * 1000003ULL + static_cast<std::uint64_t>(epoch));
    std::shuffle(order.begin(), order.end(), random);

    if (padding == Padding::Bucket) {
        const std::int64_t window = kBucketWindowBatches * batch_size;
        for (std::int64_t start = 0; start < count; start += window) {
            const auto end = order.begin() + std::min<std::int64_t>(start + window, count);
            std::stable_sort(order.begin() + start, end,
                             [&](std::int64_t a, std::int64_t b) { return length(a) < length(b); });
        }
    }
    BatchPlan batches;
    for (std::size_t start = 0; start < order.size(); start += batch_size) {
        const std::size_t end = std::min(order.size(), start + batch_size);
        batches.emplace_back(order.begin() + start, order.begin() + end);
    }
    if (padding == Padding::Bucket) {
        std::shuffle(batches.begin(), batches.end(), random);
    }
    return batches;
}

BatchPlan shard_plan(BatchPlan plan, int batch_size, int rank, int world_size) {
    if (world_size <= 1) {
        return plan;
    }
    // The short batch: last, or anywhere once bucket batching has shuffled the batches.
    plan.erase(std::remove_if(plan.begin(), plan.end(),
                              [&](const std::vector<std::int64_t>& batch) {
                                  return batch.size() < static_cast<std::size_t>(batch_size);
                              }),
               plan.end());
    // plan_batches shuffles the order of the batches: taking every n-th keeps a mix of lengths
    // on each rank.
    const std::size_t per_rank = plan.size() / world_size;
    BatchPlan mine;
    for (std::size_t i = 0; i < per_rank; ++i) {
        mine.push_back(std::move(plan[i * world_size + rank]));
    }
    return mine;
}

std::int64_t padded_length(const ExampleLength& length, const std::vector<std::int64_t>& batch,
                           Padding padding, int max_len) {
    if (padding == Padding::Fixed) {
        return max_len;
    }
    std::int64_t longest = 1;
    for (std::int64_t index : batch) {
        longest = std::max(longest, length(index));
    }
    return longest;
}

RunBatches run_batches(const ExperimentConfig& config, const std::vector<int>& lengths,
                       int world_size) {
    const TrainConfig& train = config.train;
    RunBatches run;
    run.worst =
        train.padding == Padding::Fixed
            ? train.max_len
            : std::max(1, lengths.empty() ? 1 : *std::max_element(lengths.begin(), lengths.end()));
    if (train.padding == Padding::Fixed) {
        run.longest = run.worst;
        run.growth = {run.worst};
        return run;
    }
    const ExampleLength length = [&](std::int64_t i) { return lengths[i]; };
    const auto count = static_cast<std::int64_t>(lengths.size());
    std::int64_t steps_left = train.max_steps;
    for (int epoch = 1; train.max_steps > 0 ? steps_left > 0 : epoch <= train.epochs; ++epoch) {
        if (epoch * count > kMostExamplesPlanned) {
            run.longest = run.worst;
            run.growth.push_back(run.worst);
            break;
        }
        const BatchPlan plan = shard_plan(
            plan_batches(count, length, train.batch_size, train.padding, train.seed, epoch),
            train.batch_size, /*rank=*/0, world_size);
        std::size_t drawn = plan.size();
        if (train.max_steps > 0) {
            // An epoch's last step takes what is left, fewer than accumulation micro-batches.
            const auto steps_in_epoch = static_cast<std::int64_t>(
                (plan.size() + train.accumulation - 1) / train.accumulation);
            const std::int64_t steps = std::min(steps_left, steps_in_epoch);
            drawn = std::min(plan.size(), static_cast<std::size_t>(steps * train.accumulation));
            steps_left -= steps;
        }
        for (std::size_t i = 0; i < drawn; ++i) {
            const auto padded =
                static_cast<int>(padded_length(length, plan[i], train.padding, train.max_len));
            if (padded > run.longest || run.growth.empty()) {
                run.longest = std::max(run.longest, padded);
                run.growth.push_back(run.longest);
            }
        }
        if (plan.empty() || run.longest == run.worst) {
            break;  // nothing trains (too few examples for every rank), or no batch is longer
        }
    }
    return run;
}

}  // namespace oomlab::prepare
