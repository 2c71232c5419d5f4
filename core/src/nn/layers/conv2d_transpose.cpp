// Conv2DTranspose: the input gradient of the convolution that maps its
// output back to its input, run forward. With that convolution's geometry
// (its input the layer's output, its output the layer's input) every pass
// is an op every plugin has: forward Conv2DBackpropInput, then BiasAdd and
// the activation; backward the activation's and bias's gradients, Conv2D
// for the input's gradient and Conv2DBackpropFilter (input and gradient
// swapped) for the kernel's, as TensorFlow differentiates conv2d_transpose.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Conv2DTranspose::Conv2DTranspose(int filters, Size2 kernel_size, Activation activation, Size2 strides,
                                 axon_padding padding, std::string name, bool use_bias,
                                 std::optional<Size2> output_padding)
    : Layer(std::move(name)), filters_(filters), kernel_(kernel_size), activation_(activation),
      attrs_(ops::conv2d_attrs(strides.h, strides.w, 1, 1, padding)), use_bias_(use_bias),
      output_padding_(output_padding) {
  if (filters <= 0 || kernel_.h <= 0 || kernel_.w <= 0 || strides.h <= 0 || strides.w <= 0)
    throw UsageError("Conv2DTranspose: filters, kernel size and strides must be positive");
  if (output_padding && (output_padding->h < 0 || output_padding->w < 0 || output_padding->h >= strides.h ||
                         output_padding->w >= strides.w))
    throw UsageError("Conv2DTranspose: output_padding must be from 0 to below the strides");
}

std::unique_ptr<Layer> Conv2DTranspose::clone() const {
  return std::make_unique<Conv2DTranspose>(filters_, kernel_, activation_, Size2(attrs_.stride_h, attrs_.stride_w),
                                           attrs_.padding, name(), use_bias_, output_padding_);
}

void Conv2DTranspose::write_config(KerasConfigWriter& c) const {
  c.integer("filters", filters_);
  c.integers("kernel_size", {kernel_.h, kernel_.w});
  c.integers("strides", {attrs_.stride_h, attrs_.stride_w});
  c.string("padding", attrs_.padding == AXON_PADDING_SAME ? "same" : "valid");
  if (output_padding_) c.integers("output_padding", {output_padding_->h, output_padding_->w});
  else c.null("output_padding");
  c.string("data_format", "channels_last");
  c.integers("dilation_rate", {1, 1});
  c.string("activation", activation_name(activation_));
  c.boolean("use_bias", use_bias_);
  c.initializer("kernel_initializer", initializer("kernel", "GlorotUniform"));
  c.initializer("bias_initializer", initializer("bias", "Zeros"));
  c.regularizer("kernel_regularizer", regularizer("kernel"));
  c.regularizer("bias_regularizer", regularizer("bias"));
}

Shape Conv2DTranspose::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  // Keras' size with output_padding: (in - 1) * stride + kernel (VALID) or
  // kernel % 2 (SAME), plus the padding; the convolution it transposes must
  // map it back to `in`, as TensorFlow's conv2d_transpose requires.
  auto out = [&](int64_t side, int64_t k, int64_t stride, int pad, const char* axis) {
    if (!output_padding_) return transposed_out(side, k, stride, 1, attrs_.padding);
    const int64_t size = (side - 1) * stride + (attrs_.padding == AXON_PADDING_SAME ? k % 2 : k) + pad;
    if (size < 1 || window_axis(size, k, stride, 1, attrs_.padding).out != side)
      throw UsageError("output_padding " + std::to_string(pad) + " makes its output " + std::to_string(size) +
                       " " + axis + ", which its kernel and strides do not map back to the input's " +
                       std::to_string(side) + " (TensorFlow refuses it too)");
    return size;
  };
  const Size2 pad = output_padding_.value_or(Size2(0));
  const int64_t h = out(s[0], kernel_.h, attrs_.stride_h, pad.h, "high");
  const int64_t w = out(s[1], kernel_.w, attrs_.stride_w, pad.w, "wide");
  if (h > limits::kMaxModelImageSide || w > limits::kMaxModelImageSide)
    throw UsageError("its output of " + std::to_string(h) + "x" + std::to_string(w) + " is larger than " +
                     std::to_string(limits::kMaxModelImageSide) + " a side");
  return {h, w, filters_};
}

std::vector<WeightSpec> Conv2DTranspose::weight_specs(std::span<const Shape> in) const {
  std::vector<WeightSpec> w{{"kernel", {kernel_.h, kernel_.w, filters_, in[0].at(2)}, Initializer::glorot_uniform}};
  if (use_bias_) w.push_back({"bias", {filters_}, Initializer::zeros});
  return w;
}

Tensor Conv2DTranspose::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const int64_t n = x.dim(0);
  const Activation act = applied();
  Tensor y = take(n, output_shape());
  Tensor z = take_pre_activation(act, y);
  ops::conv2d_backprop_input(x, weight(0).value, z, attrs_, name());
  finish_forward(act, use_bias_ ? &weight(1).value : nullptr, x, z, y, kept_);
  return y;
}

void Conv2DTranspose::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const Tensor dz = bias_and_activation_grad(applied(), dy, kept_.z, kept_.y, use_bias_ ? &weight(1).grad : nullptr);
  ops::conv2d_backprop_filter(dz, kept_.x, weight(0).grad, attrs_, name());
  if (need_dx[0]) {
    dx[0] = take(dy.dim(0), input_shape());
    ops::conv2d(dz, weight(0).value, dx[0], attrs_, name());
  }
  kept_ = {};
}

int64_t Conv2DTranspose::forward_flops() const {
  const Shape& i = input_shape();
  return 2 * i[0] * i[1] * i[2] * kernel_.h * kernel_.w * filters_;
}

int64_t Conv2DTranspose::backward_flops(bool need_dx) const { return forward_flops() * (need_dx ? 2 : 1); }

namespace {

std::unique_ptr<Layer> conv2d_transpose_from_keras(const KerasLayerConfig& l) {
  const int64_t filters = l.integer("filters", 1, 65536, 0);
  if (filters == 0) l.fail("has no filters");
  const auto kernel = l.pair("kernel_size", 1, limits::kMaxImageSide, {0, 0});
  if (kernel.first == 0) l.fail("has no kernel_size");
  const auto strides = l.pair("strides", 1, limits::kMaxImageSide, {1, 1});
  const auto dilation = l.pair("dilation_rate", 1, limits::kMaxImageSide, {1, 1});
  // TensorFlow's CPU kernel refuses a dilated Conv2DBackpropInput, so no
  // golden could check one.
  if (dilation.first != 1 || dilation.second != 1)
    l.fail("dilation_rate is " + json_text(l.at("dilation_rate")) + "; axon supports 1 only");
  std::optional<Size2> output_padding;
  if (!l.at_or_null("output_padding").is_null()) {
    const auto p = l.pair("output_padding", 0, limits::kMaxImageSide, {0, 0});
    if (p.first >= strides.first || p.second >= strides.second)
      l.fail("output_padding is " + json_text(l.at("output_padding")) + "; each must be less than its stride (" +
             std::to_string(strides.first) + ", " + std::to_string(strides.second) + ")");
    output_padding = Size2(static_cast<int>(p.first), static_cast<int>(p.second));
  }
  if (l.integer("groups", 1, 65536, 1) != 1) l.fail("groups is " + json_text(l.at("groups")) + "; axon supports 1 only");
  l.check_no_constraints();
  return with_weight_settings(
      std::make_unique<Conv2DTranspose>(
          static_cast<int>(filters), Size2(static_cast<int>(kernel.first), static_cast<int>(kernel.second)),
          l.activation(), Size2(static_cast<int>(strides.first), static_cast<int>(strides.second)), l.padding(),
          l.name(), l.boolean("use_bias", true), output_padding),
      l, {{"kernel", "kernel_initializer", "GlorotUniform", "kernel_regularizer"},
          {"bias", "bias_initializer", "Zeros", "bias_regularizer"}});
}

const LayerEntry kConv2dTransposeEntry{
    "Conv2DTranspose", conv2d_transpose_from_keras,
    "filters, kernel_size, strides, padding (valid, same), output_padding, activation, use_bias; dilation_rate 1, "
    "kernel_initializer, bias_initializer, kernel_regularizer and bias_regularizer (L1, L2, L1L2)"};
const LayerRegistration kConv2dTransposeRegistered(kConv2dTransposeEntry);

}  // namespace
}  // namespace axon::nn
