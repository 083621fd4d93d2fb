#include "data_parallel.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "oomlab/common/errors.h"

namespace oomlab::train {
namespace {

torch::Tensor flat(const torch::Tensor& tensor) {
    return tensor.view(-1);
}

// Gradient buckets in the order backward produces gradients (the last parameters first), each
// at most `limit` bytes unless one parameter alone is larger; a bucket holds one device and
// dtype, as one collective needs.
std::vector<std::vector<std::size_t>> make_buckets(const std::vector<torch::Tensor>& parameters,
                                                   std::int64_t limit) {
    std::vector<std::vector<std::size_t>> buckets;
    std::int64_t bytes = 0;
    for (std::size_t i = parameters.size(); i-- > 0;) {
        const torch::Tensor& parameter = parameters[i];
        const auto size = static_cast<std::int64_t>(parameter.nbytes());
        const bool fits = !buckets.empty() && bytes + size <= limit &&
                          parameters[buckets.back().front()].device() == parameter.device() &&
                          parameters[buckets.back().front()].dtype() == parameter.dtype();
        if (!fits) {
            buckets.emplace_back();
            bytes = 0;
        }
        buckets.back().push_back(i);
        bytes += size;
    }
    return buckets;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> FlatLayout::range_of(std::int64_t owner,
                                                           std::int64_t world) const {
    const std::int64_t share = (total + world - 1) / world;
    const std::int64_t first = std::min(total, share * owner);
    return {first, std::min(total, first + share)};
}

std::vector<FlatLayout::Piece> FlatLayout::pieces_in(const std::vector<std::size_t>& parameters,
                                                     std::int64_t range_begin,
                                                     std::int64_t range_end) const {
    std::vector<Piece> found;
    for (const std::size_t i : parameters) {
        const std::int64_t first = std::max(range_begin, starts[i]);
        const std::int64_t last = std::min(range_end, starts[i] + sizes[i]);
        if (first < last) {
            found.push_back({i, first - starts[i], last - first, first - range_begin});
        }
    }
    return found;
}

std::vector<std::size_t> FlatLayout::every_parameter() const {
    std::vector<std::size_t> all(starts.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        all[i] = i;
    }
    return all;
}

DataParallel::DataParallel(distributed::ProcessGroup& group, ShardMode shard,
                           std::vector<torch::Tensor> trainable, std::int64_t bucket_bytes,
                           memory::ModuleId range_owner)
    : m_group(group),
      m_shard(shard),
      m_range_owner(range_owner),
      m_parameters(std::move(trainable)) {
    for (const torch::Tensor& parameter : m_parameters) {
        m_layout.starts.push_back(m_layout.total);
        m_layout.sizes.push_back(parameter.numel());
        m_layout.total += parameter.numel();
    }
    m_buckets.members = make_buckets(m_parameters, bucket_bytes);
    m_buckets.bucket_of.resize(m_parameters.size());
    m_buckets.offset_in_bucket.resize(m_parameters.size());
    for (std::size_t b = 0; b < m_buckets.members.size(); ++b) {
        std::int64_t elements = 0;
        for (const std::size_t i : m_buckets.members[b]) {
            m_buckets.bucket_of[i] = b;
            m_buckets.offset_in_bucket[i] = elements;
            elements += m_parameters[i].numel();
        }
        m_buckets.elements.push_back(elements);
    }
    if (m_shard == ShardMode::None) {
        return;
    }
    std::tie(m_layout.begin, m_layout.end) = m_layout.range_of(rank(), world_size());
    m_layout.pieces = m_layout.pieces_in(m_layout.every_parameter(), m_layout.begin, m_layout.end);
    for (const FlatLayout::Piece& piece : m_layout.pieces) {
        // A view of the parameter's own storage: updating it updates the model.
        torch::Tensor view =
            flat(m_parameters[piece.parameter].detach()).narrow(0, piece.offset, piece.length);
        view.requires_grad_(true);
        m_views.push_back(view);
    }
    if (shards_gradients()) {
        install_gradient_hooks();
    }
}

const std::vector<torch::Tensor>& DataParallel::optimizer_parameters() const {
    return m_shard == ShardMode::None ? m_parameters : m_views;
}

std::vector<torch::Tensor> DataParallel::optimizer_tensors_of(
    const torch::Tensor& parameter) const {
    if (m_shard == ShardMode::None) {
        return {parameter};
    }
    std::vector<torch::Tensor> views;
    for (std::size_t i = 0; i < m_layout.pieces.size(); ++i) {
        if (m_parameters[m_layout.pieces[i].parameter].is_same(parameter)) {
            views.push_back(m_views[i]);
        }
    }
    return views;
}

void DataParallel::share_initial_parameters() {
    torch::NoGradGuard no_grad;
    for (torch::Tensor& parameter : m_parameters) {
        torch::Tensor data = parameter.detach();
        m_group.broadcast(data, 0, "sharing the initial parameters");
    }
}

void DataParallel::reduce_buckets() {
    torch::NoGradGuard no_grad;
    for (std::size_t b = 0; b < m_buckets.members.size(); ++b) {
        const std::vector<std::size_t>& bucket = m_buckets.members[b];
        if (bucket.size() == 1 && m_parameters[bucket.front()].grad().defined()) {
            torch::Tensor gradient = m_parameters[bucket.front()].mutable_grad();
            m_group.all_reduce_sum(gradient, "the gradient all-reduce");  // alone: in place
            continue;
        }
        torch::Tensor buffer =
            torch::empty({m_buckets.elements[b]}, m_parameters[bucket.front()].options());
        std::int64_t offset = 0;
        for (const std::size_t i : bucket) {
            const torch::Tensor& gradient = m_parameters[i].grad();
            torch::Tensor slot = buffer.narrow(0, offset, m_parameters[i].numel());
            // A parameter this rank's batch did not reach still takes part, with zeros.
            gradient.defined() ? slot.copy_(flat(gradient)) : slot.zero_();
            offset += m_parameters[i].numel();
        }
        m_group.all_reduce_sum(buffer, "the gradient all-reduce");
        offset = 0;
        for (const std::size_t i : bucket) {
            torch::Tensor& parameter = m_parameters[i];
            const torch::Tensor summed = buffer.narrow(0, offset, parameter.numel());
            offset += parameter.numel();
            if (parameter.grad().defined()) {
                flat(parameter.mutable_grad()).copy_(summed);
            } else {
                parameter.mutable_grad() = summed.clone().view_as(parameter);
            }
        }
    }
}

void DataParallel::before_step() {
    torch::NoGradGuard no_grad;
    const double world = world_size();
    if (shards_gradients()) {
        m_zero2.range_gradient.div_(world);
        for (std::size_t i = 0; i < m_layout.pieces.size(); ++i) {
            m_views[i].mutable_grad() = m_zero2.range_gradient.narrow(
                0, m_layout.pieces[i].shard_offset, m_layout.pieces[i].length);
        }
        return;
    }
    reduce_buckets();
    for (torch::Tensor& parameter : m_parameters) {
        if (parameter.grad().defined()) {
            parameter.mutable_grad().div_(world);
        }
    }
    for (std::size_t i = 0; i < m_layout.pieces.size(); ++i) {
        // ZeRO-1 keeps every gradient; the optimizer reads this rank's range of them.
        const FlatLayout::Piece& piece = m_layout.pieces[i];
        m_views[i].mutable_grad() =
            flat(m_parameters[piece.parameter].grad()).narrow(0, piece.offset, piece.length);
    }
}

void DataParallel::after_step() {
    for (torch::Tensor& view : m_views) {
        view.mutable_grad() = torch::Tensor();
    }
    m_zero2.range_gradient = torch::Tensor();
    m_zero2.reductions = 0;
    m_zero3.made.clear();
    m_zero3.made_at_micro_batch = 0;
    // ZeRO-3's next forward gathers the updated ranges itself.
    if (m_shard == ShardMode::None || m_shard == ShardMode::Parameters) {
        return;
    }
    torch::NoGradGuard no_grad;
    // Each rank's range, from its owner, one bucket of parameters at a time.
    const std::vector<std::size_t> all = m_layout.every_parameter();
    for (std::int64_t owner = 0; owner < world_size(); ++owner) {
        // Named, not a structured binding: C++17 lets no lambda capture one (clang refuses).
        const std::pair<std::int64_t, std::int64_t> bounds = m_layout.range_of(owner, world_size());
        const std::int64_t begin = bounds.first;
        const std::int64_t end = bounds.second;
        if (begin == end) {
            continue;
        }
        torch::Tensor range = torch::empty({end - begin}, m_parameters.front().options());
        const auto each_piece = [&](auto visit) {
            for (const FlatLayout::Piece& piece : m_layout.pieces_in(all, begin, end)) {
                visit(flat(m_parameters[piece.parameter].detach())
                          .narrow(0, piece.offset, piece.length),
                      range.narrow(0, piece.shard_offset, piece.length));
            }
        };
        if (owner == rank()) {
            each_piece([](const torch::Tensor& mine, torch::Tensor slot) { slot.copy_(mine); });
        }
        m_group.broadcast(range, static_cast<int>(owner), "sharing the updated parameters");
        if (owner != rank()) {
            each_piece([](torch::Tensor mine, const torch::Tensor& slot) { mine.copy_(slot); });
        }
    }
}

int DataParallel::agree(int status) {
    torch::Tensor value = torch::full({1}, status, torch::kInt32);
    m_group.all_reduce_max(value, "agreeing on the step's outcome");
    return value.item<int>();
}

void DataParallel::sum(torch::Tensor& values) {
    m_group.all_reduce_sum(values, "combining the evaluation");
}

std::uint64_t DataParallel::check_identical_parameters() {
    gather_all();
    // FNV-1a over every byte: equal only when the parameters are bit for bit the same.
    std::uint64_t hash = 1469598103934665603ULL;
    for (const torch::Tensor& parameter : m_parameters) {
        const torch::Tensor host = parameter.detach().to(torch::kCPU).contiguous();
        const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
        for (std::size_t i = 0; i < host.nbytes(); ++i) {
            hash = (hash ^ bytes[i]) * 1099511628211ULL;
        }
    }
    // The two 32-bit halves of the hash, each as a non-negative int64, compared through max
    // and -max (every bit counts: a shift of 33 would drop bit 32).
    torch::Tensor halves = torch::tensor(
        {static_cast<std::int64_t>(hash >> 32), static_cast<std::int64_t>(hash & 0xffffffffULL)});
    torch::Tensor highest = halves.clone();
    torch::Tensor lowest = -halves;
    m_group.all_reduce_max(highest, "comparing the parameters");
    m_group.all_reduce_max(lowest, "comparing the parameters");
    if (!torch::equal(highest, -lowest)) {
        throw Error(
            "the ranks ended with different parameters: data-parallel training lost "
            "its synchronization (a bug; please report it with the run's config)");
    }
    return hash;
}

}  // namespace oomlab::train
