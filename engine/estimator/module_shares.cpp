// The peak by module. Parameters, gradients and state follow each module's weights;
// activations are what each saved, with the step's temporaries where they arise.
#include <algorithm>

#include "oomlab/estimator/estimator.h"
#include "step_phases.h"

namespace oomlab::estimator {
namespace {

// The module whose gradient is the largest: the one ZeRO-2 still sums at the end of backward.
std::string largest_gradient_module(const Step& s) {
    if ((s.dense_table_grad && s.table >= s.others / 2) || s.weights.empty()) {
        return "embeddings";
    }
    return std::max_element(s.weights.begin(), s.weights.end(),
                            [](const auto& x, const auto& y) { return x.bytes < y.bytes; })
        ->module;
}

class ModuleRows {
public:
    ModuleRows(const Step& step, const Peak& peak) : s_(step), peak_(peak) {
        // ZeRO-2's buckets and range of the summed gradients are the update's (the "optimizer"
        // row); at the end of backward a module holds only the largest gradient, the one still
        // being summed or copied into its bucket. Without ZeRO-2 the modules hold their own.
        zero2_in_module_ = !s_.zero2                   ? 0
                           : peak_.backward_ending     ? std::min(s_.gradients, s_.largest_gradient)
                           : peak_.backward_starting() ? s_.in_progress
                                                       : 0;
        modules_hold_grads_ = !s_.zero2 && peak_.bytes.gradients > 0;
        first_shard_left_ = s_.range_elements;
        zero2_holder_ = peak_.backward_ending ? largest_gradient_module(s_)
                                              : s_.act.gradient_in_progress.module;
    }

    // Called once per learning module, in forward order: the first rank's range of the
    // flattened elements falls on the first modules.
    ModuleMemory& add(const std::string& name, std::int64_t parameters, bool learns,
                      std::int64_t element = kFloat) {
        ModuleMemory& module = rows_.emplace_back();
        module.module = name;
        const std::int64_t kept = learns && s_.shard != ShardMode::None
                                      ? first_shard_bytes(parameters, element)
                                      : parameters;
        const bool gathered = peak_.kind == PhaseKind::Evaluation || name == peak_.gathered_part;
        module.parameters = s_.zero3 && learns
                                ? kept + (gathered && peak_.bytes.gathered > 0 ? parameters : 0)
                                : parameters;
        module.gradients = learns ? gradient_of(name, parameters) : 0;
        module.optimizer_state =
            learns ? optimizer_state_copies(s_.config->train.optimizer) * kept : 0;
        module.activations = 0;
        return module;
    }

    void add_modules() {
        add("embeddings", s_.table, s_.config->embeddings.trainable, s_.table_element).gradients =
            s_.dense_table_grad
                ? gradient_of("embeddings", s_.table) +
                      (peak_.backward_ending && modules_hold_grads_ ? s_.grad_sum_copy : 0)
                : 0;
        for (const memory::ModuleBytes& part : s_.weights) {
            add(part.module, part.bytes * kFloat, true);
        }
        add("loss", 0, false);
        add("optimizer", 0, false).gradients =
            s_.zero2 ? peak_.bytes.gradients - zero2_in_module_ : 0;
        add("other", 0, false);
    }

    void place_activations() {
        const Phase& bytes = peak_.bytes;
        const bool training_phase =
            peak_.kind == PhaseKind::Forward || peak_.kind == PhaseKind::Backward;
        if (!training_phase || bytes.other <= 0 || s_.config->debug.keep_loss_graph) {
            // The update's temporaries, a validation pass, or graphs kept alive: not one
            // module's.
            *named(peak_.kind == PhaseKind::Optimizer ? "optimizer" : "other").activations +=
                bytes.other;
            return;
        }
        const memory::ActivationBytes& act = s_.act;
        if (peak_.backward_ending) {
            // The saved tensors are gone; the last module's backward holds its temporary.
            *named(act.backward_ends_in).activations += bytes.other;
            return;
        }
        const bool forward = peak_.kind == PhaseKind::Forward;
        for (const memory::ModuleBytes& part :
             forward ? act.at_forward_peak : act.at_backward_start) {
            *named(part.module).activations += part.bytes;
        }
        for (const memory::ModuleBytes& part : s_.weights) {
            // Autocast's 16-bit copy of each module's weights.
            *named(part.module).activations += s_.weight_casts > 0 ? part.bytes * kFloat / 2 : 0;
        }
        // The step's temporaries: in forward, where the largest arises; in backward, where it
        // starts.
        *named(forward ? act.forward_transient_in : act.backward_starts_in).activations +=
            forward ? act.forward_transient : act.backward_transient;
    }

    std::vector<ModuleMemory> take() { return std::move(rows_); }

private:
    std::int64_t first_shard_bytes(std::int64_t parameters, std::int64_t element) {
        const std::int64_t taken = std::min(first_shard_left_, parameters / element);
        first_shard_left_ -= taken;
        return taken * element;
    }

    std::int64_t gradient_of(const std::string& name, std::int64_t parameters) const {
        if (s_.zero2) {
            return name == zero2_holder_ ? zero2_in_module_ : 0;
        }
        if (!peak_.backward_starting()) {
            return modules_hold_grads_ ? parameters : 0;
        }
        const std::int64_t fresh = name == s_.act.gradient_in_progress.module ? s_.in_progress : 0;
        return (s_.accumulating || s_.gradient_done(name) ? parameters : 0) + fresh;
    }

    ModuleMemory& named(const std::string& name) {
        for (ModuleMemory& module : rows_) {
            if (module.module == name) {
                return module;
            }
        }
        return rows_.back();  // "other"
    }

    const Step& s_;
    const Peak& peak_;
    std::vector<ModuleMemory> rows_;
    std::int64_t zero2_in_module_ = 0;
    bool modules_hold_grads_ = false;
    std::int64_t first_shard_left_ = 0;
    std::string zero2_holder_;
};

}  // namespace

std::vector<ModuleMemory> attribute_by_module(const Step& step, const Peak& peak) {
    ModuleRows rows(step, peak);
    rows.add_modules();
    rows.place_activations();
    return rows.take();
}

}  // namespace oomlab::estimator
