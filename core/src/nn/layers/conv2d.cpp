// Conv2D. Forward: Conv2D, BiasAdd (in place), the activation; with a bias
// and a linear or relu activation, _FusedConv2D instead (dispatch lowers it
// to those ops where a device lacks it). Backward: the activation's
// gradient (with relu and a bias: _FusedReluGradBiasAddGrad), BiasAddGrad,
// Conv2DBackpropFilter and, when the input needs it, Conv2DBackpropInput.
// Grouped by channel (groups = the input's channels): the depthwise ops in
// their place, the kernel viewed as their filter. Other groups: each
// group's channels (Slice) through Conv2D with its filters' columns of the
// kernel, the results joined along the channels (ConcatV2); backward the
// same per group, the kernel's gradient and dx joined.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Conv2D::Conv2D(int filters, Size2 kernel_size, Activation activation, Size2 strides, axon_padding padding,
               std::string name, bool use_bias, Size2 dilation_rate, int groups)
    : Layer(std::move(name)), filters_(filters), kernel_(kernel_size), activation_(activation),
      attrs_(ops::conv2d_attrs(strides.h, strides.w, dilation_rate.h, dilation_rate.w, padding)), use_bias_(use_bias),
      groups_(groups) {
  if (filters <= 0 || kernel_.h <= 0 || kernel_.w <= 0 || strides.h <= 0 || strides.w <= 0 || dilation_rate.h <= 0 ||
      dilation_rate.w <= 0 || groups <= 0)
    throw UsageError("Conv2D: filters, kernel size, strides, dilation and groups must be positive");
  if (filters % groups != 0)
    throw UsageError("Conv2D: filters (" + std::to_string(filters) + ") must be a multiple of groups (" +
                     std::to_string(groups) + ")");
  // Keras refuses strides > 1 together with dilation > 1, and so does TensorFlow's kernel.
  if ((strides.h > 1 || strides.w > 1) && (dilation_rate.h > 1 || dilation_rate.w > 1))
    throw UsageError("Conv2D: strides > 1 together with dilation_rate > 1 is not supported (as in Keras)");
}

std::unique_ptr<Layer> Conv2D::clone() const {
  return std::make_unique<Conv2D>(filters_, kernel_, activation_, Size2(attrs_.stride_h, attrs_.stride_w),
                                  attrs_.padding, name(), use_bias_, Size2(attrs_.dilation_h, attrs_.dilation_w),
                                  groups_);
}

void Conv2D::write_config(KerasConfigWriter& c) const {
  c.integer("filters", filters_);
  c.integers("kernel_size", {kernel_.h, kernel_.w});
  c.integers("strides", {attrs_.stride_h, attrs_.stride_w});
  c.string("padding", attrs_.padding == AXON_PADDING_SAME ? "same" : "valid");
  c.string("data_format", "channels_last");
  c.integers("dilation_rate", {attrs_.dilation_h, attrs_.dilation_w});
  c.integer("groups", groups_);
  c.string("activation", activation_name(activation_));
  c.boolean("use_bias", use_bias_);
  c.initializer("kernel_initializer", initializer("kernel", "GlorotUniform"));
  c.initializer("bias_initializer", initializer("bias", "Zeros"));
  c.regularizer("kernel_regularizer", regularizer("kernel"));
  c.regularizer("bias_regularizer", regularizer("bias"));
}

Shape Conv2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  if (s[2] % groups_ != 0)
    throw UsageError("groups is " + std::to_string(groups_) + " for an input of " + std::to_string(s[2]) +
                     " channels, which it does not divide");
  const WindowAxis h = window_axis(s[0], kernel_.h, attrs_.stride_h, attrs_.dilation_h, attrs_.padding);
  const WindowAxis w = window_axis(s[1], kernel_.w, attrs_.stride_w, attrs_.dilation_w, attrs_.padding);
  if (h.out < 1 || w.out < 1)
    throw UsageError("its " + std::to_string(kernel_.h) + "x" + std::to_string(kernel_.w) + " kernel" +
                     (attrs_.dilation_h > 1 || attrs_.dilation_w > 1 ? " (dilated)" : "") +
                     " is larger than its input " + shape_string(s));
  return {h.out, w.out, filters_};
}

std::vector<WeightSpec> Conv2D::weight_specs(std::span<const Shape> in) const {
  std::vector<WeightSpec> w{
      {"kernel", {kernel_.h, kernel_.w, in[0].at(2) / groups_, filters_}, Initializer::glorot_uniform}};
  if (use_bias_) w.push_back({"bias", {filters_}, Initializer::zeros});
  return w;
}

Tensor Conv2D::depthwise(const Tensor& kernel) const {
  const int64_t c = input_shape()[2];
  return kernel.reshaped({kernel_.h, kernel_.w, c, filters_ / c});
}

void Conv2D::grouped_conv2d(const Tensor& x, const Tensor& kernel, Tensor& z) const {
  std::vector<Tensor> parts;
  Shape shape = z.shape();
  shape.back() /= groups_;
  for (int g = 0; g < groups_; ++g) {
    parts.push_back(take_exact(shape));
    ops::conv2d(group_part(x, groups_, g), group_part(kernel, groups_, g), parts.back(), attrs_, name());
  }
  join_groups(parts, z);
}

void Conv2D::grouped_conv2d_grad(const Tensor& x, const Tensor& dz, const Tensor& kernel, Tensor& dkernel,
                                 Tensor* dx) const {
  std::vector<Tensor> dkernels, dxs;
  Shape kernel_shape = kernel.shape(), x_shape = x.shape();
  kernel_shape.back() /= groups_;
  x_shape.back() /= groups_;
  for (int g = 0; g < groups_; ++g) {
    const Tensor xg = group_part(x, groups_, g), dzg = group_part(dz, groups_, g);
    dkernels.push_back(take_exact(kernel_shape));
    ops::conv2d_backprop_filter(xg, dzg, dkernels.back(), attrs_, name());
    if (dx == nullptr) continue;
    dxs.push_back(take_exact(x_shape));
    ops::conv2d_backprop_input(dzg, group_part(kernel, groups_, g), dxs.back(), attrs_, name());
  }
  join_groups(dkernels, dkernel);
  if (dx != nullptr) join_groups(dxs, *dx);
}

Tensor Conv2D::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t n = x.dim(0);
  const Activation act = applied();
  const Tensor& kernel = weight(0).value;
  Tensor y = take(n, output_shape());
  if (groups_ == 1 && use_bias_ && fused_ops() && (act == Activation::linear || act == Activation::relu)) {
    ops::fused_conv2d(x, kernel, weight(1).value, y, attrs_, act == Activation::relu, name());
    if (remembers()) kept_.x = x, kept_.y = y;  // relu's gradient reads y
    return y;
  }
  Tensor z = take_pre_activation(act, y);
  if (by_channel())
    ops::depthwise_conv2d(x, depthwise(kernel), z, attrs_, name());
  else if (groups_ > 1)
    grouped_conv2d(x, kernel, z);
  else
    ops::conv2d(x, kernel, z, attrs_, name());
  finish_forward(act, use_bias_ ? &weight(1).value : nullptr, x, z, y, kept_);
  return y;
}

void Conv2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const Activation act = applied();
  const int64_t n = dy.dim(0);
  Tensor dz;
  if (act == Activation::relu && use_bias_ && fused_ops()) {
    dz = take_like(dy);
    ops::relu_grad_bias_add_grad(dy, kept_.y, dz, weight(1).grad, name());
  } else {
    dz = bias_and_activation_grad(act, dy, kept_.z, kept_.y, use_bias_ ? &weight(1).grad : nullptr);
  }
  if (groups_ > 1 && !by_channel()) {
    if (need_dx[0]) dx[0] = take(n, input_shape());
    grouped_conv2d_grad(kept_.x, dz, weight(0).value, weight(0).grad, need_dx[0] ? &dx[0] : nullptr);
    kept_ = {};
    return;
  }
  if (by_channel()) {
    Tensor dkernel = depthwise(weight(0).grad);
    ops::depthwise_conv2d_backprop_filter(kept_.x, dz, dkernel, attrs_, name());
    if (need_dx[0]) {
      dx[0] = take(n, input_shape());
      ops::depthwise_conv2d_backprop_input(dz, depthwise(weight(0).value), dx[0], attrs_, name());
    }
    kept_ = {};
    return;
  }
  ops::conv2d_backprop_filter(kept_.x, dz, weight(0).grad, attrs_, name());
  if (need_dx[0] && dx[0].defined()) {
    ops::conv2d_backprop_input_accumulate(dz, weight(0).value, dx[0], attrs_, name());
  } else if (need_dx[0]) {
    dx[0] = take(n, input_shape());
    ops::conv2d_backprop_input(dz, weight(0).value, dx[0], attrs_, name());
  }
  kept_ = {};
}

bool Conv2D::adds_into_dx() const {
  return groups_ == 1 && fused_ops() && device().has_kernel(OpId::Conv2DBackpropInputAccumulate, AXON_FLOAT32);
}

int64_t Conv2D::forward_flops() const {
  const Shape& o = output_shape();
  return 2 * o[0] * o[1] * o[2] * kernel_.h * kernel_.w * (input_shape()[2] / groups_);
}

int64_t Conv2D::backward_flops(bool need_dx) const { return forward_flops() * (need_dx ? 2 : 1); }

namespace {

std::unique_ptr<Layer> conv2d_from_keras(const KerasLayerConfig& l) {
  const int64_t filters = l.integer("filters", 1, 65536, 0);
  if (filters == 0) l.fail("has no filters");
  const auto kernel = l.pair("kernel_size", 1, limits::kMaxImageSide, {0, 0});
  if (kernel.first == 0) l.fail("has no kernel_size");
  const auto strides = l.pair("strides", 1, limits::kMaxImageSide, {1, 1});
  const auto dilation = l.pair("dilation_rate", 1, limits::kMaxImageSide, {1, 1});
  const int64_t groups = l.integer("groups", 1, 65536, 1);
  if (filters % groups != 0)
    l.fail("filters (" + std::to_string(filters) + ") is not a multiple of groups (" + std::to_string(groups) + ")");
  if ((strides.first > 1 || strides.second > 1) && (dilation.first > 1 || dilation.second > 1))
    l.fail("strides > 1 together with dilation_rate > 1 is not supported (Keras refuses it too)");
  l.check_no_constraints();
  return with_weight_settings(
      std::make_unique<Conv2D>(static_cast<int>(filters), Size2(static_cast<int>(kernel.first), static_cast<int>(kernel.second)),
                               l.activation(), Size2(static_cast<int>(strides.first), static_cast<int>(strides.second)),
                               l.padding(), l.name(), l.boolean("use_bias", true),
                               Size2(static_cast<int>(dilation.first), static_cast<int>(dilation.second)),
                               static_cast<int>(groups)),
      l, {{"kernel", "kernel_initializer", "GlorotUniform", "kernel_regularizer"},
          {"bias", "bias_initializer", "Zeros", "bias_regularizer"}});
}

const LayerEntry kConv2dEntry{
    "Conv2D", conv2d_from_keras,
    "filters, kernel_size, strides, padding (valid, same), dilation_rate, activation, use_bias; "
    "groups (dividing the input's channels), kernel_initializer, bias_initializer, kernel_regularizer and bias_regularizer (L1, L2, L1L2)"};
const LayerRegistration kConv2dRegistered(kConv2dEntry);

}  // namespace
}  // namespace axon::nn
