// Which of the model's modules each byte belongs to, and as what.
//
// The modules' forward and backward mark their allocations (model::attributed); gradients
// and optimizer state are allocated as temporaries of backward and of the update, so they are
// re-marked once they are known to be what they are: the gradient in a hook on its parameter,
// before autograd accumulates it, and on the parameter after backward; the state after each
// update. The allocator moves a re-marked block in its copy of the peak too, when the block
// was alive then (tracking_allocator.cpp), so the category at the peak does not depend on
// whether the peak fell before or after the re-marking.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "oomlab/measure/tracking_allocator.h"
#include "oomlab/run/run_record.h"
#include "oomlab/snapshot_writer/allocation_tag.h"
#include "trained_model.h"

namespace oomlab::train {

// Bytes held with `tag` by every module together.
std::int64_t held_by_all_modules(const memory::ModuleLedger& ledger, memory::AllocationTag tag);

class ModuleAttribution {
public:
    explicit ModuleAttribution(const TrainedModel& trained);

    // What no module of the model owns: the loss, and the optimizer's update.
    memory::ModuleId loss_id() const { return m_loss_id; }
    memory::ModuleId optimizer_id() const { return m_optimizer_id; }

    // Once the model is built: its parameters are its modules' weights, their gradients the
    // modules' gradients.
    void mark_parameters();
    // After each backward, every gradient on a parameter, also one its hook never saw (a
    // gradient that accumulation cloned rather than took over).
    void mark_gradients();
    // After each update, the state it created.
    void mark_optimizer_state();

    // Each module's bytes at the run's peak (`at_peak`; where nothing was measured, what the
    // tensors themselves hold), then the loss's, the update's and the rest's.
    std::vector<ModuleMemory> by_module(const std::optional<memory::ModuleLedger>& at_peak,
                                        bool sparse_table) const;
    // Each module's activations now, as samples of `phase` in `step`.
    void sample(const memory::ModuleLedger& now, std::int64_t step, std::string_view phase);
    std::vector<ModuleSample> take_samples() { return std::move(m_samples); }

private:
    const TrainedModel& m_trained;
    memory::ModuleId m_loss_id;
    memory::ModuleId m_optimizer_id;
    std::vector<ModuleSample> m_samples;
};

}  // namespace oomlab::train
