// UpSampling2D, nearest and bilinear, as the transposed depthwise
// convolution of a fixed kernel with the size as strides (layers.hpp).
//
// Bilinear: TensorFlow's resize samples output pixel o of an axis at input
// coordinate (o + 0.5) / s - 0.5, so input pixel i weighs 1 - |o - c| / s
// in the outputs o within s of its centre c = s i + (s - 1) / 2: a tent of
// 2s taps (even s) or 2s - 1 (odd s) starting at o = s i - s / 2 (rounded
// down). Where a coordinate falls outside the image TensorFlow reads the
// edge pixel, which the tent does too once the edge pixels are repeated.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

#include <cmath>
#include <vector>

namespace axon::nn {
namespace {

int tent_taps(int s) { return s % 2 == 0 ? 2 * s : 2 * s - 1; }

// The tent's weights along one axis of factor s.
std::vector<float> tent(int s) {
  std::vector<float> w(static_cast<size_t>(tent_taps(s)));
  const double centre = (static_cast<double>(w.size()) - 1) / 2;
  for (size_t t = 0; t < w.size(); ++t)
    w[t] = static_cast<float>(1 - std::fabs(static_cast<double>(t) - centre) / s);
  return w;
}

// Where output pixel 0 lies in the transposed convolution of the input with
// its edges repeated once: past the repeated row's s outputs, then the
// tent's start s / 2 before its own pixel.
int64_t crop_before(int s) { return s + s / 2; }

// The transposed convolution's output over `grown`, the input with its
// edges repeated (forward writes it, backward pads dy to it).
Shape transposed_shape(const Shape& grown, Size2 size, const Tensor& kernel) {
  return {grown[0], (grown[1] - 1) * size.h + kernel.dim(0), (grown[2] - 1) * size.w + kernel.dim(1), grown[3]};
}

}  // namespace

UpSampling2D::UpSampling2D(Size2 size, std::string name, bool bilinear)
    : Layer(std::move(name)),
      size_(size),
      bilinear_(bilinear),
      attrs_(ops::conv2d_attrs(size.h, size.w, 1, 1, AXON_PADDING_VALID)) {
  if (size.h <= 0 || size.w <= 0) throw UsageError("UpSampling2D: size must be positive");
}

std::unique_ptr<Layer> UpSampling2D::clone() const {
  return std::make_unique<UpSampling2D>(size_, name(), bilinear_);
}

void UpSampling2D::write_config(KerasConfigWriter& c) const {
  c.integers("size", {size_.h, size_.w});
  c.string("data_format", "channels_last");
  c.string("interpolation", bilinear_ ? "bilinear" : "nearest");
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
  const int64_t c = input_shape()[2];
  if (!bilinear_) {
    kernel_ = make_tensor(device, {size_.h, size_.w, c, 1},
                          std::vector<float>(static_cast<size_t>(size_.h * size_.w * c), 1.0f));
    return;
  }
  const std::vector<float> th = tent(size_.h), tw = tent(size_.w);
  std::vector<float> k;
  for (float a : th)
    for (float b : tw)
      for (int64_t i = 0; i < c; ++i) k.push_back(a * b);
  kernel_ = make_tensor(device, {static_cast<int64_t>(th.size()), static_cast<int64_t>(tw.size()), c, 1}, k);
}

Tensor UpSampling2D::forward(std::span<const Tensor> in) {
  const int64_t n = in[0].dim(0);
  Tensor y = take(n, output_shape());
  if (!bilinear_) {
    ops::depthwise_conv2d_backprop_input(in[0], kernel_, y, attrs_, name());
    return y;
  }
  const Tensor grown = repeat_edges(repeat_edges(in[0], 1), 2);
  Tensor wide = take_exact(transposed_shape(grown.shape(), size_, kernel_));
  ops::depthwise_conv2d_backprop_input(grown, kernel_, wide, attrs_, name());
  ops::slice(wide, y, {0, crop_before(size_.h), crop_before(size_.w), 0}, name());
  return y;
}

void UpSampling2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  const int64_t n = dy.dim(0);
  if (!bilinear_) {
    dx[0] = take(n, input_shape());
    ops::depthwise_conv2d(dy, kernel_, dx[0], attrs_, name());
    return;
  }
  const Shape& in = input_shape();
  Tensor grown = take_exact({n, in[0] + 2, in[1] + 2, in[2]});
  Tensor wide = take_exact(transposed_shape(grown.shape(), size_, kernel_));
  ops::pad(dy, wide, {0, crop_before(size_.h), crop_before(size_.w), 0}, name());
  ops::depthwise_conv2d(wide, kernel_, grown, attrs_, name());
  dx[0] = add_back_edges(add_back_edges(grown, 2), 1);
}

Tensor UpSampling2D::repeat_edges(const Tensor& x, int axis) const {
  const Shape& d = x.shape();
  Shape edge = d, grown = d;
  edge[static_cast<size_t>(axis)] = 1;
  grown[static_cast<size_t>(axis)] += 2;
  Tensor first = take_exact(edge), last = take_exact(edge), y = take_exact(grown);
  std::vector<int64_t> at(4, 0);
  ops::slice(x, first, at, name());
  at[static_cast<size_t>(axis)] = d[static_cast<size_t>(axis)] - 1;
  ops::slice(x, last, at, name());
  ops::concat({&first, &x, &last}, y, axis, name());
  return y;
}

Tensor UpSampling2D::add_back_edges(const Tensor& dy, int axis) const {
  const Shape& d = dy.shape();
  const auto a = static_cast<size_t>(axis);
  Shape edge = d, inner = d;
  edge[a] = 1;
  inner[a] -= 2;
  Tensor first = take_exact(edge), last = take_exact(edge), middle = take_exact(inner);
  std::vector<int64_t> at(4, 0);
  ops::slice(dy, first, at, name());
  at[a] = d[a] - 1;
  ops::slice(dy, last, at, name());
  at[a] = 1;
  ops::slice(dy, middle, at, name());
  Tensor first_padded = take_exact(inner), last_padded = take_exact(inner), dx = take_exact(inner);
  at[a] = 0;
  ops::pad(first, first_padded, at, name());
  at[a] = inner[a] - 1;
  ops::pad(last, last_padded, at, name());
  ops::add_n({&middle, &first_padded, &last_padded}, dx, name());
  return dx;
}

namespace {
std::unique_ptr<Layer> up_sampling2d_from_keras(const KerasLayerConfig& l) {
  const std::string interpolation = l.string("interpolation", "nearest");
  if (interpolation != "nearest" && interpolation != "bilinear")
    l.fail("interpolation is \"" + interpolation + "\"; axon reads nearest and bilinear");
  const auto size = l.pair("size", 1, limits::kMaxImageSide, {2, 2});
  return std::make_unique<UpSampling2D>(Size2(static_cast<int>(size.first), static_cast<int>(size.second)), l.name(),
                                        interpolation == "bilinear");
}
const LayerEntry kUpSampling2dEntry{"UpSampling2D", up_sampling2d_from_keras,
                                    "size; interpolation nearest or bilinear (TensorFlow's resize)"};
const LayerRegistration kUpSampling2dRegistered(kUpSampling2dEntry);
}  // namespace
}  // namespace axon::nn
