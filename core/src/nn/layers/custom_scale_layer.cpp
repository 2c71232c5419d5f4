// CustomScaleLayer: Inception-ResNet-v2's residual sum x + r * scale, as
// Keras' call rounds it: the product in float32 (TensorFlow's Mul by the
// float32 of the Python number), then the sum (AddN of two). Backward:
// Add's gradient to x, Mul's (dy * scale, a Scale) to r.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

CustomScaleLayer::CustomScaleLayer(double scale, std::string name) : Layer(std::move(name)), scale_(scale) {
  if (!std::isfinite(static_cast<float>(scale))) throw UsageError("CustomScaleLayer: scale must be a float32 number");
}

void CustomScaleLayer::write_config(KerasConfigWriter& c) const { c.number("scale", scale_); }

Shape CustomScaleLayer::output_shape(std::span<const Shape> in) const {
  if (in[0] != in[1])
    throw UsageError("its inputs differ in shape: " + shape_string(in[0]) + " and " + shape_string(in[1]) +
                     " (axon adds a scaled residual of the shortcut's shape)");
  return in[0];
}

Tensor CustomScaleLayer::forward(std::span<const Tensor> in) {
  Tensor scaled = take_like(in[1]);
  ops::scale(in[1], scaled, static_cast<float>(scale_), name());
  Tensor y = take_like(in[0]);
  ops::add_n({&in[0], &scaled}, y, name());
  return y;
}

void CustomScaleLayer::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) dx[0] = dy;
  if (need_dx[1]) {
    dx[1] = take_like(dy);
    ops::scale(dy, dx[1], static_cast<float>(scale_), name());
  }
}

int64_t CustomScaleLayer::forward_flops() const { return 2 * numel(input_shape()); }
int64_t CustomScaleLayer::backward_flops(bool need_dx) const { return need_dx ? numel(input_shape()) : 0; }

namespace {
std::unique_ptr<Layer> custom_scale_layer_from_keras(const KerasLayerConfig& l) {
  if (!l.has("scale")) l.fail("has no scale");
  if (!l.at("scale").is_number()) l.fail("scale is " + json_text(l.at("scale")) + "; axon takes one number");
  const double scale = l.number("scale", 0.0);
  if (!std::isfinite(scale) || std::fabs(scale) > 1e30) l.fail("scale is " + json_text(l.at("scale")));
  return std::make_unique<CustomScaleLayer>(scale, l.name());
}
const LayerEntry kCustomScaleLayerEntry{
    "CustomScaleLayer", custom_scale_layer_from_keras,
    "scale (Inception-ResNet-v2's, keras.src.applications.inception_resnet_v2; two inputs of one shape)"};
const LayerRegistration kCustomScaleLayerRegistered(kCustomScaleLayerEntry);
}  // namespace
}  // namespace axon::nn
