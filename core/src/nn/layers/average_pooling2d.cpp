// AveragePooling2D: AvgPool forward, AvgPoolGrad backward.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/op_geometry.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

AveragePooling2D::AveragePooling2D(Size2 pool_size, std::optional<Size2> strides, axon_padding padding, std::string name)
    : Layer(std::move(name)) {
  const Size2 s = strides.value_or(pool_size);
  if (pool_size.h <= 0 || pool_size.w <= 0 || s.h <= 0 || s.w <= 0)
    throw UsageError("AveragePooling2D: pool size and strides must be positive");
  attrs_ = ops::pool_attrs(pool_size.h, pool_size.w, s.h, s.w, padding);
}

std::unique_ptr<Layer> AveragePooling2D::clone() const {
  return std::make_unique<AveragePooling2D>(Size2(attrs_.window_h, attrs_.window_w),
                                            Size2(attrs_.stride_h, attrs_.stride_w), attrs_.padding, name());
}

void AveragePooling2D::write_config(KerasConfigWriter& c) const {
  c.integers("pool_size", {attrs_.window_h, attrs_.window_w});
  c.integers("strides", {attrs_.stride_h, attrs_.stride_w});
  c.string("padding", attrs_.padding == AXON_PADDING_SAME ? "same" : "valid");
  c.string("data_format", "channels_last");
}

Shape AveragePooling2D::output_shape(std::span<const Shape> in) const {
  const Shape& s = in[0];
  if (s.size() != 3) throw UsageError("needs a [height, width, channels] input, gets " + shape_string(s));
  const WindowAxis h = window_axis(s[0], attrs_.window_h, attrs_.stride_h, 1, attrs_.padding);
  const WindowAxis w = window_axis(s[1], attrs_.window_w, attrs_.stride_w, 1, attrs_.padding);
  if (h.out < 1 || w.out < 1) throw UsageError("its pool is larger than its input " + shape_string(s));
  return {h.out, w.out, s[2]};
}

Tensor AveragePooling2D::forward(std::span<const Tensor> in) {
  Tensor y = take(in[0].dim(0), output_shape());
  ops::avg_pool(in[0], y, attrs_, name());
  return y;
}

void AveragePooling2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (!need_dx[0]) return;
  dx[0] = take(dy.dim(0), input_shape());
  ops::avg_pool_grad(dy, dx[0], attrs_, name());
}

namespace {
std::unique_ptr<Layer> from_keras(const KerasLayerConfig& l) {
  const auto p = l.pair("pool_size", 1, limits::kMaxImageSide, {2, 2});
  const auto s = l.pair("strides", 1, limits::kMaxImageSide, p);
  return std::make_unique<AveragePooling2D>(Size2(static_cast<int>(p.first), static_cast<int>(p.second)),
                                            Size2(static_cast<int>(s.first), static_cast<int>(s.second)), l.padding(),
                                            l.name());
}
const LayerEntry kEntry{"AveragePooling2D", from_keras, "pool_size, strides, padding (valid, same)"};
const LayerRegistration kRegistered(kEntry);
}  // namespace
}  // namespace axon::nn
