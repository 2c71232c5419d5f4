// ZeroPadding2D: Pad forward, Slice of the padded gradient backward.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

ZeroPadding2D::ZeroPadding2D(int top, int bottom, int left, int right, std::string name)
    : Layer(std::move(name)), top_(top), bottom_(bottom), left_(left), right_(right) {
  if (top < 0 || bottom < 0 || left < 0 || right < 0) throw UsageError("ZeroPadding2D: padding must be >= 0");
}

std::unique_ptr<Layer> ZeroPadding2D::clone() const {
  return std::make_unique<ZeroPadding2D>(top_, bottom_, left_, right_, name());
}

void ZeroPadding2D::write_config(KerasConfigWriter& c) const {
  KerasConfigWriter::Impl& w = c.impl();
  w.config["padding"] = json::array({json::array({top_, bottom_}), json::array({left_, right_})});
  c.string("data_format", "channels_last");
}

Shape ZeroPadding2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  return {s[0] + top_ + bottom_, s[1] + left_ + right_, s[2]};
}

Tensor ZeroPadding2D::forward(std::span<const Tensor> in) {
  Tensor y = take(in[0].dim(0), output_shape());
  ops::pad(in[0], y, {0, top_, left_, 0}, name());
  return y;
}

void ZeroPadding2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  dx[0] = take(dy.dim(0), input_shape());
  ops::slice(dy, dx[0], {0, top_, left_, 0}, name());
}

namespace {
std::unique_ptr<Layer> zero_padding2d_from_keras(const KerasLayerConfig& l) {
  const auto [t, b, le, r] = l.sides("padding", limits::kMaxImageSide, 1);
  return std::make_unique<ZeroPadding2D>(static_cast<int>(t), static_cast<int>(b), static_cast<int>(le),
                                         static_cast<int>(r), l.name());
}
const LayerEntry kZeroPadding2dEntry{"ZeroPadding2D", zero_padding2d_from_keras,
                                     "padding: n, (h, w) or ((top, bottom), (left, right))"};
const LayerRegistration kZeroPadding2dRegistered(kZeroPadding2dEntry);
}  // namespace
}  // namespace axon::nn
