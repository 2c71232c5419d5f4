// UpSampling2D (nearest): the input gradient of a depthwise convolution of
// ones whose kernel and strides are the size, so every output pixel of the
// forward is the input pixel of its block (times one: the same bits), and
// the backward sums each block's gradient.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

UpSampling2D::UpSampling2D(Size2 size, std::string name)
    : Layer(std::move(name)), size_(size), attrs_(ops::conv2d_attrs(size.h, size.w, 1, 1, AXON_PADDING_VALID)) {
  if (size.h <= 0 || size.w <= 0) throw UsageError("UpSampling2D: size must be positive");
}

std::unique_ptr<Layer> UpSampling2D::clone() const { return std::make_unique<UpSampling2D>(size_, name()); }

void UpSampling2D::write_config(KerasConfigWriter& c) const {
  c.integers("size", {size_.h, size_.w});
  c.string("data_format", "channels_last");
  c.string("interpolation", "nearest");
}

Shape UpSampling2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  const int64_t h = s[0] * size_.h, w = s[1] * size_.w;
  if (h > limits::kMaxModelImageSide || w > limits::kMaxModelImageSide)
    throw UsageError("its output of " + std::to_string(h) + "x" + std::to_string(w) + " is larger than " +
                     std::to_string(limits::kMaxModelImageSide) + " a side");
  return {h, w, s[2]};
}

void UpSampling2D::on_build(Device& device, Rng&) {
  const int64_t c = input_shape()[2], n = size_.h * size_.w * c;
  ones_ = make_tensor(device, {size_.h, size_.w, c, 1}, std::vector<float>(static_cast<size_t>(n), 1.0f));
}

Tensor UpSampling2D::forward(std::span<const Tensor> in) {
  Tensor y = take(in[0].dim(0), output_shape());
  ops::depthwise_conv2d_backprop_input(in[0], ones_, y, attrs_, name());
  return y;
}

void UpSampling2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  dx[0] = take(dy.dim(0), input_shape());
  ops::depthwise_conv2d(dy, ones_, dx[0], attrs_, name());
}

namespace {
std::unique_ptr<Layer> up_sampling2d_from_keras(const KerasLayerConfig& l) {
  const std::string interpolation = l.string("interpolation", "nearest");
  if (interpolation != "nearest") l.fail("interpolation is \"" + interpolation + "\"; axon reads nearest only");
  const auto size = l.pair("size", 1, limits::kMaxImageSide, {2, 2});
  return std::make_unique<UpSampling2D>(Size2(static_cast<int>(size.first), static_cast<int>(size.second)), l.name());
}
const LayerEntry kUpSampling2dEntry{"UpSampling2D", up_sampling2d_from_keras, "size; interpolation nearest"};
const LayerRegistration kUpSampling2dRegistered(kUpSampling2dEntry);
}  // namespace
}  // namespace axon::nn
