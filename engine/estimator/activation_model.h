// Bytes a model's forward pass keeps for backward (saved activations) and the largest
// temporary it allocates on top, per micro-batch, counted tensor by tensor from the ops the
// models run (see engine/model). Torch-free arithmetic: the estimator's core.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "oomlab/config/experiment_config.h"

namespace oomlab::memory {

struct BatchShape {
    std::int64_t batch = 1;   // examples in the micro-batch
    std::int64_t length = 1;  // padded tokens per example
};

// A module's share: the names the engine's models attribute memory to.
struct ModuleBytes {
    std::string module;
    std::int64_t bytes = 0;
    // The tensors `bytes` is made of, where the model's shapes tell (else one of `bytes`):
    // what the allocator is asked for, one request each.
    std::vector<std::int64_t> tensors;
};

// A module made of `tensors`, its bytes their sum.
ModuleBytes made_of(std::string module, std::vector<std::int64_t> tensors);

// The tensors of `module`, scaled to add up to its bytes (a share kept in 16 bits changes the
// sizes, not the count); one tensor of its bytes where none are known.
std::vector<std::int64_t> tensors_of(const ModuleBytes& module);

// What a module makes beside what it saves, in the order the allocator is asked.
struct ModuleTemporaries {
    std::int64_t forward = 0;   // made and freed within its forward
    std::int64_t backward = 0;  // made and freed within its backward
    // The gradient its backward hands to the module before it (its input's size), freed once
    // that module's backward has used it. The ids have none.
    std::int64_t input_gradient = 0;
    // Made as its backward starts and held until it ends: a checkpointed block's tensors made
    // again, the fused LSTM's time-major copy of its output's gradient.
    std::vector<std::int64_t> held;
};

struct ActivationBytes {
    std::int64_t saved = 0;                    // alive at the end of forward
    std::vector<ModuleBytes> saved_by_module;  // the same, by module, in forward order
    // The step as the allocator sees it (reserved_replay.cpp), by module: see below.
    std::map<std::string, ModuleTemporaries> temporaries;
    std::string backward_starts_in;      // the module whose backward holds backward_transient
    std::int64_t forward_transient = 0;  // largest extra during forward
    std::string forward_transient_in;    // the module whose forward holds it (at the peak)
    // Evaluating without autograd, what is alive beside forward_transient as it is made: the
    // op's input and output (taken to be of forward_transient's size where not known).
    std::int64_t forward_transient_beside = 0;
    std::int64_t backward_transient = 0;      // largest extra during backward, on top of gradients
    std::int64_t per_block_saved = 0;         // one encoder block's saved bytes (checkpointing)
    std::string backward_ends_in;             // the module whose backward holds the last temporary
    std::int64_t backward_end_transient = 0;  // that temporary
    // Where forward peaks (in forward_transient_in): the saved tensors by module then, none yet
    // of the later modules.
    std::vector<ModuleBytes> at_forward_peak;
    // Where backward peaks first: the saved tensors by module then (those of the modules
    // whose backward has run are freed, but for the gradient they pass on), the modules whose
    // gradients are complete, and the gradient being computed (parameter elements).
    std::vector<ModuleBytes> at_backward_start;
    std::vector<std::string> gradients_done;
    ModuleBytes gradient_in_progress;
};

// The bytes of a list of modules.
std::int64_t total_bytes(const std::vector<ModuleBytes>& modules);

ActivationBytes estimate_activations(const ExperimentConfig& config, int embedding_dim,
                                     int num_classes, const BatchShape& shape);

// Parameters of each module but the embedding table's (elements), in forward order.
std::vector<ModuleBytes> parameters_by_module(const ExperimentConfig& config, int embedding_dim,
                                              int num_classes);

// Parameters of everything but the embedding table (elements).
std::int64_t non_embedding_parameters(const ExperimentConfig& config, int embedding_dim,
                                      int num_classes);

}  // namespace oomlab::memory
