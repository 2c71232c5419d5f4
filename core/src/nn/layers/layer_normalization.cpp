// LayerNormalization with Keras 3's numbers: each sample's values over the
// normalised axes (a run of trailing axes, the last included) seen as one row
// of K values, LayerNorm over [rows, K]; backward LayerNormGrad. gamma and
// beta have the normalised axes' shape (Keras' param_shape), flat [K] for the
// ops. Without scale or center a constant ones or zeros stands in.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <algorithm>
#include <cmath>

namespace axon::nn {

LayerNormalization::LayerNormalization(std::vector<int> axes, double epsilon, bool center, bool scale,
                                       std::string name)
    : Layer(std::move(name)), axes_(std::move(axes)), epsilon_(epsilon), center_(center), scale_(scale) {
  if (axes_.empty()) throw UsageError("LayerNormalization: needs at least one axis");
  if (!(epsilon > 0 && std::isfinite(epsilon))) throw UsageError("LayerNormalization: epsilon must be positive");
}

std::unique_ptr<Layer> LayerNormalization::clone() const {
  return std::make_unique<LayerNormalization>(axes_, epsilon_, center_, scale_, name());
}

void LayerNormalization::write_config(KerasConfigWriter& c) const {
  c.integers("axis", std::vector<int64_t>(axes_.begin(), axes_.end()));
  c.number("epsilon", epsilon_);
  c.boolean("center", center_);
  c.boolean("scale", scale_);
  c.boolean("rms_scaling", false);
  c.initializer("beta_initializer", initializer("beta", "Zeros"));
  c.initializer("gamma_initializer", initializer("gamma", "Ones"));
  c.regularizer("beta_regularizer", regularizer("beta"));
  c.regularizer("gamma_regularizer", regularizer("gamma"));
}

size_t LayerNormalization::first_axis(const Shape& in) const {
  // Keras counts the batch: axis a of the per-sample shape is a - 1, or rank + a where negative.
  const auto rank = static_cast<int>(in.size());
  std::vector<int> dims;
  for (int a : axes_) {
    const int d = a < 0 ? rank + a : a - 1;
    if (d < 0 || d >= rank)
      throw UsageError("axis " + std::to_string(a) + " is outside the input " + shape_string(in) +
                       " (Keras counts the batch as axis 0)");
    dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != rank - static_cast<int>(dims.size()) + static_cast<int>(i))
      throw UsageError("normalises over axes that are not the last ones of " + shape_string(in) +
                       "; axon normalises over a run of trailing axes (the last included)");
  return static_cast<size_t>(dims.front());
}

Shape LayerNormalization::output_shape(std::span<const Shape> in) const {
  if (in[0].empty()) throw UsageError("needs an input with a feature dimension");
  first_axis(in[0]);
  return in[0];
}

std::vector<WeightSpec> LayerNormalization::weight_specs(std::span<const Shape> in) const {
  const Shape param(in[0].begin() + static_cast<std::ptrdiff_t>(first_axis(in[0])), in[0].end());
  std::vector<WeightSpec> w;
  if (scale_) w.push_back({"gamma", param, Initializer::ones});
  if (center_) w.push_back({"beta", param, Initializer::zeros});
  return w;
}

void LayerNormalization::on_build(Device& device, Rng&) {
  const Shape& in = input_shape();
  k_ = numel(Shape(in.begin() + static_cast<std::ptrdiff_t>(first_axis(in)), in.end()));
  if (!scale_) ones_ = make_tensor(device, {k_}, std::vector<float>(static_cast<size_t>(k_), 1.0f));
  if (!center_) zeros_ = zeros(device, {k_});
}

Tensor LayerNormalization::gamma() const { return scale_ ? weight(0).value.reshaped({k_}) : ones_; }
Tensor LayerNormalization::beta() const { return center_ ? weight(scale_ ? 1 : 0).value.reshaped({k_}) : zeros_; }

Tensor LayerNormalization::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t rows = x.numel() / k_;
  Tensor y = take_like(x);
  Tensor y2 = y.reshaped({rows, k_}), mean = take_exact({rows}), inv_std = take_exact({rows});
  const Tensor x2 = x.reshaped({rows, k_});
  ops::layer_norm(x2, gamma(), beta(), y2, mean, inv_std, static_cast<float>(epsilon_), name());
  if (remembers()) x_ = x2, mean_ = mean, inv_std_ = inv_std;
  return y;
}

void LayerNormalization::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const int64_t rows = dy.numel() / k_;
  Tensor dgamma = scale_ ? weight(0).grad.reshaped({k_}) : take_exact({k_});
  Tensor dbeta = center_ ? weight(scale_ ? 1 : 0).grad.reshaped({k_}) : take_exact({k_});
  // The gradient op always writes dx; it is the input's when needed.
  Tensor d = take_like(dy);
  Tensor d2 = d.reshaped({rows, k_});
  ops::layer_norm_grad(dy.reshaped({rows, k_}), x_, gamma(), mean_, inv_std_, d2, dgamma, dbeta,
                       static_cast<float>(epsilon_), name());
  if (need_dx[0]) dx[0] = d;
  x_ = mean_ = inv_std_ = Tensor();
}

int64_t LayerNormalization::forward_flops() const { return 4 * numel(input_shape()); }
int64_t LayerNormalization::backward_flops(bool) const { return 8 * numel(input_shape()); }

namespace {
std::unique_ptr<Layer> layer_normalization_from_keras(const KerasLayerConfig& l) {
  std::vector<int> axes;
  const json& a = l.at_or_null("axis");
  if (a.is_null()) {
    axes.push_back(-1);
  } else if (a.is_array()) {
    if (a.empty() || a.size() > 8) l.fail("axis is " + json_text(a) + "; axon takes 1 to 8 axes");
    for (const json& v : a) axes.push_back(static_cast<int>(l.integer(v, "axis", -8, 8)));
  } else {
    axes.push_back(static_cast<int>(l.integer(a, "axis", -8, 8)));
  }
  for (int v : axes)
    if (v == 0) l.fail("axis is 0, the batch; axon normalises over a sample's own axes");
  if (l.boolean("rms_scaling", false))
    l.fail("rms_scaling is true (deprecated in Keras: it divides by the variance); axon supports false");
  l.require_null({"beta_constraint", "gamma_constraint"});
  const double epsilon = l.number("epsilon", 1e-3);
  if (!(epsilon > 0)) l.fail("epsilon is " + json_text(l.at("epsilon")) + ", not positive");
  return with_weight_settings(std::make_unique<LayerNormalization>(axes, epsilon, l.boolean("center", true),
                                                                   l.boolean("scale", true), l.name()),
                              l,
                              {{"gamma", "gamma_initializer", "Ones", "gamma_regularizer"},
                               {"beta", "beta_initializer", "Zeros", "beta_regularizer"}});
}
const LayerEntry kLayerNormalizationEntry{
    "LayerNormalization", layer_normalization_from_keras,
    "axis (a run of trailing axes, the last included), epsilon, center, scale, gamma_initializer, beta_initializer, "
    "gamma_regularizer and beta_regularizer (L1, L2, L1L2)"};
const LayerRegistration kLayerNormalizationRegistered(kLayerNormalizationEntry);
}  // namespace
}  // namespace axon::nn
