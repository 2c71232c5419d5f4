// BatchNormalization with Keras 3's numbers. Training: FusedBatchNormV3 with
// the batch's statistics (its reserve spaces are the mean and the biased
// variance Keras uses), then MovingAverage moves moving_mean and
// moving_variance towards them; backward FusedBatchNormGradV3. Inference:
// FusedBatchNormV3 with the moving statistics.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

BatchNormalization::BatchNormalization(double momentum, double epsilon, bool center, bool scale, std::string name,
                                       int axis)
    : Layer(std::move(name)), momentum_(momentum), epsilon_(epsilon), center_(center), scale_(scale), axis_(axis) {
  if (!(momentum >= 0 && momentum <= 1)) throw UsageError("BatchNormalization: momentum must be from 0 to 1");
  if (!(epsilon > 0 && std::isfinite(epsilon))) throw UsageError("BatchNormalization: epsilon must be positive");
}

std::unique_ptr<Layer> BatchNormalization::clone() const {
  return std::make_unique<BatchNormalization>(momentum_, epsilon_, center_, scale_, name(), axis_);
}

void BatchNormalization::write_config(KerasConfigWriter& c) const {
  c.integer("axis", axis_);
  c.number("momentum", momentum_);
  c.number("epsilon", epsilon_);
  c.boolean("center", center_);
  c.boolean("scale", scale_);
  c.initializer("beta_initializer", "Zeros");
  c.initializer("gamma_initializer", "Ones");
  c.initializer("moving_mean_initializer", "Zeros");
  c.initializer("moving_variance_initializer", "Ones");
  c.boolean("synchronized", false);
}

Shape BatchNormalization::output_shape(std::span<const Shape> in) const {
  if (in[0].empty()) throw UsageError("needs an input with a channel dimension");
  // Keras counts the batch: the last axis is -1, or the per-sample rank.
  if (axis_ != -1 && axis_ != static_cast<int>(in[0].size()))
    throw UsageError("axis is " + std::to_string(axis_) + "; axon normalises over the last axis (-1 or " +
                     std::to_string(in[0].size()) + " here)");
  return in[0];
}

std::vector<WeightSpec> BatchNormalization::weight_specs(std::span<const Shape> in) const {
  const int64_t c = in[0].back();
  std::vector<WeightSpec> w;
  if (scale_) w.push_back({"gamma", {c}, Initializer::ones});
  if (center_) w.push_back({"beta", {c}, Initializer::zeros});
  w.push_back({"moving_mean", {c}, Initializer::zeros, false});
  w.push_back({"moving_variance", {c}, Initializer::ones, false});
  return w;
}

void BatchNormalization::on_build(Device& device, Rng&) {
  const int64_t c = input_shape().back();
  if (!scale_) ones_ = make_tensor(device, {c}, std::vector<float>(static_cast<size_t>(c), 1.0f));
  if (!center_) zeros_ = zeros(device, {c});
  batch_mean_ = Tensor(device, AXON_FLOAT32, {c});
  batch_variance_ = Tensor(device, AXON_FLOAT32, {c});
}

const Tensor& BatchNormalization::gamma() const { return scale_ ? weight(0).value : ones_; }
const Tensor& BatchNormalization::beta() const { return center_ ? weight(scale_ ? 1 : 0).value : zeros_; }
const Tensor& BatchNormalization::moving_mean() const { return weight((scale_ ? 1 : 0) + (center_ ? 1 : 0)).value; }
const Tensor& BatchNormalization::moving_variance() const {
  return weight((scale_ ? 1 : 0) + (center_ ? 1 : 0) + 1).value;
}

Tensor BatchNormalization::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor y = take_like(x);
  const float eps = static_cast<float>(epsilon_);
  if (!training()) {
    ops::fused_batch_norm(x, gamma(), beta(), moving_mean(), moving_variance(), y, ops::batch_norm_attrs(eps, false),
                          name());
    return y;
  }
  const int64_t c = input_shape().back();
  Tensor mean = take_exact({c}), variance = take_exact({c});
  ops::fused_batch_norm_training(x, gamma(), beta(), moving_mean(), moving_variance(), y, batch_mean_, batch_variance_,
                                 mean, variance, ops::batch_norm_attrs(eps, true), name());
  // Keras: moving * momentum + batch * (1.0 - momentum), both factors float32.
  const auto m = static_cast<float>(momentum_), w = static_cast<float>(1.0 - momentum_);
  Tensor mm = moving_mean(), mv = moving_variance();
  ops::moving_average(mm, mean, m, w, name());
  ops::moving_average(mv, variance, m, w, name());
  if (remembers()) x_ = x, mean_ = mean, variance_ = variance;
  return y;
}

void BatchNormalization::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const int64_t c = input_shape().back();
  Tensor dgamma = scale_ ? weight(0).grad : take_exact({c});
  Tensor dbeta = center_ ? weight(scale_ ? 1 : 0).grad : take_exact({c});
  // The gradient op always writes dx; it is the input's when needed.
  Tensor d = take_like(dy);
  ops::fused_batch_norm_grad(dy, x_, gamma(), mean_, variance_, d, dgamma, dbeta,
                             ops::batch_norm_attrs(static_cast<float>(epsilon_), true), name());
  if (need_dx[0]) dx[0] = d;
  x_ = mean_ = variance_ = Tensor();
}

int64_t BatchNormalization::forward_flops() const { return 4 * numel(input_shape()); }
int64_t BatchNormalization::backward_flops(bool) const { return 8 * numel(input_shape()); }

namespace {
std::unique_ptr<Layer> from_keras(const KerasLayerConfig& l) {
  // One axis, the last (checked against the input's rank with the shapes).
  int64_t axis = -1;
  if (l.has("axis")) {
    const json& a = l.at("axis");
    if (a.is_array() && a.size() != 1) l.fail("axis is " + json_text(a) + "; axon normalises over one axis, the last");
    axis = l.integer(a.is_array() ? a[0] : a, "axis", -1, 8);
  }
  if (l.boolean("renorm", false)) l.fail("renorm is true; axon supports false");
  if (l.boolean("synchronized", false))
    l.fail("synchronized is true; axon computes each replica's statistics (synchronized=False)");
  l.require_null({"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  l.check_initializer("beta_initializer", "Zeros");
  l.check_initializer("gamma_initializer", "Ones");
  l.check_initializer("moving_mean_initializer", "Zeros");
  l.check_initializer("moving_variance_initializer", "Ones");
  const double momentum = l.number("momentum", 0.99), epsilon = l.number("epsilon", 1e-3);
  if (!(momentum >= 0 && momentum <= 1)) l.fail("momentum is " + json_text(l.at("momentum")) + ", not from 0 to 1");
  if (!(epsilon > 0)) l.fail("epsilon is " + json_text(l.at("epsilon")) + ", not positive");
  return std::make_unique<BatchNormalization>(momentum, epsilon, l.boolean("center", true), l.boolean("scale", true),
                                              l.name(), static_cast<int>(axis));
}
const LayerEntry kEntry{"BatchNormalization", from_keras,
                        "momentum, epsilon, center, scale (axis -1; synchronized false; Keras' initializers)"};
const LayerRegistration kRegistered(kEntry);
}  // namespace
}  // namespace axon::nn
