// LayerScale, ConvNeXt's per-channel scale: forward DepthwiseConv2dNative
// with a 1x1 filter [1, 1, C, 1] (gamma), each value times its channel's
// gamma once, as Keras' x * gamma rounds; backward
// DepthwiseConv2dNativeBackpropFilter (gamma's gradient: sum of x * dy per
// channel) and DepthwiseConv2dNativeBackpropInput (dy * gamma).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <algorithm>
#include <cmath>

namespace axon::nn {
LayerScale::LayerScale(double init_values, int projection_dim, std::string name)
    : Layer(std::move(name)), init_values_(init_values), projection_dim_(projection_dim) {
  if (projection_dim <= 0) throw UsageError("LayerScale: projection_dim must be positive");
  if (!std::isfinite(init_values)) throw UsageError("LayerScale: init_values must be a number");
  KerasInitializer init = keras_initializer("Constant");
  init.value = init_values;
  set_initializer("variable", init);
}

std::unique_ptr<Layer> LayerScale::clone() const {
  return std::make_unique<LayerScale>(init_values_, projection_dim_, name());
}

void LayerScale::write_config(KerasConfigWriter& c) const {
  c.number("init_values", init_values_);
  c.integer("projection_dim", projection_dim_);
}

Shape LayerScale::output_shape(std::span<const Shape> in) const {
  if (in[0].empty() || in[0].back() != projection_dim_)
    throw UsageError("scales " + std::to_string(projection_dim_) + " channels; its input is " + shape_string(in[0]));
  return in[0];
}

// Keras' add_weight without a name: its weight is called "variable".
std::vector<WeightSpec> LayerScale::weight_specs(std::span<const Shape>) const {
  return {{"variable", {projection_dim_}, Initializer::zeros}};
}

Tensor LayerScale::as_image(const Tensor& t) const {
  const int64_t n = t.dim(0), c = projection_dim_;
  return t.reshaped({n, 1, t.numel() / std::max<int64_t>(n, 1) / c, c});
}

Tensor LayerScale::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor y = take_like(x);
  Tensor y4 = as_image(y);
  ops::depthwise_conv2d(as_image(x), channel_filter(weight(0).value), y4, channel_product(), name());
  if (remembers()) x_ = x;
  return y;
}

void LayerScale::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const Tensor dy4 = as_image(dy);
  Tensor dfilter = channel_filter(weight(0).grad);
  ops::depthwise_conv2d_backprop_filter(as_image(x_), dy4, dfilter, channel_product(), name());
  if (need_dx[0]) {
    Tensor d = take_like(dy);
    Tensor d4 = as_image(d);
    ops::depthwise_conv2d_backprop_input(dy4, channel_filter(weight(0).value), d4, channel_product(), name());
    dx[0] = d;
  }
  x_ = Tensor();
}

int64_t LayerScale::forward_flops() const { return numel(input_shape()); }
int64_t LayerScale::backward_flops(bool need_dx) const { return numel(input_shape()) * (need_dx ? 3 : 2); }

namespace {
std::unique_ptr<Layer> layer_scale_from_keras(const KerasLayerConfig& l) {
  const int64_t dim = l.integer("projection_dim", 1, 65536, 0);
  if (dim == 0) l.fail("has no projection_dim");
  if (!l.has("init_values")) l.fail("has no init_values");
  const double init = l.number("init_values", 0.0);
  if (!std::isfinite(init) || std::fabs(init) > 1e30) l.fail("init_values is " + json_text(l.at("init_values")));
  return std::make_unique<LayerScale>(init, static_cast<int>(dim), l.name());
}
const LayerEntry kLayerScaleEntry{"LayerScale", layer_scale_from_keras,
                                  "init_values, projection_dim (ConvNeXt's, keras.src.applications.convnext)"};
const LayerRegistration kLayerScaleRegistered(kLayerScaleEntry);
}  // namespace
}  // namespace axon::nn
