// ZeRO-2 on one rank: gradients reduced in buckets while backward runs, as DDP's reducer does,
// so that only this rank's range of the sums and the buckets still filling are ever alive.
// Buckets are reduced in their own order, whichever fills first, so every rank makes the same
// collectives in the same order; a rank that leaves a step early makes the rest with zeros.
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <utility>

#include "data_parallel.h"
#include "oomlab/common/errors.h"
#include "oomlab/measure/tracking_allocator.h"

namespace oomlab::train {

// Runs after autograd accumulated a parameter's gradient, as DDP's reducer hooks in.
class DataParallel::RangeHook final : public torch::autograd::FunctionPostHook {
public:
    RangeHook(DataParallel& owner, std::size_t index) : m_owner(owner), m_index(index) {}
    torch::autograd::variable_list operator()(
        const torch::autograd::variable_list& outputs,
        const torch::autograd::variable_list& /*inputs*/) override {
        m_owner.on_gradient(m_index);
        return outputs;
    }

private:
    DataParallel& m_owner;
    std::size_t m_index;
};

void DataParallel::install_gradient_hooks() {
    m_zero2.pending.resize(m_buckets.members.size());
    m_zero2.arrived.resize(m_buckets.members.size(), 0);
    for (std::size_t i = 0; i < m_parameters.size(); ++i) {
        auto accumulator = torch::autograd::impl::grad_accumulator(m_parameters[i]);
        accumulator->add_post_hook(std::make_unique<RangeHook>(*this, i));
        m_accumulators.push_back(std::move(accumulator));
    }
}

void DataParallel::on_gradient(std::size_t index) {
    torch::NoGradGuard no_grad;
    // Buckets that filled at the last gradient are reduced now: autograd held that gradient
    // until its hook returned, so reducing there would have kept it beside its copy.
    reduce_full_buckets();
    torch::Tensor& parameter = m_parameters[index];
    const std::size_t bucket = m_buckets.bucket_of[index];
    torch::Tensor& pending = m_zero2.pending[bucket];
    if (m_buckets.members[bucket].size() == 1) {
        pending = parameter.grad().view(-1);  // alone: reduced in place, no copy
    } else {
        if (!pending.defined()) {
            pending = torch::empty({m_buckets.elements[bucket]}, parameter.options());
            memory::retag_tensor(pending, memory::AllocationTag::Gradients, m_range_owner);
        }
        pending.narrow(0, m_buckets.offset_in_bucket[index], parameter.numel())
            .copy_(parameter.grad().view(-1));
    }
    parameter.mutable_grad() = torch::Tensor();  // it waits in its bucket, never twice
    ++m_zero2.arrived[bucket];
    part_gradient_arrived(index);
}

void DataParallel::reduce_full_buckets() {
    while (m_zero2.next_bucket < m_buckets.members.size() &&
           m_zero2.arrived[m_zero2.next_bucket] == m_buckets.members[m_zero2.next_bucket].size()) {
        reduce_bucket(m_zero2.next_bucket++);
    }
}

void DataParallel::reduce_bucket(std::size_t bucket) {
    torch::Tensor& pending = m_zero2.pending[bucket];
    sum_in_step(pending, "the gradient all-reduce");
    ++m_zero2.reductions;
    for (const std::size_t i : m_buckets.members[bucket]) {
        add_to_range(i, pending.narrow(0, m_buckets.offset_in_bucket[i], m_parameters[i].numel()));
    }
    pending = torch::Tensor();
    m_zero2.arrived[bucket] = 0;
}

void DataParallel::add_to_range(std::size_t index, const torch::Tensor& summed) {
    if (!m_zero2.range_gradient.defined()) {
        // At the step's first sum, not before: the later it comes, the fewer saved tensors of
        // backward are still alive beside it.
        m_zero2.range_gradient = torch::zeros({m_layout.end - m_layout.begin}, summed.options());
        memory::retag_tensor(m_zero2.range_gradient, memory::AllocationTag::Gradients,
                             m_range_owner);
    }
    for (const FlatLayout::Piece& piece : m_layout.pieces) {
        if (piece.parameter == index) {
            m_zero2.range_gradient.narrow(0, piece.shard_offset, piece.length)
                .add_(summed.narrow(0, piece.offset, piece.length));
        }
    }
}

void DataParallel::after_backward() {
    if (!shards_gradients()) {
        return;
    }
    torch::NoGradGuard no_grad;
    reduce_full_buckets();  // the last ones, with every gradient of backward released
    if (m_zero2.next_bucket != m_buckets.members.size()) {
        // The ranks' reductions would no longer pair up: stop before they mismatch.
        std::size_t missing = 0;
        for (std::size_t b = m_zero2.next_bucket; b < m_buckets.members.size(); ++b) {
            missing += m_buckets.members[b].size() - m_zero2.arrived[b];
        }
        throw Error("distributed.shard=gradients: " + std::to_string(missing) + " of " +
                    std::to_string(m_parameters.size()) +
                    " trainable parameters got no gradient in this micro-batch; ZeRO-2 here "
                    "needs every one in every micro-batch (use distributed.shard=optimizer)");
    }
    m_zero2.next_bucket = 0;
    micro_batch_completed();
}

void DataParallel::leave_step(int micro_batches) {
    if (!shards_gradients()) {
        return;
    }
    torch::NoGradGuard no_grad;
    // What the step held goes first: the zeros below must not run out of memory again.
    for (std::size_t b = 0; b < m_buckets.members.size(); ++b) {
        m_zero2.pending[b] = torch::Tensor();
        m_zero2.arrived[b] = 0;
    }
    m_zero2.range_gradient = torch::Tensor();
    for (torch::Tensor& parameter : m_parameters) {
        parameter.mutable_grad() = torch::Tensor();
    }
    if (shards_parameters()) {
        make_the_rest_of_the_step(micro_batches);
        m_zero2.next_bucket = 0;
        m_zero2.reductions = 0;
        return;
    }
    const auto buckets = static_cast<std::int64_t>(m_buckets.members.size());
    const std::int64_t total = micro_batches * buckets;
    if (m_zero2.reductions < total) {
        const torch::Tensor zeros =
            torch::zeros({*std::max_element(m_buckets.elements.begin(), m_buckets.elements.end())},
                         m_parameters.front().options());
        for (std::int64_t made = m_zero2.reductions; made < total; ++made) {
            torch::Tensor part = zeros.narrow(0, 0, m_buckets.elements[made % buckets]);
            m_group.all_reduce_sum(part, "the gradient all-reduce (leaving the step)");
        }
    }
    m_zero2.next_bucket = 0;
    m_zero2.reductions = 0;
}

}  // namespace oomlab::train
