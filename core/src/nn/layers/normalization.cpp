// Normalization: FusedBatchNormV3 in inference mode (scale 1, offset 0,
// epsilon 1e-14, so rsqrt(variance + 1e-14) is Keras' 1 / max(sqrt(variance),
// 1e-7) within rounding, a zero variance included); backward
// FusedBatchNormGradV3 in inference mode (dy / sqrt(variance)).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {
namespace {
constexpr float kEpsilon = 1e-14f;
}

Normalization::Normalization(std::vector<float> mean, std::vector<float> variance, std::string name, int axis)
    : Layer(std::move(name)), mean_(std::move(mean)), variance_(std::move(variance)), axis_(axis) {
  if (mean_.size() != variance_.size())
    throw UsageError("Normalization: mean and variance have " + std::to_string(mean_.size()) + " and " +
                     std::to_string(variance_.size()) + " values");
  for (size_t i = 0; i < mean_.size(); ++i)
    if (!std::isfinite(mean_[i]) || !(variance_[i] >= 0) || !std::isfinite(variance_[i]))
      throw UsageError("Normalization: mean and variance must be numbers, the variance 0 or more");
}

std::unique_ptr<Layer> Normalization::clone() const {
  return std::make_unique<Normalization>(mean_, variance_, name(), axis_);
}

void Normalization::write_config(KerasConfigWriter& c) const {
  KerasConfigWriter::Impl& w = c.impl();
  w.config["axis"] = json::array({axis_});
  c.boolean("invert", false);
  if (mean_.empty()) {
    c.null("mean");
    c.null("variance");
  } else {
    w.config["mean"] = mean_;
    w.config["variance"] = variance_;
  }
}

Shape Normalization::output_shape(std::span<const Shape> in) const {
  if (in[0].empty()) throw UsageError("needs an input with a channel dimension");
  if (axis_ != -1 && axis_ != static_cast<int>(in[0].size()))
    throw UsageError("axis is " + std::to_string(axis_) + "; axon normalises over the last axis (-1 or " +
                     std::to_string(in[0].size()) + " here)");
  if (mean_.size() > 1 && static_cast<int64_t>(mean_.size()) != in[0].back())
    throw UsageError("has " + std::to_string(mean_.size()) + " means for an input of " +
                     std::to_string(in[0].back()) + " channels (" + shape_string(in[0]) + ")");
  return in[0];
}

std::vector<WeightSpec> Normalization::weight_specs(std::span<const Shape> in) const {
  if (!mean_.empty()) return {};
  const int64_t c = in[0].back();
  return {{"mean", {c}, Initializer::zeros, false},
          {"variance", {c}, Initializer::ones, false},
          {"count", {}, Initializer::zeros, false}};
}

void Normalization::on_build(Device& device, Rng&) {
  const int64_t c = input_shape().back();
  ones_ = make_tensor(device, {c}, std::vector<float>(static_cast<size_t>(c), 1.0f));
  zeros_ = zeros(device, {c});
  if (mean_.empty()) return;
  auto per_channel = [&](const std::vector<float>& v) {
    return v.size() == 1 ? std::vector<float>(static_cast<size_t>(c), v[0]) : v;
  };
  mean_t_ = make_tensor(device, {c}, per_channel(mean_));
  variance_t_ = make_tensor(device, {c}, per_channel(variance_));
}

Tensor Normalization::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor y = take_like(x);
  ops::fused_batch_norm(x, ones_, zeros_, mean(), variance(), y, ops::batch_norm_attrs(kEpsilon, false), name());
  if (remembers()) x_ = x;
  return y;
}

void Normalization::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) {
    const int64_t c = input_shape().back();
    dx[0] = take_like(dy);
    Tensor dscale = take_exact({c}), doffset = take_exact({c});
    ops::fused_batch_norm_grad(dy, x_, ones_, mean(), variance(), dx[0], dscale, doffset,
                               ops::batch_norm_attrs(kEpsilon, false), name());
  }
  x_ = Tensor();
}

namespace {

// mean and variance: null, a number, or a number per channel.
std::vector<float> statistic(const KerasLayerConfig& l, const char* key) {
  const json& v = l.at_or_null(key);
  std::vector<float> out;
  if (v.is_null()) return out;
  const json list = v.is_array() ? v : json::array({v});
  if (list.empty() || list.size() > 65536) l.fail(std::string(key) + " is " + json_text(v) + "; axon takes a number or a list");
  for (const json& x : list) {
    if (!x.is_number() || !std::isfinite(x.get<double>()) || std::fabs(x.get<double>()) > 1e30)
      l.fail(std::string(key) + " is " + json_text(v) + "; axon takes numbers a float holds");
    out.push_back(static_cast<float>(x.get<double>()));
  }
  return out;
}

std::unique_ptr<Layer> normalization_from_keras(const KerasLayerConfig& l) {
  // axis: the channels (-1, or 3 as Keras writes it for images: checked against the input).
  const json& axis = l.at_or_null("axis");
  const json one = axis.is_array() && axis.size() == 1 ? axis[0] : axis;
  if (!one.is_number_integer() || one.get<int64_t>() < -1 || one.get<int64_t>() > 8 || one.get<int64_t>() == 0)
    l.fail("axis is " + json_text(axis) + "; axon normalises over the last axis (one axis: -1, or the last counting the batch)");
  if (l.boolean("invert", false)) l.fail("invert is true; axon normalises, it does not invert");
  std::vector<float> mean = statistic(l, "mean"), variance = statistic(l, "variance");
  if (mean.empty() != variance.empty()) l.fail("has a mean or a variance without the other");
  return std::make_unique<Normalization>(std::move(mean), std::move(variance), l.name(),
                                         static_cast<int>(one.get<int64_t>()));
}

const LayerEntry kNormalizationEntry{
    "Normalization", normalization_from_keras,
    "axis -1; mean and variance (numbers, or the weights mean, variance and count: Keras' adapt() state)"};
const LayerRegistration kNormalizationRegistered(kNormalizationEntry);

}  // namespace
}  // namespace axon::nn
