// The activations of ABI 1.4, their gradients, Softmax and SoftmaxGrad, on
// axon's own kernels (elementwise.cu, arithmetic in activation_math.hpp):
// one pass each, exactly the op table's formulas (cuDNN's activation
// gradients read x or y as each mode likes, and TensorFlow's gradient ops
// pass only one of them).
#include "cuda_device.hpp"
#include "elementwise.hpp"

namespace axon::cuda {

namespace {

ActivationParams params_of(const sdk::KernelCall& c, Activation a) {
  ActivationParams p;
  if (a == Activation::LeakyRelu) p.alpha = c.attrs<axon_leaky_relu_attrs>().alpha;
  if (a == Activation::ClippedRelu) {
    const auto& r = c.attrs<axon_clipped_relu_attrs>();
    p.negative_slope = r.negative_slope;
    p.max_value = r.max_value;
    p.threshold = r.threshold;
  }
  return p;
}

void forward(CudaDevice& d, const sdk::KernelCall& c, Activation a) {
  auto x = c.input(0), y = c.output(0);
  launch::activation(d.stream(), a, params_of(c, a), x.data<float>(), y.data<float>(), x.numel());
}

// Gradient inputs in TensorFlow's order: (y, dy) for Sigmoid and Tanh,
// (dy, y or x) for the others.
void backward(CudaDevice& d, const sdk::KernelCall& c, Activation a) {
  const bool y_first = a == Activation::Sigmoid || a == Activation::Tanh;
  auto dy = c.input(y_first ? 1 : 0), v = c.input(y_first ? 0 : 1), dx = c.output(0);
  launch::activation_grad(d.stream(), a, params_of(c, a), dy.data<float>(), v.data<float>(), dx.data<float>(),
                          dx.numel());
}

template <Activation A>
void forward(CudaDevice& d, const sdk::KernelCall& c) {
  forward(d, c, A);
}

template <Activation A>
void backward(CudaDevice& d, const sdk::KernelCall& c) {
  backward(d, c, A);
}

Activation gelu_form(const sdk::KernelCall& c) {
  return c.attrs<axon_gelu_attrs>().approximate ? Activation::GeluTanh : Activation::GeluErf;
}

void gelu(CudaDevice& d, const sdk::KernelCall& c) { forward(d, c, gelu_form(c)); }
void gelu_grad(CudaDevice& d, const sdk::KernelCall& c) { backward(d, c, gelu_form(c)); }

// Over the last dimension: [rows, cols] with cols that dimension.
void softmax(CudaDevice& d, const sdk::KernelCall& c) {
  auto x = c.input(0), y = c.output(0);
  const int64_t cols = x.dim(-1);
  if (cols > 0) launch::softmax(d.stream(), x.data<float>(), y.data<float>(), x.numel() / cols, cols);
}

void softmax_grad(CudaDevice& d, const sdk::KernelCall& c) {
  auto dy = c.input(0), y = c.input(1), dx = c.output(0);
  const int64_t cols = dy.dim(-1);
  if (cols > 0)
    launch::softmax_grad(d.stream(), dy.data<float>(), y.data<float>(), dx.data<float>(), dy.numel() / cols, cols);
}

}  // namespace

void register_activation_kernels(sdk::KernelTable& t) {
  add<OpId::Sigmoid, forward<Activation::Sigmoid>>(t);
  add<OpId::SigmoidGrad, backward<Activation::Sigmoid>>(t);
  add<OpId::Tanh, forward<Activation::Tanh>>(t);
  add<OpId::TanhGrad, backward<Activation::Tanh>>(t);
  add<OpId::Elu, forward<Activation::Elu>>(t);
  add<OpId::EluGrad, backward<Activation::Elu>>(t);
  add<OpId::Selu, forward<Activation::Selu>>(t);
  add<OpId::SeluGrad, backward<Activation::Selu>>(t);
  add<OpId::Relu6, forward<Activation::Relu6>>(t);
  add<OpId::Relu6Grad, backward<Activation::Relu6>>(t);
  add<OpId::LeakyRelu, forward<Activation::LeakyRelu>>(t);
  add<OpId::LeakyReluGrad, backward<Activation::LeakyRelu>>(t);
  add<OpId::Softplus, forward<Activation::Softplus>>(t);
  add<OpId::SoftplusGrad, backward<Activation::Softplus>>(t);
  add<OpId::Gelu, gelu>(t);
  add<OpId::GeluGrad, gelu_grad>(t);
  add<OpId::Silu, forward<Activation::Silu>>(t);
  add<OpId::SiluGrad, backward<Activation::Silu>>(t);
  add<OpId::ClippedRelu, forward<Activation::ClippedRelu>>(t);
  add<OpId::ClippedReluGrad, backward<Activation::ClippedRelu>>(t);
  add<OpId::Softmax, softmax>(t);
  add<OpId::SoftmaxGrad, softmax_grad>(t);
}

}  // namespace axon::cuda
