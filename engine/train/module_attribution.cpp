#include "module_attribution.h"

#include "oomlab/torch_utils/tensor_bytes.h"

namespace oomlab::train {
namespace {

constexpr memory::AllocationTag kActivationTags[] = {
    memory::AllocationTag::Forward, memory::AllocationTag::Backward, memory::AllocationTag::Eval,
    memory::AllocationTag::Optimizer};

std::int64_t activation_bytes(const memory::ModuleLedger& ledger, memory::ModuleId module) {
    std::int64_t bytes = 0;
    for (const memory::AllocationTag tag : kActivationTags) {
        bytes += ledger.held(module, tag);
    }
    return bytes;
}

}  // namespace

std::int64_t held_by_all_modules(const memory::ModuleLedger& ledger, memory::AllocationTag tag) {
    std::int64_t bytes = 0;
    for (std::size_t module = 0; module < memory::kMaxModules; ++module) {
        bytes += ledger.held(static_cast<memory::ModuleId>(module), tag);
    }
    return bytes;
}

ModuleAttribution::ModuleAttribution(const TrainedModel& trained)
    : m_trained(trained),
      m_loss_id(memory::module_id("loss")),
      m_optimizer_id(memory::module_id("optimizer")) {}

void ModuleAttribution::mark_parameters() {
    for (const model::MemoryModule& module : m_trained.model->memory_modules()) {
        for (const torch::Tensor& parameter : module.parameters) {
            memory::retag_tensor(parameter, memory::AllocationTag::Setup, module.id);
            if (parameter.requires_grad()) {
                const memory::ModuleId id = module.id;
                parameter.register_hook([id](const torch::Tensor& gradient) {
                    memory::retag_tensor(gradient, memory::AllocationTag::Gradients, id);
                });
            }
        }
    }
}

void ModuleAttribution::mark_gradients() {
    for (const model::MemoryModule& module : m_trained.model->memory_modules()) {
        for (const torch::Tensor& parameter : module.parameters) {
            memory::retag_tensor(parameter.grad(), memory::AllocationTag::Gradients, module.id);
        }
    }
}

void ModuleAttribution::mark_optimizer_state() {
    for (const model::MemoryModule& module : m_trained.model->memory_modules()) {
        for (const torch::Tensor& parameter : module.parameters) {
            for (const torch::Tensor& state : m_trained.optimizer_state_for(parameter)) {
                memory::retag_tensor(state, memory::AllocationTag::OptimizerState, module.id);
            }
        }
    }
}

std::vector<ModuleMemory> ModuleAttribution::by_module(
    const std::optional<memory::ModuleLedger>& at_peak, bool sparse_table) const {
    std::vector<ModuleMemory> result;
    if (!m_trained.model) {
        return result;
    }
    const auto activations = [&](memory::ModuleId id) -> std::optional<std::int64_t> {
        return at_peak ? std::optional(activation_bytes(*at_peak, id)) : std::nullopt;
    };
    for (const model::MemoryModule& module : m_trained.model->memory_modules()) {
        ModuleMemory& row = result.emplace_back();
        row.module = module.name;
        const DataParallel* parallel = m_trained.parallel.get();
        for (const torch::Tensor& parameter : module.parameters) {
            row.parameters += parallel ? parallel->kept_bytes(parameter) : tensor_bytes(parameter);
            if (m_trained.has_dense_gradient(parameter, sparse_table)) {
                row.gradients += tensor_bytes(parameter);
            }
            for (const torch::Tensor& state : m_trained.optimizer_state_for(parameter)) {
                row.optimizer_state += tensor_bytes(state);
            }
        }
        if (at_peak && parallel && parallel->shards_parameters()) {
            // ZeRO-3: this rank's range and, were it gathered at the peak, the whole part.
            row.parameters = at_peak->held(module.id, memory::AllocationTag::Setup);
        }
        if (at_peak) {
            row.gradients = at_peak->held(module.id, memory::AllocationTag::Gradients);
            row.optimizer_state = at_peak->held(module.id, memory::AllocationTag::OptimizerState);
        }
        row.activations = activations(module.id);
    }
    const std::pair<std::string, memory::ModuleId> rest[] = {
        {"loss", m_loss_id}, {"optimizer", m_optimizer_id}, {"other", memory::kNoModule}};
    for (const auto& [name, id] : rest) {
        ModuleMemory& row = result.emplace_back();
        row.module = name;
        row.activations = activations(id);
        if (at_peak) {
            row.gradients = at_peak->held(id, memory::AllocationTag::Gradients);  // ZeRO-2's range
        }
    }
    return result;
}

void ModuleAttribution::sample(const memory::ModuleLedger& now, std::int64_t step,
                               std::string_view phase) {
    const auto add = [&](const std::string& name, memory::ModuleId id) {
        if (const std::int64_t bytes = activation_bytes(now, id); bytes > 0) {
            m_samples.push_back({step, std::string(phase), name, bytes});
        }
    };
    for (const model::MemoryModule& module : m_trained.model->memory_modules()) {
        add(module.name, module.id);
    }
    add("loss", m_loss_id);
    add("optimizer", m_optimizer_id);
    add("other", memory::kNoModule);
}

}  // namespace oomlab::train
