// SeparableConv2D: a depthwise convolution (DepthwiseConv2dNative, with the
// layer's strides and dilation) whose output a 1x1 convolution (Conv2D)
// mixes into `filters` channels, then BiasAdd and the activation, as
// TensorFlow's separable_conv2d computes it. Backward: the activation's
// gradient, BiasAddGrad, the 1x1 convolution's filter and input gradients,
// then the depthwise ones.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

SeparableConv2D::SeparableConv2D(int filters, Size2 kernel_size, Size2 strides, axon_padding padding,
                                 int depth_multiplier, Size2 dilation_rate, Activation activation, bool use_bias,
                                 std::string name)
    : Layer(std::move(name)), filters_(filters), kernel_(kernel_size),
      depthwise_(ops::conv2d_attrs(strides.h, strides.w, dilation_rate.h, dilation_rate.w, padding)),
      pointwise_(ops::conv2d_attrs(1, AXON_PADDING_VALID)), multiplier_(depth_multiplier), activation_(activation),
      use_bias_(use_bias) {
  if (filters <= 0 || kernel_.h <= 0 || kernel_.w <= 0 || strides.h <= 0 || strides.w <= 0 || dilation_rate.h <= 0 ||
      dilation_rate.w <= 0 || depth_multiplier <= 0)
    throw UsageError("SeparableConv2D: filters, kernel size, strides, dilation and depth_multiplier must be positive");
  if ((strides.h > 1 || strides.w > 1) && (dilation_rate.h > 1 || dilation_rate.w > 1))
    throw UsageError("SeparableConv2D: strides > 1 together with dilation_rate > 1 is not supported (as in Keras)");
}

std::unique_ptr<Layer> SeparableConv2D::clone() const {
  return std::make_unique<SeparableConv2D>(filters_, kernel_, Size2(depthwise_.stride_h, depthwise_.stride_w),
                                           depthwise_.padding, multiplier_,
                                           Size2(depthwise_.dilation_h, depthwise_.dilation_w), activation_, use_bias_,
                                           name());
}

void SeparableConv2D::write_config(KerasConfigWriter& c) const {
  c.integer("filters", filters_);
  c.integers("kernel_size", {kernel_.h, kernel_.w});
  c.integers("strides", {depthwise_.stride_h, depthwise_.stride_w});
  c.string("padding", depthwise_.padding == AXON_PADDING_SAME ? "same" : "valid");
  c.string("data_format", "channels_last");
  c.integers("dilation_rate", {depthwise_.dilation_h, depthwise_.dilation_w});
  c.integer("depth_multiplier", multiplier_);
  c.string("activation", activation_name(activation_));
  c.boolean("use_bias", use_bias_);
  c.initializer("depthwise_initializer", initializer("depthwise_kernel", "GlorotUniform"));
  c.initializer("pointwise_initializer", initializer("pointwise_kernel", "GlorotUniform"));
  c.initializer("bias_initializer", initializer("bias", "Zeros"));
  c.regularizer("depthwise_regularizer", regularizer("depthwise_kernel"));
  c.regularizer("pointwise_regularizer", regularizer("pointwise_kernel"));
  c.regularizer("bias_regularizer", regularizer("bias"));
}

Shape SeparableConv2D::depthwise_shape(const Shape& s) const {
  const WindowAxis h = window_axis(s[0], kernel_.h, depthwise_.stride_h, depthwise_.dilation_h, depthwise_.padding);
  const WindowAxis w = window_axis(s[1], kernel_.w, depthwise_.stride_w, depthwise_.dilation_w, depthwise_.padding);
  return {h.out, w.out, s[2] * multiplier_};
}

Shape SeparableConv2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  const Shape d = depthwise_shape(s);
  if (d[0] < 1 || d[1] < 1)
    throw UsageError("its " + std::to_string(kernel_.h) + "x" + std::to_string(kernel_.w) +
                     " kernel is larger than its input " + shape_string(s));
  return {d[0], d[1], filters_};
}

std::vector<WeightSpec> SeparableConv2D::weight_specs(std::span<const Shape> in) const {
  const int64_t c = in[0].at(2);
  std::vector<WeightSpec> w{{"depthwise_kernel", {kernel_.h, kernel_.w, c, multiplier_}, Initializer::glorot_uniform},
                            {"pointwise_kernel", {1, 1, c * multiplier_, filters_}, Initializer::glorot_uniform}};
  if (use_bias_) w.push_back({"bias", {filters_}, Initializer::zeros});
  return w;
}

Tensor SeparableConv2D::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t n = x.dim(0);
  const Activation act = applied();
  Tensor t = take(n, depthwise_shape(input_shape()));
  ops::depthwise_conv2d(x, weight(0).value, t, depthwise_, name());
  Tensor y = take(n, output_shape());
  Tensor z = take_pre_activation(act, y);
  ops::conv2d(t, weight(1).value, z, pointwise_, name());
  finish_forward(act, use_bias_ ? &weight(2).value : nullptr, x, z, y, kept_);
  if (remembers()) t_ = t;
  return y;
}

void SeparableConv2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const int64_t n = dy.dim(0);
  const Tensor dz = bias_and_activation_grad(applied(), dy, kept_.z, kept_.y, use_bias_ ? &weight(2).grad : nullptr);
  ops::conv2d_backprop_filter(t_, dz, weight(1).grad, pointwise_, name());
  Tensor dt = take_like(t_);
  ops::conv2d_backprop_input(dz, weight(1).value, dt, pointwise_, name());
  ops::depthwise_conv2d_backprop_filter(kept_.x, dt, weight(0).grad, depthwise_, name());
  if (need_dx[0]) {
    dx[0] = take(n, input_shape());
    ops::depthwise_conv2d_backprop_input(dt, weight(0).value, dx[0], depthwise_, name());
  }
  kept_ = {};
  t_ = Tensor();
}

int64_t SeparableConv2D::forward_flops() const {
  const Shape d = depthwise_shape(input_shape());
  return 2 * d[0] * d[1] * d[2] * (kernel_.h * kernel_.w + filters_);
}

int64_t SeparableConv2D::backward_flops(bool need_dx) const {
  const Shape d = depthwise_shape(input_shape());
  const int64_t depthwise = 2 * d[0] * d[1] * d[2] * kernel_.h * kernel_.w, pointwise = 2 * d[0] * d[1] * d[2] * filters_;
  return 2 * pointwise + depthwise * (need_dx ? 2 : 1);
}

namespace {
std::unique_ptr<Layer> separable_conv2d_from_keras(const KerasLayerConfig& l) {
  const int64_t filters = l.integer("filters", 1, 65536, 0);
  if (filters == 0) l.fail("has no filters");
  const auto kernel = l.pair("kernel_size", 1, limits::kMaxImageSide, {0, 0});
  if (kernel.first == 0) l.fail("has no kernel_size");
  const auto strides = l.pair("strides", 1, limits::kMaxImageSide, {1, 1});
  const auto dilation = l.pair("dilation_rate", 1, limits::kMaxImageSide, {1, 1});
  if ((strides.first > 1 || strides.second > 1) && (dilation.first > 1 || dilation.second > 1))
    l.fail("strides > 1 together with dilation_rate > 1 is not supported (Keras refuses it too)");
  const int64_t multiplier = l.integer("depth_multiplier", 1, 1024, 1);
  l.require_null({"activity_regularizer", "depthwise_constraint", "pointwise_constraint", "bias_constraint"});
  return with_weight_settings(
      std::make_unique<SeparableConv2D>(
          static_cast<int>(filters), Size2(static_cast<int>(kernel.first), static_cast<int>(kernel.second)),
          Size2(static_cast<int>(strides.first), static_cast<int>(strides.second)), l.padding(),
          static_cast<int>(multiplier), Size2(static_cast<int>(dilation.first), static_cast<int>(dilation.second)),
          l.activation(), l.boolean("use_bias", true), l.name()),
      l,
      {{"depthwise_kernel", "depthwise_initializer", "GlorotUniform", "depthwise_regularizer"},
       {"pointwise_kernel", "pointwise_initializer", "GlorotUniform", "pointwise_regularizer"},
       {"bias", "bias_initializer", "Zeros", "bias_regularizer"}});
}
const LayerEntry kSeparableConv2dEntry{
    "SeparableConv2D", separable_conv2d_from_keras,
    "filters, kernel_size, strides, padding (valid, same), depth_multiplier, dilation_rate, activation, use_bias, "
    "depthwise_initializer, pointwise_initializer, bias_initializer, their regularizers (L1, L2, L1L2)"};
const LayerRegistration kSeparableConv2dRegistered(kSeparableConv2dEntry);
}  // namespace
}  // namespace axon::nn
