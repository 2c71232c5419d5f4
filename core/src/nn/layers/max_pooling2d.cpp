// MaxPooling2D: MaxPool forward, MaxPoolGrad (reading x and y) backward.
// After a Conv2D the fusion pass may run the two as one op pair (fusion.cpp).
#include "pooling_window.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

MaxPooling2D::MaxPooling2D(Size2 pool_size, std::optional<Size2> strides, axon_padding padding, std::string name)
    : Layer(std::move(name)), attrs_(pool_window("MaxPooling2D", pool_size, strides, padding)) {}

std::unique_ptr<Layer> MaxPooling2D::clone() const {
  return std::make_unique<MaxPooling2D>(Size2(attrs_.window_h, attrs_.window_w), Size2(attrs_.stride_h, attrs_.stride_w),
                                        attrs_.padding, name());
}

void MaxPooling2D::write_config(KerasConfigWriter& c) const { write_pool_window(c, attrs_); }

Shape MaxPooling2D::output_shape(std::span<const Shape> in) const { return pooled_shape(attrs_, in[0]); }

Tensor MaxPooling2D::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  Tensor y = take(x.dim(0), output_shape());
  ops::max_pool(x, y, attrs_, name());
  if (remembers()) x_ = x, y_ = y;
  return y;
}

void MaxPooling2D::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  if (need_dx[0]) {
    dx[0] = take_like(x_);
    ops::max_pool_grad(x_, y_, dy, dx[0], attrs_, name());
  }
  x_ = y_ = Tensor();
}

namespace {

std::unique_ptr<Layer> max_pooling2d_from_keras(const KerasLayerConfig& l) {
  const KerasPoolWindow w = pool_window_from_keras(l);
  return std::make_unique<MaxPooling2D>(w.pool_size, w.strides, w.padding, l.name());
}

const LayerEntry kMaxPooling2dEntry{"MaxPooling2D", max_pooling2d_from_keras,
                                    "pool_size, strides, padding (valid, same)"};
const LayerRegistration kMaxPooling2dRegistered(kMaxPooling2dEntry);

}  // namespace
}  // namespace axon::nn
