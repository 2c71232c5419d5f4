// BatchNormalization with Keras 3's numbers. Training: FusedBatchNormV3 with
// the batch's statistics (its reserve spaces are the mean and the biased
// variance Keras uses), then MovingAverage moves moving_mean and
// moving_variance towards them; backward FusedBatchNormGradV3. Inference:
// FusedBatchNormV3 with the moving statistics.
//
// Synchronized (the statistics of the global batch, over every replica):
//   forward:  s = [sum x, sum x^2] per channel (BiasAddGrad of x and of x*x),
//             all-reduced; mean = s0 / n, variance = max(s1 / n - mean^2, 0)
//             (Keras 3's sync form), n the global values per channel; then
//             FusedBatchNormV3 in inference mode with that mean and variance.
//   backward: FusedBatchNormGradV3 in inference mode gives d = dy gamma r and
//             this replica's g = [sum dy xhat, sum dy] (the weights' gradients,
//             summed over replicas later with the others); g all-reduced, the
//             global batch's dx = d - gamma r (g1 + xhat g0) / n, its second
//             term one more FusedBatchNormV3 in inference mode (per channel
//             xhat * a + b), r = rsqrt(variance + epsilon) taken from the
//             normalisation of a row of ones.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

BatchNormalization::BatchNormalization(double momentum, double epsilon, bool center, bool scale, std::string name,
                                       int axis, bool synchronized)
    : Layer(std::move(name)), momentum_(momentum), epsilon_(epsilon), center_(center), scale_(scale), axis_(axis),
      synchronized_(synchronized) {
  if (!(momentum >= 0 && momentum <= 1)) throw UsageError("BatchNormalization: momentum must be from 0 to 1");
  if (!(epsilon > 0 && std::isfinite(epsilon))) throw UsageError("BatchNormalization: epsilon must be positive");
}

std::unique_ptr<Layer> BatchNormalization::clone() const {
  return std::make_unique<BatchNormalization>(momentum_, epsilon_, center_, scale_, name(), axis_, synchronized_);
}

void BatchNormalization::write_config(KerasConfigWriter& c) const {
  c.integer("axis", axis_);
  c.number("momentum", momentum_);
  c.number("epsilon", epsilon_);
  c.boolean("center", center_);
  c.boolean("scale", scale_);
  c.initializer("beta_initializer", keras_initializer("Zeros"));
  c.initializer("gamma_initializer", keras_initializer("Ones"));
  c.initializer("moving_mean_initializer", keras_initializer("Zeros"));
  c.initializer("moving_variance_initializer", keras_initializer("Ones"));
  c.boolean("synchronized", synchronized_);
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
  if (!scale_ || synchronized_) ones_ = make_tensor(device, {c}, std::vector<float>(static_cast<size_t>(c), 1.0f));
  if (!center_ || synchronized_) zeros_ = zeros(device, {c});
  if (synchronized_) unit_row_ = ones_.reshaped({1, c});
  batch_mean_ = Tensor(device, AXON_FLOAT32, {c});
  batch_variance_ = Tensor(device, AXON_FLOAT32, {c});
}

const Tensor& BatchNormalization::gamma() const { return scale_ ? weight(0).value : ones_; }
float BatchNormalization::global_count() const {
  const int64_t per_sample = numel(input_shape()) / input_shape().back();
  return static_cast<float>(step_context()->global_samples() * per_sample);
}
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
  if (synchronized_ && step_context() != nullptr) return forward_synchronized(x);
  const int64_t c = input_shape().back();
  Tensor mean = take_exact({c}), variance = take_exact({c});
  ops::fused_batch_norm_training(x, gamma(), beta(), moving_mean(), moving_variance(), y, batch_mean_, batch_variance_,
                                 mean, variance, ops::batch_norm_attrs(eps, true), name());
  move_statistics(mean, variance);
  if (remembers()) x_ = x, mean_ = mean, variance_ = variance;
  return y;
}

void BatchNormalization::move_statistics(const Tensor& mean, const Tensor& variance) {
  // Keras: moving * momentum + batch * (1.0 - momentum), both factors float32.
  const auto m = static_cast<float>(momentum_), w = static_cast<float>(1.0 - momentum_);
  Tensor mm = moving_mean(), mv = moving_variance();
  ops::moving_average(mm, mean, m, w, name());
  ops::moving_average(mv, variance, m, w, name());
}

std::pair<Tensor, Tensor> BatchNormalization::global_statistics(Tensor& sums) {
  const int64_t c = input_shape().back();
  step_context()->all_reduce(sums, name() + " statistics");
  const float inv_n = 1.0f / global_count();
  Tensor mean = take_exact({c}), mean_sq = take_exact({c}), square = take_exact({c}), diff = take_exact({c});
  ops::scale(sums.view(0, {c}), mean, inv_n, name());
  ops::scale(sums.view(c, {c}), mean_sq, inv_n, name());
  ops::mul(mean, mean, square, name());
  ops::sub(mean_sq, square, diff, name());
  Tensor variance = take_exact({c});
  ops::relu(diff, variance, name());
  // Every replica moves its moving statistics by the same global ones.
  move_statistics(mean, variance);
  return {mean, variance};
}

Tensor BatchNormalization::forward_synchronized(const Tensor& x) {
  const int64_t c = input_shape().back();
  Tensor sums = take_exact({2 * c});
  Tensor sum = sums.view(0, {c}), sum_sq = sums.view(c, {c});
  ops::bias_add_grad(x, sum, name());
  Tensor sq = take_like(x);
  ops::mul(x, x, sq, name());
  ops::bias_add_grad(sq, sum_sq, name());
  sq = Tensor();
  auto [mean, variance] = global_statistics(sums);
  Tensor y = take_like(x);
  ops::fused_batch_norm(x, gamma(), beta(), mean, variance, y,
                        ops::batch_norm_attrs(static_cast<float>(epsilon_), false), name());
  if (remembers()) x_ = x, mean_ = mean, variance_ = variance;
  return y;
}

void BatchNormalization::backward_synchronized(const Tensor& dy, Tensor& dx) {
  const int64_t c = input_shape().back();
  const float eps = static_cast<float>(epsilon_);
  const axon_batch_norm_attrs inference = ops::batch_norm_attrs(eps, false);
  Tensor d = take_like(dy), sums = take_exact({2 * c});
  Tensor dgamma = sums.view(0, {c}), dbeta = sums.view(c, {c});
  ops::fused_batch_norm_grad(dy, x_, gamma(), mean_, variance_, d, dgamma, dbeta, inference, name());
  // This replica's share of the weights' gradients; the strategy sums them.
  if (scale_) ops::identity(dgamma, weight(0).grad, name());
  if (center_) ops::identity(dbeta, weight(scale_ ? 1 : 0).grad, name());
  step_context()->all_reduce(sums, name() + " gradient sums");
  // r = rsqrt(variance + epsilon): the normalisation of a row of ones.
  Tensor r = take_exact({1, c});
  ops::fused_batch_norm(unit_row_, ones_, zeros_, zeros_, variance_, r, inference, name());
  const Tensor r_c = r.reshaped({c});
  Tensor gr = take_exact({c}), a = take_exact({c}), b = take_exact({c});
  ops::mul(gamma(), r_c, gr, name());
  ops::mul(gr, dgamma, a, name());
  ops::mul(gr, dbeta, b, name());
  const float minus_inv_n = -1.0f / global_count();
  ops::scale(a, a, minus_inv_n, name());
  ops::scale(b, b, minus_inv_n, name());
  // xhat * a + b, then dx = d + that.
  Tensor correction = take_like(dy);
  ops::fused_batch_norm(x_, a, b, mean_, variance_, correction, inference, name());
  dx = take_like(dy);
  ops::add_n({&d, &correction}, dx, name());
}

void BatchNormalization::join_without_samples(bool forward) {
  if (!synchronized_ || step_context() == nullptr) return;
  Tensor sums = take_exact({2 * input_shape().back()});
  ops::fill(sums, 0.0f, name());
  if (forward) global_statistics(sums);  // the moving statistics move as on the others
  else step_context()->all_reduce(sums, name() + " gradient sums");
}

void BatchNormalization::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (synchronized_ && step_context() != nullptr) {
    Tensor d;
    backward_synchronized(dy, d);
    if (need_dx[0]) dx[0] = d;
    x_ = mean_ = variance_ = Tensor();
    return;
  }
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
std::unique_ptr<Layer> batch_normalization_from_keras(const KerasLayerConfig& l) {
  // One axis, the last (checked against the input's rank with the shapes).
  int64_t axis = -1;
  if (l.has("axis")) {
    const json& a = l.at("axis");
    if (a.is_array() && a.size() != 1) l.fail("axis is " + json_text(a) + "; axon normalises over one axis, the last");
    axis = l.integer(a.is_array() ? a[0] : a, "axis", -1, 8);
  }
  if (l.boolean("renorm", false)) l.fail("renorm is true; axon supports false");
  l.require_null({"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"});
  l.check_initializer("beta_initializer", "Zeros");
  l.check_initializer("gamma_initializer", "Ones");
  l.check_initializer("moving_mean_initializer", "Zeros");
  l.check_initializer("moving_variance_initializer", "Ones");
  const double momentum = l.number("momentum", 0.99), epsilon = l.number("epsilon", 1e-3);
  if (!(momentum >= 0 && momentum <= 1)) l.fail("momentum is " + json_text(l.at("momentum")) + ", not from 0 to 1");
  if (!(epsilon > 0)) l.fail("epsilon is " + json_text(l.at("epsilon")) + ", not positive");
  return std::make_unique<BatchNormalization>(momentum, epsilon, l.boolean("center", true), l.boolean("scale", true),
                                              l.name(), static_cast<int>(axis), l.boolean("synchronized", false));
}
const LayerEntry kBatchNormalizationEntry{
    "BatchNormalization", batch_normalization_from_keras,
    "momentum, epsilon, center, scale, synchronized (axis -1; Keras' initializers)"};
const LayerRegistration kBatchNormalizationRegistered(kBatchNormalizationEntry);
}  // namespace
}  // namespace axon::nn
