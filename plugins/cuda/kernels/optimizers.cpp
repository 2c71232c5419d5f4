// The optimizer ops of ABI 1.6 on axon's own CUDA kernels (optimizers.cu):
// the per-step scalars in float32 here, as the CPU plugin and Keras compute
// them.
#include "optimizers.hpp"
#include "cuda_device.hpp"

#include <axon/keras_numbers.hpp>

#include <cmath>

namespace axon::cuda {
namespace {

void apply_sgd(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_sgd_attrs>();
  launch::sgd(d.stream(), {a.learning_rate, a.momentum, a.nesterov}, c.input(0).data<float>(), c.input(1).data<float>(),
              c.input(2).data<float>(), c.input(0).numel());
}

void apply_rmsprop(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_rmsprop_attrs>();
  const launch::RmspropStep s{a.learning_rate, a.rho, sdk::keras_one_minus(a.rho), a.momentum, a.epsilon, a.centered};
  launch::rmsprop(d.stream(), s, c.input(0).data<float>(), c.input(1).data<float>(), c.input(2).data<float>(),
                  c.input(3).data<float>(), c.input(4).data<float>(), c.input(0).numel());
}

void apply_adam_with_amsgrad(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_adam_attrs>();
  const float t = static_cast<float>(a.step);
  const float alpha = a.learning_rate * std::sqrt(1.0f - std::pow(a.beta_2, t)) / (1.0f - std::pow(a.beta_1, t));
  const launch::AmsgradStep s{alpha, sdk::keras_one_minus(a.beta_1), sdk::keras_one_minus(a.beta_2), a.epsilon};
  launch::adam_with_amsgrad(d.stream(), s, c.input(0).data<float>(), c.input(1).data<float>(), c.input(2).data<float>(),
                            c.input(3).data<float>(), c.input(4).data<float>(), c.input(0).numel());
}

void apply_adagrad(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_adagrad_attrs>();
  launch::adagrad(d.stream(), a.learning_rate, a.epsilon, c.input(0).data<float>(), c.input(1).data<float>(),
                  c.input(2).data<float>(), c.input(0).numel());
}

void apply_nadam(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_nadam_attrs>();
  const float t = static_cast<float>(a.step), decay = 0.96f;
  const float u_t = a.beta_1 * (1.0f - 0.5f * std::pow(decay, t));
  const float u_t1 = a.beta_1 * (1.0f - 0.5f * std::pow(decay, t + 1.0f));
  launch::NadamStep s{};
  s.lr = a.learning_rate;
  s.one_minus_b1 = 1.0f - a.beta_1;
  s.one_minus_b2 = 1.0f - a.beta_2;
  s.eps = a.epsilon;
  s.u_t1 = u_t1;
  s.m_scale_t1 = 1.0f - a.u_product * u_t1;
  s.one_minus_u_t = 1.0f - u_t;
  s.m_scale_t = 1.0f - a.u_product;
  s.v_scale = 1.0f - std::pow(a.beta_2, t);
  launch::nadam(d.stream(), s, c.input(0).data<float>(), c.input(1).data<float>(), c.input(2).data<float>(),
                c.input(3).data<float>(), c.input(0).numel());
}

void apply_weight_decay(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_weight_decay_attrs>();
  launch::weight_decay(d.stream(), a.weight_decay, a.learning_rate, c.input(0).data<float>(), c.input(0).numel());
}

void clip_gradients(CudaDevice& d, const sdk::KernelCall& c) {
  const auto& a = c.attrs<axon_clip_attrs>();
  const int64_t segments = c.input(1).numel();
  CudaDevice::Scratch scratch(d, static_cast<size_t>(segments > 0 ? segments : 1) * sizeof(float));
  launch::clip_gradients(d.stream(), static_cast<int>(a.mode), a.clip, c.input(0).data<float>(), c.input(0).numel(),
                         c.input(1).data<int64_t>(), segments, scratch.get<float>());
}

}  // namespace

void register_optimizer_kernels(sdk::KernelTable& t) {
  add<OpId::ApplySGD, apply_sgd>(t);
  add<OpId::ApplyRMSprop, apply_rmsprop>(t);
  add<OpId::ApplyAdamWithAmsgrad, apply_adam_with_amsgrad>(t);
  add<OpId::ApplyAdagrad, apply_adagrad>(t);
  add<OpId::ApplyNadam, apply_nadam>(t);
  add<OpId::ApplyWeightDecay, apply_weight_decay>(t);
  add<OpId::ClipGradients, clip_gradients>(t);
}

}  // namespace axon::cuda
