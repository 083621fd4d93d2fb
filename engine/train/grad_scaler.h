// Dynamic loss scaling for fp16 training, as torch.amp.GradScaler does it: the loss is
// multiplied by a large scale so small fp16 gradients do not flush to zero; before the
// optimizer step the gradients are unscaled once and checked for inf/NaN. A step with inf/NaN
// is skipped and the scale backs off; after `growth_interval` clean steps it grows.
#pragma once

#include <torch/optim.h>

#include <cstdint>

namespace oomlab::train {

struct GradScalerOptions {
    double init_scale = 65536.0;
    double growth_factor = 2.0;
    double backoff_factor = 0.5;
    std::int64_t growth_interval = 2000;
};

class GradScaler {
public:
    GradScaler(const torch::Device& device, GradScalerOptions options = {});

    torch::Tensor scale(const torch::Tensor& loss) const;

    // Unscales the gradients of `parameters` in place (once per optimizer step, after every
    // micro-batch's backward), runs the optimizer step unless a gradient had inf/NaN, and
    // updates the scale. Returns whether the step ran.
    bool step(torch::optim::Optimizer& optimizer, const std::vector<torch::Tensor>& parameters);

    double current_scale() const;
    std::int64_t skipped_steps() const { return m_skipped; }

private:
    void unscale(const std::vector<torch::Tensor>& parameters);
    void update();

    GradScalerOptions m_options;
    torch::Tensor m_scale;           // float32, one element, on the training device
    torch::Tensor m_growth_tracker;  // int32: clean steps since the last change
    torch::Tensor m_found_inf;       // float32: 1 when this step's gradients had inf/NaN
    std::int64_t m_skipped = 0;
};

}  // namespace oomlab::train
