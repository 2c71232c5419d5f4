// DepthwiseConv2D. Forward: DepthwiseConv2dNative, BiasAdd (in place), the
// activation. Backward: the activation's gradient, BiasAddGrad,
// DepthwiseConv2dNativeBackpropFilter and, when the input needs it,
// DepthwiseConv2dNativeBackpropInput.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

DepthwiseConv2D::DepthwiseConv2D(Size2 kernel_size, Size2 strides, axon_padding padding, int depth_multiplier,
                                 Size2 dilation_rate, Activation activation, bool use_bias, std::string name)
    : Layer(std::move(name)), kernel_(kernel_size),
      attrs_(ops::conv2d_attrs(strides.h, strides.w, dilation_rate.h, dilation_rate.w, padding)),
      multiplier_(depth_multiplier), activation_(activation), use_bias_(use_bias) {
  if (kernel_.h <= 0 || kernel_.w <= 0 || strides.h <= 0 || strides.w <= 0 || dilation_rate.h <= 0 ||
      dilation_rate.w <= 0 || depth_multiplier <= 0)
    throw UsageError("DepthwiseConv2D: kernel size, strides, dilation and depth_multiplier must be positive");
  if ((strides.h > 1 || strides.w > 1) && (dilation_rate.h > 1 || dilation_rate.w > 1))
    throw UsageError("DepthwiseConv2D: strides > 1 together with dilation_rate > 1 is not supported (as in Keras)");
}

std::unique_ptr<Layer> DepthwiseConv2D::clone() const {
  return std::make_unique<DepthwiseConv2D>(kernel_, Size2(attrs_.stride_h, attrs_.stride_w), attrs_.padding,
                                           multiplier_, Size2(attrs_.dilation_h, attrs_.dilation_w), activation_,
                                           use_bias_, name());
}

void DepthwiseConv2D::write_config(KerasConfigWriter& c) const {
  c.integers("kernel_size", {kernel_.h, kernel_.w});
  c.integers("strides", {attrs_.stride_h, attrs_.stride_w});
  c.string("padding", attrs_.padding == AXON_PADDING_SAME ? "same" : "valid");
  c.integer("depth_multiplier", multiplier_);
  c.string("data_format", "channels_last");
  c.integers("dilation_rate", {attrs_.dilation_h, attrs_.dilation_w});
  c.string("activation", activation_name(activation_));
  c.boolean("use_bias", use_bias_);
  c.initializer("depthwise_initializer", initializer("kernel", "GlorotUniform"));
  c.initializer("bias_initializer", initializer("bias", "Zeros"));
  c.regularizer("depthwise_regularizer", regularizer("kernel"));
  c.regularizer("bias_regularizer", regularizer("bias"));
}

Shape DepthwiseConv2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  const WindowAxis h = window_axis(s[0], kernel_.h, attrs_.stride_h, attrs_.dilation_h, attrs_.padding);
  const WindowAxis w = window_axis(s[1], kernel_.w, attrs_.stride_w, attrs_.dilation_w, attrs_.padding);
  if (h.out < 1 || w.out < 1)
    throw UsageError("its " + std::to_string(kernel_.h) + "x" + std::to_string(kernel_.w) +
                     " kernel is larger than its input " + shape_string(s));
  return {h.out, w.out, s[2] * multiplier_};
}

std::vector<WeightSpec> DepthwiseConv2D::weight_specs(std::span<const Shape> in) const {
  const int64_t c = in[0].at(2);
  // Keras 3 names it "kernel" (Keras 2: "depthwise_kernel").
  std::vector<WeightSpec> w{{"kernel", {kernel_.h, kernel_.w, c, multiplier_}, Initializer::glorot_uniform}};
  if (use_bias_) w.push_back({"bias", {c * multiplier_}, Initializer::zeros});
  return w;
}

Tensor DepthwiseConv2D::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t n = x.dim(0);
  const Activation act = applied();
  Tensor y = take(n, output_shape());
  Tensor z = take_pre_activation(act, y);
  ops::depthwise_conv2d(x, weight(0).value, z, attrs_, name());
  finish_forward(act, use_bias_ ? &weight(1).value : nullptr, x, z, y, kept_);
  return y;
}

void DepthwiseConv2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const Tensor dz = bias_and_activation_grad(applied(), dy, kept_.z, kept_.y, use_bias_ ? &weight(1).grad : nullptr);
  ops::depthwise_conv2d_backprop_filter(kept_.x, dz, weight(0).grad, attrs_, name());
  if (need_dx[0]) {
    dx[0] = take(dy.dim(0), input_shape());
    ops::depthwise_conv2d_backprop_input(dz, weight(0).value, dx[0], attrs_, name());
  }
  kept_ = {};
}

int64_t DepthwiseConv2D::forward_flops() const {
  const Shape& o = output_shape();
  return 2 * o[0] * o[1] * o[2] * kernel_.h * kernel_.w;
}

int64_t DepthwiseConv2D::backward_flops(bool need_dx) const { return forward_flops() * (need_dx ? 2 : 1); }

namespace {
std::unique_ptr<Layer> depthwise_conv2d_from_keras(const KerasLayerConfig& l) {
  const auto kernel = l.pair("kernel_size", 1, limits::kMaxImageSide, {0, 0});
  if (kernel.first == 0) l.fail("has no kernel_size");
  const auto strides = l.pair("strides", 1, limits::kMaxImageSide, {1, 1});
  const auto dilation = l.pair("dilation_rate", 1, limits::kMaxImageSide, {1, 1});
  if ((strides.first > 1 || strides.second > 1) && (dilation.first > 1 || dilation.second > 1))
    l.fail("strides > 1 together with dilation_rate > 1 is not supported (Keras refuses it too)");
  const int64_t multiplier = l.integer("depth_multiplier", 1, 1024, 1);
  l.require_null({"activity_regularizer", "depthwise_constraint", "bias_constraint"});
  return with_weight_settings(
      std::make_unique<DepthwiseConv2D>(
          Size2(static_cast<int>(kernel.first), static_cast<int>(kernel.second)),
          Size2(static_cast<int>(strides.first), static_cast<int>(strides.second)), l.padding(),
          static_cast<int>(multiplier), Size2(static_cast<int>(dilation.first), static_cast<int>(dilation.second)),
          l.activation(), l.boolean("use_bias", true), l.name()),
      l, {{"kernel", "depthwise_initializer", "GlorotUniform", "depthwise_regularizer"},
          {"bias", "bias_initializer", "Zeros", "bias_regularizer"}});
}
const LayerEntry kDepthwiseConv2dEntry{
    "DepthwiseConv2D", depthwise_conv2d_from_keras,
    "kernel_size, strides, padding (valid, same), depth_multiplier, dilation_rate, activation, "
    "use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer and bias_regularizer (L1, L2, L1L2)"};
const LayerRegistration kDepthwiseConv2dRegistered(kDepthwiseConv2dEntry);
}  // namespace
}  // namespace axon::nn
