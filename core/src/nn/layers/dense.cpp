// Dense over the last dimension (any rank, as Keras'). Forward: MatMul,
// BiasAdd (in place), the activation; with a bias and a linear or relu
// activation, _FusedMatMul instead (dispatch lowers it where a device lacks
// it). Backward: the activation's gradient (relu with a bias:
// _FusedReluGradBiasAddGrad), MatMul(x^T, dz) for the kernel, BiasAddGrad,
// MatMul(dz, kernel^T) for dx.
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/layers.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

Dense::Dense(int units, Activation activation, std::string name, bool use_bias)
    : Layer(std::move(name)), units_(units), activation_(activation), use_bias_(use_bias) {
  if (units <= 0) throw UsageError("Dense: units must be positive");
}

std::unique_ptr<Layer> Dense::clone() const { return std::make_unique<Dense>(units_, activation_, name(), use_bias_); }

void Dense::write_config(KerasConfigWriter& c) const {
  c.integer("units", units_);
  c.string("activation", activation_name(activation_));
  c.boolean("use_bias", use_bias_);
  c.initializer("kernel_initializer", initializer("kernel", "GlorotUniform"));
  c.initializer("bias_initializer", initializer("bias", "Zeros"));
  c.regularizer("kernel_regularizer", regularizer("kernel"));
  c.regularizer("bias_regularizer", regularizer("bias"));
}

Shape Dense::output_shape(std::span<const Shape> in) const {
  if (in[0].empty()) throw UsageError("needs an input with a feature dimension");
  Shape s = in[0];
  s.back() = units_;
  return s;
}

std::vector<WeightSpec> Dense::weight_specs(std::span<const Shape> in) const {
  std::vector<WeightSpec> w{{"kernel", {in[0].back(), units_}, Initializer::glorot_uniform}};
  if (use_bias_) w.push_back({"bias", {units_}, Initializer::zeros});
  return w;
}

namespace {
// [N, ..., features] as the 2-D [rows, features] MatMul takes.
Tensor as_matrix(const Tensor& t) { return t.reshaped({t.numel() / t.dim(-1), t.dim(-1)}); }
}  // namespace

Tensor Dense::forward(std::span<const Tensor> in) {
  const Tensor x = as_matrix(in[0]);
  const Activation act = applied();
  const Tensor& kernel = weight(0).value;
  Tensor y = take(in[0].dim(0), output_shape());
  const Tensor y2 = as_matrix(y);
  Tensor z;
  if (use_bias_ && fused_ops() && (act == Activation::linear || act == Activation::relu)) {
    Tensor out = y2;
    ops::fused_matmul(x, kernel, weight(1).value, out, false, false, act == Activation::relu, name());
  } else {
    z = act == Activation::linear ? y2 : as_matrix(take(in[0].dim(0), output_shape()));
    ops::matmul(x, kernel, z, false, false, name());
    if (use_bias_) ops::bias_add(z, weight(1).value, z, name());
    if (act != Activation::linear) {
      Tensor out = y2;
      activate(act, z, out, name());
    }
  }
  if (remembers()) {
    x_ = x;
    y_ = y2;
    if (act != Activation::linear && uses_input(act)) z_ = z;
  }
  return y;
}

void Dense::backward(const Tensor& dy_in, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const Activation act = applied();
  const Tensor dy = as_matrix(dy_in);
  Tensor dz = dy;
  bool bias_done = false;
  if (act == Activation::relu && use_bias_ && fused_ops()) {
    dz = take_like(dy);
    ops::relu_grad_bias_add_grad(dy, y_, dz, weight(1).grad, name());
    bias_done = true;
  } else if (act != Activation::linear) {
    dz = take_like(dy);
    activation_grad(act, dy, z_, y_, dz, name());
  }
  ops::matmul(x_, dz, weight(0).grad, true, false, name());
  if (use_bias_ && !bias_done) ops::bias_add_grad(dz, weight(1).grad, name());
  if (need_dx[0]) {
    Tensor d = take(dy_in.dim(0), input_shape());
    Tensor d2 = as_matrix(d);
    ops::matmul(dz, weight(0).value, d2, false, true, name());
    dx[0] = d;
  }
  x_ = z_ = y_ = Tensor();
}

int64_t Dense::forward_flops() const { return 2 * numel(input_shape()) * units_; }
int64_t Dense::backward_flops(bool need_dx) const { return forward_flops() * (need_dx ? 2 : 1); }

namespace {

std::unique_ptr<Layer> dense_from_keras(const KerasLayerConfig& l) {
  const int64_t units = l.integer("units", 1, 65536, 0);
  if (units == 0) l.fail("has no units");
  l.check_no_constraints();
  return with_weight_settings(
      std::make_unique<Dense>(static_cast<int>(units), l.activation(), l.name(), l.boolean("use_bias", true)), l,
      {{"kernel", "kernel_initializer", "GlorotUniform", "kernel_regularizer"},
       {"bias", "bias_initializer", "Zeros", "bias_regularizer"}});
}

const LayerEntry kDenseEntry{"Dense", dense_from_keras,
                             "units, activation, use_bias (over the last dimension), kernel_initializer, "
                             "bias_initializer, kernel_regularizer and bias_regularizer (L1, L2, L1L2)"};
const LayerRegistration kDenseRegistered(kDenseEntry);

}  // namespace
}  // namespace axon::nn
