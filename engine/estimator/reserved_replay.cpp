// The predicted step as the allocator sees it. The order follows the training engine
// (engine/train): parameters and data first; per micro-batch the forward saves each module's
// tensors in turn, backward walks the modules back, making each one's gradients and freeing
// what it saved; the update makes the optimizer's state at the first step and its
// temporaries, and the gradients are dropped after it.
#include "reserved_replay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "oomlab/allocator/caching_allocator_model.h"
#include "oomlab/estimator/estimator.h"

namespace oomlab::estimator {
namespace {

// The first step makes the optimizer's state after its peak; the later ones run with it and
// with the cache the first left.
constexpr int kLongestReplayed = 3;

using Addresses = std::vector<std::int64_t>;

class Replay {
public:
    Replay(allocator::AllocatorSettings settings, std::int64_t capacity)
        : m_model(std::move(settings), capacity) {}

    Addresses make(const std::vector<std::int64_t>& sizes) {
        Addresses addresses;
        for (const std::int64_t size : sizes) {
            if (size <= 0 || m_result.out_of_memory) {
                continue;  // PyTorch hands out no block for an empty tensor
            }
            if (const std::optional<std::int64_t> address = m_model.allocate(size, 0)) {
                addresses.push_back(*address);
                observe();
            } else {
                m_result.out_of_memory = true;
            }
        }
        return addresses;
    }
    // A tensor made and dropped at once: a temporary.
    void pass(std::int64_t size) { drop(make({size})); }
    void drop(Addresses& addresses) {
        for (const std::int64_t address : addresses) {
            m_model.free(address);
        }
        addresses.clear();
    }
    void drop(Addresses&& addresses) { drop(addresses); }
    void empty_cache() { m_model.empty_cache(); }
    const ReservedReplay& result() const { return m_result; }

private:
    void observe() {
        const std::int64_t allocated = m_model.allocated();
        const std::int64_t reserved = m_model.reserved();
        // The peak as a later step reaches it again, with the cache the earlier ones left.
        if (allocated >= m_result.allocated_peak) {
            m_result.allocated_peak = allocated;
            m_result.cache_at_peak = reserved - allocated;
        }
        m_result.reserved_peak = std::max(m_result.reserved_peak, reserved);
    }

    allocator::CachingAllocatorModel m_model;
    ReservedReplay m_result;
};

std::vector<std::int64_t> scaled(const std::vector<std::int64_t>& elements, std::int64_t bytes) {
    std::vector<std::int64_t> sizes;
    for (const std::int64_t count : elements) {
        sizes.push_back(count * bytes);
    }
    return sizes;
}

// The trainable tensors in the order the optimizer walks them: the table, then the rest.
std::vector<std::int64_t> trainable_tensors(const Step& s) {
    std::vector<std::int64_t> sizes;
    if (s.config->embeddings.trainable) {
        sizes.push_back(s.table);
    }
    for (const memory::ModuleBytes& module : s.weights) {
        for (const std::int64_t size : scaled(module.tensors, kFloat)) {
            sizes.push_back(size);
        }
    }
    return sizes;
}

class StepReplay {
public:
    StepReplay(const Step& step, Replay& replay) : s(step), r(replay) {}

    void run_micro_batch(std::map<std::string, Addresses>& gradients) {
        // Autocast's 16-bit copies of the weights, kept for backward.
        Addresses casts;
        if (s.weight_casts > 0) {
            for (const memory::ModuleBytes& module : s.weights) {
                const Addresses cast = r.make(scaled(module.tensors, kFloat / 2));
                casts.insert(casts.end(), cast.begin(), cast.end());
            }
        }
        Addresses kept_graphs = r.make({s.kept_beside - s.weight_casts});
        m_kept.insert(m_kept.end(), kept_graphs.begin(), kept_graphs.end());

        std::map<std::string, Addresses> saved;
        for (const memory::ModuleBytes& module : s.act.saved_by_module) {
            saved[module.module] = r.make(memory::tensors_of(module));
            r.pass(temporaries_of(module.module).forward);
        }
        const auto& modules = s.act.saved_by_module;
        Addresses handed_on;  // the gradient the later module's backward made for this one
        for (auto module = modules.rbegin(); module != modules.rend(); ++module) {
            const memory::ModuleTemporaries& made = temporaries_of(module->module);
            Addresses held = r.make(made.held);
            Addresses input_gradient = r.make({made.input_gradient});
            r.pass(made.backward);
            make_gradients(module->module, gradients);
            r.drop(held);
            r.drop(saved[module->module]);
            r.drop(handed_on);
            handed_on = std::move(input_gradient);
        }
        r.drop(handed_on);
        r.drop(casts);
    }

    void run_update(bool first, std::map<std::string, Addresses>& gradients) {
        const ExperimentConfig& config = *s.config;
        if (s.ranks > 1) {
            r.pass(s.shared_bucket);  // the gradients summed across ranks
        }
        const std::vector<std::int64_t> trainable = trainable_tensors(s);
        if (first) {
            for (std::int64_t copy = 0; copy < optimizer_state_copies(config.train.optimizer);
                 ++copy) {
                Addresses state = r.make(trainable);
                m_kept.insert(m_kept.end(), state.begin(), state.end());
            }
        }
        const std::int64_t temporaries = optimizer_temporaries(config.train.optimizer);
        for (const std::int64_t size : trainable) {
            Addresses made = r.make(std::vector<std::int64_t>(std::size_t(temporaries), size));
            r.drop(made);
        }
        for (auto& [module, addresses] : gradients) {
            r.drop(addresses);
        }
        gradients.clear();
    }

private:
    const memory::ModuleTemporaries& temporaries_of(const std::string& module) const {
        static const memory::ModuleTemporaries none;
        const auto found = s.act.temporaries.find(module);
        return found == s.act.temporaries.end() ? none : found->second;
    }

    // A module's gradients appear as its backward runs; accumulated, they exist from the first
    // micro-batch and the next ones add into them.
    void make_gradients(const std::string& module, std::map<std::string, Addresses>& gradients) {
        const bool existing = gradients.count(module) > 0;
        Addresses& made = gradients[module];
        if (module == "embeddings") {
            if (s.dense_table_grad) {
                if (!existing) {
                    made = r.make({s.table});
                } else {
                    r.pass(s.grad_sum_copy);
                }
            }
            const std::int64_t sparse = s.gradients - s.others - (s.dense_table_grad ? s.table : 0);
            // A sparse gradient's rows are concatenated to the earlier micro-batches'.
            Addresses rows = r.make({sparse / s.config->train.accumulation});
            made.insert(made.end(), rows.begin(), rows.end());
            return;
        }
        if (existing) {
            return;
        }
        for (const memory::ModuleBytes& weights : s.weights) {
            if (weights.module == module) {
                made = r.make(scaled(weights.tensors, kFloat));
            }
        }
    }

    const Step& s;
    Replay& r;
    Addresses m_kept;  // the optimizer's state, kept loss graphs: never freed
};

}  // namespace

ReservedReplay replay_reserved(const std::vector<Step>& steps, std::int64_t capacity,
                               std::int64_t workspaces) {
    const Step& s = steps.back();
    const ExperimentConfig& config = *s.config;
    allocator::AllocatorSettings settings;
    try {
        settings = allocator::parse_alloc_conf(config.memory.alloc_conf);
    } catch (const std::exception&) {
        // Refused with its key where the config is checked; the defaults meanwhile.
    }
    Replay r(settings, capacity);
    r.make({s.table});
    for (const memory::ModuleBytes& module : s.weights) {
        r.make(scaled(module.tensors, kFloat));
    }
    r.make({eager_data_bytes(s)});
    for (int batch = 0; batch < batches_resident(s); ++batch) {
        r.make(batch_tensors(s.batch, s.length));
    }
    r.make({workspaces});

    std::vector<const Step*> order;
    for (const Step& step : steps) {
        order.push_back(&step);
    }
    order.insert(order.end(), kLongestReplayed - 1, &s);
    for (std::size_t index = 0; index < order.size() && !r.result().out_of_memory; ++index) {
        StepReplay step(*order[index], r);
        std::map<std::string, Addresses> gradients;
        for (int micro = 0; micro < config.train.accumulation; ++micro) {
            step.run_micro_batch(gradients);
        }
        step.run_update(index == 0, gradients);
        if (config.memory.empty_cache == EmptyCache::Step) {
            r.empty_cache();
        }
    }
    return r.result();
}

}  // namespace oomlab::estimator
