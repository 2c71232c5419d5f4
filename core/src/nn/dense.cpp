// Dense forward: MatMul, BiasAdd (in place), Relu. Backward: ReluGrad,
// MatMul(x^T, dz) for the kernel, BiasAddGrad, MatMul(dz, kernel^T) for dx.
// Where the device has them, _FusedMatMul and _FusedReluGradBiasAddGrad
// replace MatMul+BiasAdd+Relu and ReluGrad+BiasAddGrad.
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
enum Slot { kZ, kY, kDz, kDx };
}

Dense::Dense(int units, Activation activation, std::string name)
    : Layer(std::move(name)), units_(units), activation_(activation) {
  if (units <= 0) throw UsageError("Dense: units must be positive");
  // softmax: logits out, the loss's softmax follows (only on the last layer).
  if (activation_ == Activation::softmax) activation_ = Activation::linear, softmax_ = true;
}

std::unique_ptr<Layer> Dense::clone() const { return std::make_unique<Dense>(units_, activation(), name()); }

Shape Dense::do_build(const Shape& in, Device& device, Rng& rng) {
  if (in.size() != 1)
    throw UsageError("Dense " + name() + " needs a flat [features] input (add a Flatten), got " + shape_string(in));
  Shape kshape{in[0], units_};
  kernel_ = {name() + "/kernel", make_tensor(device, kshape, glorot_uniform(kshape, rng)), Tensor(device, AXON_FLOAT32, kshape)};
  bias_ = {name() + "/bias", zeros(device, {units_}), Tensor(device, AXON_FLOAT32, {units_})};
  return {units_};
}

const Tensor& Dense::forward(const Tensor& x) {
  const int64_t n = x.dim(0);
  const bool relu = activation_ == Activation::relu;
  if (Device* d = fused_device(OpId::FusedMatMul, OpId::MatMul, x)) {
    DeviceScope scope(*d);
    Tensor& y = buffer(relu ? kY : kZ, n, output_shape());
    ops::fused_matmul(x, kernel_.value, bias_.value, y, false, false, relu, name());
    return y;
  }
  Tensor& z = buffer(kZ, n, output_shape());
  ops::matmul(x, kernel_.value, z, false, false, name());
  ops::bias_add(z, bias_.value, z, name());
  if (activation_ == Activation::linear) return z;
  Tensor& y = buffer(kY, n, output_shape());
  ops::relu(z, y, name());
  return y;
}

const Tensor& Dense::backward(const Tensor& x, const Tensor& dy, bool need_dx) {
  const int64_t n = x.dim(0);
  const Tensor* dz = &dy;
  bool bias_done = false;
  if (activation_ == Activation::relu) {
    Tensor& g = buffer(kDz, n, output_shape());
    const Tensor& y = buffer(kY, n, output_shape());
    if (Device* d = fused_device(OpId::FusedReluGradBiasAddGrad, OpId::ReluGrad, dy)) {
      DeviceScope scope(*d);
      ops::relu_grad_bias_add_grad(dy, y, g, bias_.grad, name());
      bias_done = true;
    } else {
      ops::relu_grad(dy, y, g, name());
    }
    dz = &g;
  }
  ops::matmul(x, *dz, kernel_.grad, true, false, name());
  if (!bias_done) ops::bias_add_grad(*dz, bias_.grad, name());
  if (!need_dx) return none();
  Tensor& dx = buffer(kDx, n, input_shape());
  ops::matmul(*dz, kernel_.value, dx, false, true, name());
  return dx;
}

int64_t Dense::forward_flops() const { return 2 * input_shape()[0] * units_; }
int64_t Dense::backward_flops(bool need_dx) const { return forward_flops() * (need_dx ? 2 : 1); }

}  // namespace axon::nn
