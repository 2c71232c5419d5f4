// PReLU: Keras' relu(x) + (-alpha) * relu(-x), as relu(x) - alpha * relu(-x)
// (the same bits: negation is exact). The product is a 1x1
// DepthwiseConv2dNative with alpha as its filter, over the input viewed as
// rows of alpha's values. Backward, as TensorFlow's gradient of that sum:
// dx = dy where x > 0, alpha * dy where x < 0 (ReluGrad of each part);
// dalpha = -sum(dy * relu(-x)) over the batch and the shared axes
// (DepthwiseConv2dNativeBackpropFilter, then a Scale by -1).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <algorithm>

namespace axon::nn {

PReLU::PReLU(std::vector<int> shared_axes, std::string name) : Layer(std::move(name)), shared_axes_(std::move(shared_axes)) {
  for (int a : shared_axes_)
    if (a < 1) throw UsageError("PReLU: shared axes count from 1 (0 is the batch)");
}

std::unique_ptr<Layer> PReLU::clone() const { return std::make_unique<PReLU>(shared_axes_, name()); }

void PReLU::write_config(KerasConfigWriter& c) const {
  c.initializer("alpha_initializer", initializer("alpha", "Zeros"));
  c.regularizer("alpha_regularizer", regularizer("alpha"));
  c.null("alpha_constraint");
  if (shared_axes_.empty()) return c.null("shared_axes");
  c.integers("shared_axes", std::vector<int64_t>(shared_axes_.begin(), shared_axes_.end()));
}

Shape PReLU::alpha_shape(const Shape& in) const {
  Shape alpha = in;
  for (int a : shared_axes_) {
    if (a > static_cast<int>(in.size()))
      throw UsageError("shared axis " + std::to_string(a) + " is outside the input " + shape_string(in));
    alpha[static_cast<size_t>(a - 1)] = 1;
  }
  // Alpha must vary over a run of trailing axes only: [1, 1, C], [1, W, C], [H, W, C].
  size_t first = in.size();
  while (first > 0 && alpha[first - 1] == in[first - 1]) --first;
  for (size_t i = 0; i < first; ++i)
    if (alpha[i] != 1)
      throw UsageError("shared_axes leave alpha " + shape_string(alpha) + " for the input " + shape_string(in) +
                       ", which varies over axes that are not the last ones; axon shares the leading axes only "
                       "(none, or [1, 2] of an image)");
  return alpha;
}

Shape PReLU::output_shape(std::span<const Shape> in) const {
  alpha_shape(in[0]);
  return in[0];
}

std::vector<WeightSpec> PReLU::weight_specs(std::span<const Shape> in) const {
  return {{"alpha", alpha_shape(in[0]), Initializer::zeros}};
}

Tensor PReLU::as_image(const Tensor& t) const {
  const int64_t n = t.dim(0), k = std::max<int64_t>(weight(0).value.numel(), 1);
  return t.reshaped({n, 1, t.numel() / std::max<int64_t>(n, 1) / k, k});
}

Tensor PReLU::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor positive = take_like(x), negated = take_like(x), negative = take_like(x), scaled = take_like(x);
  ops::relu(x, positive, name());
  ops::scale(x, negated, -1.0f, name());
  ops::relu(negated, negative, name());
  Tensor scaled_image = as_image(scaled);
  ops::depthwise_conv2d(as_image(negative), channel_filter(weight(0).value), scaled_image, channel_product(), name());
  Tensor y = take_like(x);
  ops::sub(positive, scaled, y, name());
  if (remembers()) {
    positive_ = positive;
    negative_ = negative;
  }
  return y;
}

void PReLU::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  Tensor dalpha = channel_filter(weight(0).grad);
  ops::depthwise_conv2d_backprop_filter(as_image(negative_), as_image(dy), dalpha, channel_product(), name());
  ops::scale(dalpha, dalpha, -1.0f, name());
  if (need_dx[0]) {
    Tensor through_positive = take_like(dy), scaled = take_like(dy), through_negative = take_like(dy);
    ops::relu_grad(dy, positive_, through_positive, name());
    Tensor scaled_image = as_image(scaled);
    ops::depthwise_conv2d(as_image(dy), channel_filter(weight(0).value), scaled_image, channel_product(), name());
    ops::relu_grad(scaled, negative_, through_negative, name());
    dx[0] = take_like(dy);
    ops::add_n({&through_positive, &through_negative}, dx[0], name());
  }
  positive_ = negative_ = Tensor();
}

int64_t PReLU::forward_flops() const { return 4 * numel(input_shape()); }
int64_t PReLU::backward_flops(bool need_dx) const { return numel(input_shape()) * (need_dx ? 6 : 2); }

namespace {
std::unique_ptr<Layer> prelu_from_keras(const KerasLayerConfig& l) {
  std::vector<int> axes;
  const json& a = l.at_or_null("shared_axes");
  if (a.is_array()) {
    if (a.size() > 8) l.fail("shared_axes is " + json_text(a) + "; axon takes at most 8 axes");
    for (const json& v : a) axes.push_back(static_cast<int>(l.integer(v, "shared_axes", 1, 8)));
  } else if (!a.is_null()) {
    axes.push_back(static_cast<int>(l.integer(a, "shared_axes", 1, 8)));
  }
  l.require_null({"alpha_constraint"});
  return with_weight_settings(std::make_unique<PReLU>(axes, l.name()), l,
                              {{"alpha", "alpha_initializer", "Zeros", "alpha_regularizer"}});
}
const LayerEntry kPReLUEntry{"PReLU", prelu_from_keras,
                             "alpha_initializer, alpha_regularizer (L1, L2, L1L2), shared_axes (leading axes only: "
                             "none, or [1, 2] of an image)"};
const LayerRegistration kPReLURegistered(kPReLUEntry);
}  // namespace
}  // namespace axon::nn
