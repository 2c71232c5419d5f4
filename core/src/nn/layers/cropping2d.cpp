// Cropping2D: Slice forward, Pad of the gradient with zeros backward.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Cropping2D::Cropping2D(int top, int bottom, int left, int right, std::string name)
    : Layer(std::move(name)), top_(top), bottom_(bottom), left_(left), right_(right) {
  if (top < 0 || bottom < 0 || left < 0 || right < 0) throw UsageError("Cropping2D: cropping must be >= 0");
}

std::unique_ptr<Layer> Cropping2D::clone() const {
  return std::make_unique<Cropping2D>(top_, bottom_, left_, right_, name());
}

void Cropping2D::write_config(KerasConfigWriter& c) const {
  KerasConfigWriter::Impl& w = c.impl();
  w.config["cropping"] = json::array({json::array({top_, bottom_}), json::array({left_, right_})});
  c.string("data_format", "channels_last");
}

Shape Cropping2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  if (top_ + bottom_ >= s[0] || left_ + right_ >= s[1])
    throw UsageError("crops " + std::to_string(top_ + bottom_) + " rows and " + std::to_string(left_ + right_) +
                     " columns of a " + shape_string(s) + " input: nothing would be left");
  return {s[0] - top_ - bottom_, s[1] - left_ - right_, s[2]};
}

Tensor Cropping2D::forward(std::span<const Tensor> in) {
  Tensor y = take(in[0].dim(0), output_shape());
  ops::slice(in[0], y, {0, top_, left_, 0}, name());
  return y;
}

void Cropping2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  dx[0] = take(dy.dim(0), input_shape());
  ops::pad(dy, dx[0], {0, top_, left_, 0}, name());
}

namespace {
std::unique_ptr<Layer> cropping2d_from_keras(const KerasLayerConfig& l) {
  const auto [t, b, le, r] = l.sides("cropping", limits::kMaxModelImageSide, 0);
  return std::make_unique<Cropping2D>(static_cast<int>(t), static_cast<int>(b), static_cast<int>(le),
                                      static_cast<int>(r), l.name());
}
const LayerEntry kCropping2dEntry{"Cropping2D", cropping2d_from_keras,
                                  "cropping: n, (h, w) or ((top, bottom), (left, right))"};
const LayerRegistration kCropping2dRegistered(kCropping2dEntry);
}  // namespace
}  // namespace axon::nn
