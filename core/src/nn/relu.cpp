// The ReLU layer: Relu forward, ReluGrad (on the output) backward.
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
enum Slot { kY, kDx };
}

const Tensor& ReLU::forward(const Tensor& x) {
  Tensor& y = buffer(kY, x.dim(0), output_shape());
  ops::relu(x, y, name());
  return y;
}

const Tensor& ReLU::backward(const Tensor& x, const Tensor& dy, bool need_dx) {
  if (!need_dx) return none();
  const int64_t n = x.dim(0);
  Tensor& dx = buffer(kDx, n, input_shape());
  ops::relu_grad(dy, buffer(kY, n, output_shape()), dx, name());
  return dx;
}

}  // namespace axon::nn
