// ReLU and LeakyReLU, Keras' layers: the plainest op that computes the
// configured function (Relu, Relu6, LeakyRelu, else ClippedRelu) and its
// gradient (ReluGrad reads y; the others read x).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>
#include <limits>

namespace axon::nn {

ReLU::ReLU(std::string name, std::optional<float> max_value, float negative_slope, float threshold, bool leaky_layer)
    : Layer(std::move(name)), max_value_(max_value), negative_slope_(negative_slope), threshold_(threshold),
      leaky_layer_(leaky_layer) {
  if (max_value && !(*max_value >= 0)) throw UsageError("ReLU: max_value must be >= 0");
  if (!std::isfinite(negative_slope) || negative_slope < 0) throw UsageError("ReLU: negative_slope must be >= 0");
  if (!std::isfinite(threshold)) throw UsageError("ReLU: threshold must be a number");
  if (threshold == 0 && negative_slope == 0 && !max_value) form_ = Form::relu;
  else if (threshold == 0 && negative_slope == 0 && *max_value == 6.0f) form_ = Form::relu6;
  else if (threshold == 0 && !max_value) form_ = Form::leaky;
  else form_ = Form::clipped;
}

std::unique_ptr<Layer> ReLU::clone() const {
  return std::make_unique<ReLU>(name(), max_value_, negative_slope_, threshold_, leaky_layer_);
}

void ReLU::write_config(KerasConfigWriter& c) const {
  if (leaky_layer_) {
    c.number("negative_slope", negative_slope_);
    return;
  }
  if (max_value_) c.number("max_value", *max_value_);
  else c.null("max_value");
  c.number("negative_slope", negative_slope_);
  c.number("threshold", threshold_);
}

Shape ReLU::output_shape(std::span<const Shape> in) const { return in[0]; }

namespace {
axon_clipped_relu_attrs clipped(std::optional<float> max_value, float slope, float threshold) {
  return ops::clipped_relu_attrs(slope, max_value ? *max_value : std::numeric_limits<float>::infinity(), threshold);
}
}  // namespace

Tensor ReLU::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor y = take_like(x);
  switch (form_) {
    case Form::relu: ops::relu(x, y, name()); break;
    case Form::relu6: ops::relu6(x, y, name()); break;
    case Form::leaky: ops::leaky_relu(x, y, negative_slope_, name()); break;
    case Form::clipped: ops::clipped_relu(x, y, clipped(max_value_, negative_slope_, threshold_), name()); break;
  }
  if (remembers()) {
    if (form_ == Form::relu) y_ = y;
    else x_ = x;
  }
  return y;
}

void ReLU::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) {
    dx[0] = take_like(dy);
    switch (form_) {
      case Form::relu: ops::relu_grad(dy, y_, dx[0], name()); break;
      case Form::relu6: ops::relu6_grad(dy, x_, dx[0], name()); break;
      case Form::leaky: ops::leaky_relu_grad(dy, x_, dx[0], negative_slope_, name()); break;
      case Form::clipped:
        ops::clipped_relu_grad(dy, x_, dx[0], clipped(max_value_, negative_slope_, threshold_), name());
        break;
    }
  }
  x_ = y_ = Tensor();
}

namespace {

std::unique_ptr<Layer> relu_from_keras(const KerasLayerConfig& l) {
  std::optional<float> max_value;
  if (l.has("max_value")) {
    max_value = l.float_number("max_value", 0);
    if (*max_value < 0) l.fail("max_value is " + json_text(l.at("max_value")) + ", below 0");
  }
  const float slope = l.float_number("negative_slope", 0), threshold = l.float_number("threshold", 0);
  if (slope < 0) l.fail("negative_slope is " + json_text(l.at("negative_slope")) + ", below 0");
  // Keras clips to [0, max_value] after the threshold, so with a threshold
  // below 0 its values between the threshold and 0 become 0: not axon's op.
  if (threshold < 0 && max_value) l.fail("a threshold below 0 together with max_value is not supported");
  return std::make_unique<ReLU>(l.name(), max_value, slope, threshold);
}

std::unique_ptr<Layer> leaky_from_keras(const KerasLayerConfig& l) {
  // Keras 3 says negative_slope, Keras 2 alpha; both default to 0.3.
  const float slope = l.float_number(l.has("negative_slope") ? "negative_slope" : "alpha", 0.3);
  if (slope < 0) l.fail("negative_slope is below 0");
  return std::make_unique<ReLU>(l.name(), std::nullopt, slope, 0.0f, true);
}

const LayerEntry kRelu{"ReLU", relu_from_keras,
                       "max_value, negative_slope, threshold (not below 0 together with max_value)"};
const LayerEntry kLeaky{"LeakyReLU", leaky_from_keras, "negative_slope (Keras 2: alpha)"};
const LayerRegistration kRegisteredRelu(kRelu);
const LayerRegistration kRegisteredLeaky(kLeaky);

}  // namespace
}  // namespace axon::nn
