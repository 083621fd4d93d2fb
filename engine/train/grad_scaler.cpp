#include "grad_scaler.h"

#include "oomlab/torch_utils/torch_compat.h"

namespace oomlab::train {

GradScaler::GradScaler(const torch::Device& device, GradScalerOptions options)
    : m_options(options),
      m_scale(torch::full({1}, options.init_scale, torch::dtype(torch::kFloat32).device(device))),
      m_growth_tracker(torch::zeros({1}, torch::dtype(torch::kInt32).device(device))),
      m_found_inf(torch::zeros({1}, torch::dtype(torch::kFloat32).device(device))) {}

torch::Tensor GradScaler::scale(const torch::Tensor& loss) const {
    return loss * m_scale.to(loss.scalar_type());
}

double GradScaler::current_scale() const {
    return m_scale.item<double>();
}

void GradScaler::unscale(const std::vector<torch::Tensor>& parameters) {
    std::vector<torch::Tensor> grads;
    for (const auto& parameter : parameters) {
        torch::Tensor grad = parameter.grad();
        if (!grad.defined()) {
            continue;
        }
        if (grad.is_sparse()) {
            // Duplicate indices would add up (and may overflow) only when coalesced; do it
            // now so the check sees the values the optimizer will.
            grad = grad.coalesce();
            parameter.mutable_grad() = grad;
            grads.push_back(grad._values());
        } else {
            grads.push_back(grad);
        }
    }
    m_found_inf.zero_();
    const torch::Tensor inverse = m_scale.to(torch::kDouble).reciprocal().to(torch::kFloat32);
    if (compat::has_amp_ops(m_scale.device().type())) {
        at::_amp_foreach_non_finite_check_and_unscale_(grads, m_found_inf, inverse);
        return;
    }
    for (auto& grad : grads) {
        m_found_inf.add_(grad.isfinite().logical_not().any().to(torch::kFloat32)).clamp_max_(1);
        grad.mul_(inverse.to(grad.scalar_type()));
    }
}

void GradScaler::update() {
    if (compat::has_amp_ops(m_scale.device().type())) {
        at::_amp_update_scale_(m_scale, m_growth_tracker, m_found_inf, m_options.growth_factor,
                               m_options.backoff_factor, m_options.growth_interval);
        return;
    }
    if (m_found_inf.item<float>() > 0) {
        m_scale.mul_(m_options.backoff_factor);
        m_growth_tracker.zero_();
    } else if (m_growth_tracker.add_(1).item<std::int32_t>() == m_options.growth_interval) {
        m_scale.mul_(m_options.growth_factor);
        m_growth_tracker.zero_();
    }
}

bool GradScaler::step(torch::optim::Optimizer& optimizer,
                      const std::vector<torch::Tensor>& parameters) {
    unscale(parameters);
    // Reading found_inf waits for the backward pass; torch.amp.GradScaler.step does the same.
    const bool finite = m_found_inf.item<float>() == 0;
    if (finite) {
        optimizer.step();
    } else {
        ++m_skipped;
    }
    update();
    return finite;
}

}  // namespace oomlab::train
