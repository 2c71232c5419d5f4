#include <axon/nn/layers.hpp>

namespace axon::nn {

Shape Flatten::do_build(const Shape& in, Device&, Rng&) { return {numel(in)}; }

const Tensor& Flatten::forward(const Tensor& x) {
  // A view: no copy, no allocation on the device.
  y_view_ = x.reshaped({x.dim(0), numel(input_shape())});
  return y_view_;
}

const Tensor& Flatten::backward(const Tensor& x, const Tensor& dy, bool need_dx) {
  if (!need_dx) return none();
  dx_view_ = dy.reshaped(x.shape());
  return dx_view_;
}

}  // namespace axon::nn
