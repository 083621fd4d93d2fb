// Where a run's bytes come from, module by module, and the staircase of its stages.
//
// The modules' forward and backward mark their allocations (model::attributed); gradients
// and optimizer state are allocated as temporaries of backward and of the update, so they are
// re-marked once they are known to be what they are: the gradient in a hook on its parameter,
// before autograd accumulates it, and on the parameter after backward; the state after each
// update. The allocator moves a re-marked block in its copy of the peak too, when the block
// was alive then (tracking_allocator.cpp), so the category at the peak does not depend on
// whether the peak fell before or after the re-marking.
#include "measure/tracking_allocator.h"
#include "train/optimizer_factory.h"
#include "train/training_run.h"

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

std::int64_t tensor_bytes(const torch::Tensor& tensor) {
    return tensor.defined() ? static_cast<std::int64_t>(tensor.nbytes()) : 0;
}

}  // namespace

std::int64_t held_by_all_modules(const memory::ModuleLedger& ledger, memory::AllocationTag tag) {
    std::int64_t bytes = 0;
    for (std::size_t module = 0; module < memory::kMaxModules; ++module) {
        bytes += ledger.held(static_cast<memory::ModuleId>(module), tag);
    }
    return bytes;
}

void TrainingRun::attribute_parameters() {
    for (const model::MemoryModule& module : m_model->memory_modules()) {
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

// Every gradient autograd left on a parameter, also one its hook never saw (a gradient that
// accumulation cloned rather than took over).
void TrainingRun::retag_gradients() {
    for (const model::MemoryModule& module : m_model->memory_modules()) {
        for (const torch::Tensor& parameter : module.parameters) {
            memory::retag_tensor(parameter.grad(), memory::AllocationTag::Gradients, module.id);
        }
    }
}

std::vector<torch::Tensor> TrainingRun::optimizer_state_for(const torch::Tensor& parameter) const {
    if (!m_parallel) {
        return optimizer_state_of(*m_optimizer, parameter);
    }
    // Sharded, the optimizer holds state for this rank's views of the parameter.
    std::vector<torch::Tensor> state;
    for (const torch::Tensor& view : m_parallel->optimizer_tensors_of(parameter)) {
        for (torch::Tensor& tensor : optimizer_state_of(*m_optimizer, view)) {
            state.push_back(std::move(tensor));
        }
    }
    return state;
}

void TrainingRun::retag_optimizer_state() {
    for (const model::MemoryModule& module : m_model->memory_modules()) {
        for (const torch::Tensor& parameter : module.parameters) {
            for (const torch::Tensor& state : optimizer_state_for(parameter)) {
                memory::retag_tensor(state, memory::AllocationTag::OptimizerState, module.id);
            }
        }
    }
}

std::vector<ModuleMemory> TrainingRun::measure_by_module() const {
    std::vector<ModuleMemory> result;
    if (!m_model) {
        return result;
    }
    const std::optional<memory::ModuleLedger> ledger = m_memory.ledger_at_peak();
    const torch::Tensor& table = m_model->embeddings()->weight();
    const auto activations = [&](memory::ModuleId id) -> std::optional<std::int64_t> {
        return ledger ? std::optional(activation_bytes(*ledger, id)) : std::nullopt;
    };
    for (const model::MemoryModule& module : m_model->memory_modules()) {
        ModuleMemory& row = result.emplace_back();
        row.module = module.name;
        for (const torch::Tensor& parameter : module.parameters) {
            const std::int64_t bytes = tensor_bytes(parameter);
            row.parameters += bytes;
            // As the breakdown counts them where nothing was measured: every trainable
            // parameter's, dense tables only.
            if (parameter.requires_grad() &&
                !(parameter.is_same(table) && m_config.embeddings.sparse_grad)) {
                row.gradients += bytes;
            }
            if (m_optimizer) {
                for (const torch::Tensor& state : optimizer_state_for(parameter)) {
                    row.optimizer_state += tensor_bytes(state);
                }
            }
        }
        if (ledger) {
            // What the module held at the peak.
            row.gradients = ledger->held(module.id, memory::AllocationTag::Gradients);
            row.optimizer_state = ledger->held(module.id, memory::AllocationTag::OptimizerState);
        }
        row.activations = activations(module.id);
    }
    // What no module of the model owns: the loss, the update's temporaries, and the rest.
    const std::pair<std::string, memory::ModuleId> rest[] = {
        {"loss", m_loss_id}, {"optimizer", m_optimizer_id}, {"other", memory::kNoModule}};
    for (const auto& [name, id] : rest) {
        ModuleMemory& row = result.emplace_back();
        row.module = name;
        row.activations = activations(id);
        if (ledger) {
            row.gradients = ledger->held(id, memory::AllocationTag::Gradients);  // ZeRO-2's range
        }
    }
    return result;
}

void TrainingRun::sample_modules(std::string_view phase) {
    const std::optional<memory::ModuleLedger> ledger = m_memory.ledger_now();
    if (!ledger || !m_model) {
        return;
    }
    const auto add = [&](const std::string& name, memory::ModuleId id) {
        if (const std::int64_t bytes = activation_bytes(*ledger, id); bytes > 0) {
            m_module_samples.push_back({m_step + 1, std::string(phase), name, bytes});
        }
    };
    for (const model::MemoryModule& module : m_model->memory_modules()) {
        add(module.name, module.id);
    }
    add("loss", m_loss_id);
    add("optimizer", m_optimizer_id);
    add("other", memory::kNoModule);
}

void TrainingRun::add_stage(std::string_view stage, std::int64_t allocated,
                            std::optional<std::int64_t> device_used) {
    m_staircase.push_back({std::string(stage), allocated, device_used});
}

}  // namespace oomlab::train
