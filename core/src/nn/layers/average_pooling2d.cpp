// AveragePooling2D: AvgPool forward, AvgPoolGrad backward.
#include "pooling_window.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

AveragePooling2D::AveragePooling2D(Size2 pool_size, std::optional<Size2> strides, axon_padding padding, std::string name)
    : Layer(std::move(name)), attrs_(pool_window("AveragePooling2D", pool_size, strides, padding)) {}

std::unique_ptr<Layer> AveragePooling2D::clone() const {
  return std::make_unique<AveragePooling2D>(Size2(attrs_.window_h, attrs_.window_w),
                                            Size2(attrs_.stride_h, attrs_.stride_w), attrs_.padding, name());
}

void AveragePooling2D::write_config(KerasConfigWriter& c) const { write_pool_window(c, attrs_); }

Shape AveragePooling2D::output_shape(std::span<const Shape> in) const { return pooled_shape(attrs_, in[0]); }

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
std::unique_ptr<Layer> average_pooling2d_from_keras(const KerasLayerConfig& l) {
  const KerasPoolWindow w = pool_window_from_keras(l);
  return std::make_unique<AveragePooling2D>(w.pool_size, w.strides, w.padding, l.name());
}
const LayerEntry kAveragePooling2dEntry{"AveragePooling2D", average_pooling2d_from_keras,
                                        "pool_size, strides, padding (valid, same)"};
const LayerRegistration kAveragePooling2dRegistered(kAveragePooling2dEntry);
}  // namespace
}  // namespace axon::nn
