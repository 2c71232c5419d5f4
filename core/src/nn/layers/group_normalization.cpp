// GroupNormalization with Keras 3's statistics: per sample and group, the
// mean and biased variance of the group's channels at every position, then
// (x - mean) / sqrt(variance + epsilon) * gamma + beta per channel. Keras
// folds gamma into the inverse deviation before the product; here LayerNorm
// normalises and gamma multiplies after (a rounding apart).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {
GroupNormalization::GroupNormalization(int groups, double epsilon, bool center, bool scale, std::string name)
    : Layer(std::move(name)), groups_(groups), epsilon_(epsilon), center_(center), scale_(scale) {
  if (groups == 0 || groups < -1) throw UsageError("GroupNormalization: groups must be positive, or -1");
  if (!(epsilon > 0 && std::isfinite(epsilon))) throw UsageError("GroupNormalization: epsilon must be positive");
}

std::unique_ptr<Layer> GroupNormalization::clone() const {
  return std::make_unique<GroupNormalization>(groups_, epsilon_, center_, scale_, name());
}

void GroupNormalization::write_config(KerasConfigWriter& c) const {
  c.integer("groups", groups_);
  c.integer("axis", -1);
  c.number("epsilon", epsilon_);
  c.boolean("center", center_);
  c.boolean("scale", scale_);
  c.initializer("beta_initializer", initializer("beta", "Zeros"));
  c.initializer("gamma_initializer", initializer("gamma", "Ones"));
  c.regularizer("beta_regularizer", regularizer("beta"));
  c.regularizer("gamma_regularizer", regularizer("gamma"));
  c.null("beta_constraint");
  c.null("gamma_constraint");
}

int64_t GroupNormalization::groups_of(const Shape& in) const {
  if (in.empty()) throw UsageError("needs an input with a channel axis");
  const int64_t c = in.back(), g = groups_ == -1 ? c : groups_;
  if (c % g != 0)
    throw UsageError(std::to_string(g) + " groups do not divide the input's " + std::to_string(c) + " channels");
  return g;
}

Shape GroupNormalization::output_shape(std::span<const Shape> in) const {
  groups_of(in[0]);
  return in[0];
}

std::vector<WeightSpec> GroupNormalization::weight_specs(std::span<const Shape> in) const {
  const Shape param{in[0].back()};
  std::vector<WeightSpec> w;
  if (scale_) w.push_back({"gamma", param, Initializer::ones});
  if (center_) w.push_back({"beta", param, Initializer::zeros});
  return w;
}

void GroupNormalization::on_build(Device& device, Rng&) {
  g_ = groups_of(input_shape());
  k_ = numel(input_shape()) / g_;
  ones_ = make_tensor(device, {k_}, std::vector<float>(static_cast<size_t>(k_), 1.0f));
  zeros_ = zeros(device, {k_});
}

Tensor GroupNormalization::as_image(const Tensor& t) const {
  const int64_t n = t.dim(0), c = input_shape().back();
  return t.reshaped({n, 1, numel(input_shape()) / c, c});
}

Tensor GroupNormalization::join(const std::vector<Tensor>& rows, const Tensor& like) const {
  Tensor joined = take_like(like);
  Tensor joined_image = as_image(joined);
  join_groups(rows, joined_image);
  return joined;
}

Tensor GroupNormalization::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t n = x.dim(0);
  const Tensor image = as_image(x);
  std::vector<Tensor> rows;
  x_parts_.clear();
  mean_.clear();
  inv_std_.clear();
  for (int64_t g = 0; g < g_; ++g) {
    const Tensor part = group_part(image, g_, g).reshaped({n, k_});
    Tensor row = take_exact({n, k_}), mean = take_exact({n}), inv_std = take_exact({n});
    ops::layer_norm(part, ones_, zeros_, row, mean, inv_std, static_cast<float>(epsilon_), name());
    rows.push_back(row);
    if (remembers()) x_parts_.push_back(part), mean_.push_back(mean), inv_std_.push_back(inv_std);
  }
  Tensor normalized = join(rows, x);
  Tensor y = normalized;
  if (scale_) {
    y = take_like(x);
    Tensor y_image = as_image(y);
    ops::depthwise_conv2d(as_image(normalized), channel_filter(weight(0).value), y_image, channel_product(), name());
  }
  if (center_) {
    Tensor y_image = as_image(y);
    ops::bias_add(y_image, weight(scale_ ? 1 : 0).value, y_image, name());
  }
  if (remembers()) normalized_ = scale_ ? normalized : Tensor();
  return y;
}

void GroupNormalization::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const int64_t n = dy.dim(0);
  const Tensor dy_image = as_image(dy);
  if (center_) {
    Tensor dbeta = weight(scale_ ? 1 : 0).grad;
    ops::bias_add_grad(dy_image, dbeta, name());
  }
  Tensor dnormalized = dy;
  if (scale_) {
    Tensor dgamma = channel_filter(weight(0).grad);
    ops::depthwise_conv2d_backprop_filter(as_image(normalized_), dy_image, dgamma, channel_product(), name());
    if (need_dx[0]) {
      dnormalized = take_like(dy);
      Tensor d_image = as_image(dnormalized);
      ops::depthwise_conv2d(dy_image, channel_filter(weight(0).value), d_image, channel_product(), name());
    }
  }
  if (need_dx[0]) {
    const Tensor d_image = as_image(dnormalized);
    std::vector<Tensor> rows;
    Tensor unused_scale = take_exact({k_}), unused_offset = take_exact({k_});
    for (int64_t g = 0; g < g_; ++g) {
      Tensor row = take_exact({n, k_});
      ops::layer_norm_grad(group_part(d_image, g_, g).reshaped({n, k_}), x_parts_[static_cast<size_t>(g)], ones_,
                           mean_[static_cast<size_t>(g)], inv_std_[static_cast<size_t>(g)], row, unused_scale,
                           unused_offset, static_cast<float>(epsilon_), name());
      rows.push_back(row);
    }
    dx[0] = join(rows, dy);
  }
  normalized_ = Tensor();
  x_parts_.clear();
  mean_.clear();
  inv_std_.clear();
}

int64_t GroupNormalization::forward_flops() const { return 6 * numel(input_shape()); }
int64_t GroupNormalization::backward_flops(bool need_dx) const { return numel(input_shape()) * (need_dx ? 10 : 2); }

namespace {
std::unique_ptr<Layer> group_normalization_from_keras(const KerasLayerConfig& l) {
  const int64_t groups = l.integer("groups", -1, 65536, 32);
  if (groups == 0) l.fail("groups is 0; axon takes a positive count, or -1 (one a channel)");
  const json& a = l.at_or_null("axis");
  if (!a.is_null() && !(a.is_number_integer() && a.get<int64_t>() == -1))
    l.fail("axis is " + json_text(a) + "; axon groups the last axis (-1) only");
  l.require_null({"beta_constraint", "gamma_constraint"});
  const double epsilon = l.number("epsilon", 1e-3);
  if (!(epsilon > 0)) l.fail("epsilon is " + json_text(l.at("epsilon")) + ", not positive");
  return with_weight_settings(std::make_unique<GroupNormalization>(static_cast<int>(groups), epsilon,
                                                                   l.boolean("center", true), l.boolean("scale", true),
                                                                   l.name()),
                              l,
                              {{"gamma", "gamma_initializer", "Ones", "gamma_regularizer"},
                               {"beta", "beta_initializer", "Zeros", "beta_regularizer"}});
}
const LayerEntry kGroupNormalizationEntry{
    "GroupNormalization", group_normalization_from_keras,
    "groups (dividing the channels; -1: one a channel), axis -1, epsilon, center, scale, gamma_initializer, "
    "beta_initializer, gamma_regularizer and beta_regularizer (L1, L2, L1L2)"};
const LayerRegistration kGroupNormalizationRegistered(kGroupNormalizationEntry);
}  // namespace
}  // namespace axon::nn
