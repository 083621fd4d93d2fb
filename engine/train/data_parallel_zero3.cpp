// ZeRO-3 on one rank: between steps a rank keeps only its range of the flattened trainable
// parameters, in tensors of its own that its optimizer updates. Each part of the model
// gathers its parameters from their owners just before its forward, and again just before
// its backward where that reads them, and frees them once done: after its forward, and
// once backward has produced every gradient of the part (which ZeRO-2's hooks then sum).
//
// A freed parameter keeps its tensor, sizes and autograd identity; only its storage drops to
// zero bytes, as FSDP frees a flat parameter, so the tensors autograd saved of it see the
// gathered values again in backward. The values are written through variable_data(), which
// leaves the version counter autograd checks untouched.
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <string>
#include <utility>

#include "data_parallel.h"
#include "oomlab/common/errors.h"
#include "oomlab/measure/tracking_allocator.h"

namespace oomlab::train {
namespace {

// The storage holds `bytes` again (new, uninitialized) or, with 0, nothing.
void resize_storage(const c10::Storage& storage, std::size_t bytes) {
    c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
    impl->set_data_ptr_noswap(impl->allocator()->allocate(bytes));
    impl->set_nbytes(bytes);
}

}  // namespace

DataParallel::~DataParallel() {
    if (m_zero3.model) {
        m_zero3.model->set_part_hooks(nullptr);
    }
}

void DataParallel::shard_parameters(model::TextClassifier& model) {
    if (!shards_parameters()) {
        return;
    }
    torch::NoGradGuard no_grad;
    m_zero3.part_of.assign(m_parameters.size(), 0);
    for (const model::MemoryModule& module : model.memory_modules()) {
        Zero3Parts::Part part;
        part.module = &module;
        for (const torch::Tensor& parameter : module.parameters) {
            for (std::size_t i = 0; i < m_parameters.size(); ++i) {
                if (m_parameters[i].is_same(parameter)) {
                    part.parameters.push_back(i);
                    m_zero3.part_of[i] = m_zero3.parts.size();
                }
            }
        }
        if (part.parameters.empty()) {
            continue;  // nothing it learns is sharded (a frozen table, pooling)
        }
        const c10::ScalarType dtype = m_parameters[part.parameters.front()].scalar_type();
        for (const std::size_t i : part.parameters) {
            if (m_parameters[i].scalar_type() != dtype) {
                throw Error("distributed.shard=parameters: the part '" + module.name +
                            "' mixes parameter types; gathering it needs one");
            }
            const c10::Storage& storage = m_parameters[i].storage();
            const bool known =
                std::any_of(part.storages.begin(), part.storages.end(),
                            [&](const auto& entry) { return entry.first.is_alias_of(storage); });
            if (!known) {
                part.storages.emplace_back(storage, storage.nbytes());
            }
        }
        m_zero3.parts.push_back(std::move(part));
    }
    // The range, in tensors of its own: each piece an allocation of its parameter's part.
    for (std::size_t i = 0; i < m_views.size(); ++i) {
        const FlatLayout::Piece& piece = m_layout.pieces[i];
        torch::Tensor kept = m_views[i].detach().clone();
        kept.requires_grad_(true);
        memory::retag_tensor(kept, memory::AllocationTag::Setup,
                             m_zero3.parts[m_zero3.part_of[piece.parameter]].module->id);
        m_views[i] = kept;
    }
    for (Zero3Parts::Part& part : m_zero3.parts) {
        release(part);
    }
    m_zero3.model = &model;
    model.set_part_hooks(this);
}

std::int64_t DataParallel::kept_bytes(const torch::Tensor& parameter) const {
    const auto bytes = static_cast<std::int64_t>(parameter.nbytes());
    if (!shards_parameters() || !parameter.requires_grad()) {
        return bytes;
    }
    std::int64_t kept = 0;
    for (const torch::Tensor& view : optimizer_tensors_of(parameter)) {
        kept += static_cast<std::int64_t>(view.nbytes());
    }
    return kept;
}

Zero3Parts::Part* DataParallel::part_of(const model::MemoryModule& module) {
    for (Zero3Parts::Part& part : m_zero3.parts) {
        if (part.module == &module) {
            return &part;
        }
    }
    return nullptr;
}

void DataParallel::before_forward(const model::MemoryModule& module) {
    if (Zero3Parts::Part* part = part_of(module)) {
        gather(*part);
    }
}

void DataParallel::after_forward(const model::MemoryModule& module) {
    Zero3Parts::Part* part = part_of(module);
    if (part && !m_zero3.holding_all) {
        release(*part);
    }
}

void DataParallel::before_backward(const model::MemoryModule& module) {
    if (Zero3Parts::Part* part = part_of(module)) {
        gather(*part);
    }
}

void DataParallel::gather(Zero3Parts::Part& part) {
    if (part.gathered) {
        return;
    }
    torch::NoGradGuard no_grad;
    for (const auto& [storage, bytes] : part.storages) {
        resize_storage(storage, bytes);
    }
    part.gathered = true;
    // From each owner of some of the part's elements, one broadcast of them all.
    const torch::TensorOptions options = m_parameters[part.parameters.front()].options();
    for (std::int64_t owner = 0; owner < world_size(); ++owner) {
        const auto [begin, end] = m_layout.range_of(owner, world_size());
        const std::vector<FlatLayout::Piece> segments =
            m_layout.pieces_in(part.parameters, begin, end);
        std::int64_t elements = 0;
        for (const FlatLayout::Piece& segment : segments) {
            elements += segment.length;
        }
        if (elements == 0) {
            continue;
        }
        torch::Tensor buffer = torch::empty({elements}, options);
        if (owner == rank()) {
            std::int64_t offset = 0;
            for (const FlatLayout::Piece& segment : segments) {
                for (std::size_t v = 0; v < m_layout.pieces.size(); ++v) {
                    const FlatLayout::Piece& piece = m_layout.pieces[v];
                    if (piece.parameter == segment.parameter) {
                        buffer.narrow(0, offset, segment.length).copy_(m_views[v].detach());
                    }
                }
                offset += segment.length;
            }
        }
        broadcast_in_step(buffer, static_cast<int>(owner), "gathering the parameters");
        std::int64_t offset = 0;
        for (const FlatLayout::Piece& segment : segments) {
            m_parameters[segment.parameter]
                .variable_data()
                .view(-1)
                .narrow(0, segment.offset, segment.length)
                .copy_(buffer.narrow(0, offset, segment.length));
            offset += segment.length;
        }
    }
    for (const std::size_t i : part.parameters) {
        memory::retag_tensor(m_parameters[i], memory::AllocationTag::Setup, part.module->id);
    }
}

void DataParallel::release(Zero3Parts::Part& part) {
    if (!part.gathered) {
        return;
    }
    for (const auto& [storage, bytes] : part.storages) {
        resize_storage(storage, 0);
    }
    part.gathered = false;
}

void DataParallel::gather_all() {
    if (!shards_parameters()) {
        return;
    }
    m_zero3.holding_all = true;
    for (Zero3Parts::Part& part : m_zero3.parts) {
        gather(part);
    }
}

void DataParallel::release_all() {
    if (!shards_parameters()) {
        return;
    }
    m_zero3.holding_all = false;
    for (Zero3Parts::Part& part : m_zero3.parts) {
        release(part);
    }
}

void DataParallel::part_gradient_arrived(std::size_t index) {
    if (!shards_parameters()) {
        return;
    }
    Zero3Parts::Part& part = m_zero3.parts[m_zero3.part_of[index]];
    // Every gradient of the part exists: no node of its backward is left to read it.
    if (++part.gradients_arrived == part.parameters.size() && !m_zero3.holding_all) {
        release(part);
    }
}

void DataParallel::micro_batch_completed() {
    if (!shards_parameters()) {
        return;
    }
    for (Zero3Parts::Part& part : m_zero3.parts) {
        part.gradients_arrived = 0;
        if (!m_zero3.holding_all) {
            release(part);
        }
    }
    if (m_zero3.micro_batch.empty()) {
        m_zero3.micro_batch.assign(
            m_zero3.made.begin() + static_cast<std::ptrdiff_t>(m_zero3.made_at_micro_batch),
            m_zero3.made.end());
    }
    m_zero3.made_at_micro_batch = m_zero3.made.size();
}

void DataParallel::make_the_rest_of_the_step(int micro_batches) {
    for (Zero3Parts::Part& part : m_zero3.parts) {
        part.gradients_arrived = 0;
        release(part);
    }
    m_zero3.holding_all = false;
    const std::vector<Zero3Parts::Collective>& sequence = m_zero3.micro_batch;
    // Before any micro-batch completed the sequence is not known: when every rank left at
    // once (all out of memory in the first step) they meet in agree(); a rank that went on
    // waits in its next gather until distributed.timeout_s and says which.
    torch::NoGradGuard no_grad;
    const std::size_t total = static_cast<std::size_t>(micro_batches) * sequence.size();
    for (std::size_t made = m_zero3.made.size(); made < total; ++made) {
        const Zero3Parts::Collective& collective = sequence[made % sequence.size()];
        torch::Tensor zeros = torch::zeros({collective.elements},
                                           m_parameters.front().options().dtype(collective.dtype));
        if (collective.root >= 0) {
            m_group.broadcast(zeros, collective.root,
                              "gathering the parameters (leaving the step)");
        } else {
            m_group.all_reduce_sum(zeros, "the gradient all-reduce (leaving the step)");
        }
    }
    m_zero3.made.clear();
    m_zero3.made_at_micro_batch = 0;
}

void DataParallel::sum_in_step(torch::Tensor& tensor, const char* what) {
    m_group.all_reduce_sum(tensor, what);
    if (shards_parameters() && !m_zero3.holding_all) {
        m_zero3.made.push_back({-1, tensor.numel(), tensor.scalar_type()});
    }
}

void DataParallel::broadcast_in_step(torch::Tensor& tensor, int root, const char* what) {
    m_group.broadcast(tensor, root, what);
    if (!m_zero3.holding_all) {
        m_zero3.made.push_back({root, tensor.numel(), tensor.scalar_type()});
    }
}

}  // namespace oomlab::train
