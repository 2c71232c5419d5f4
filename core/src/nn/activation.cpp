#include <axon/error.hpp>
#include <axon/nn/activation.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {

// Keras 3's leaky_relu activation (the function, not the LeakyReLU layer).
constexpr float kLeakyReluSlope = 0.2f;

struct Entry {
  Activation a;
  const char* name;
};
constexpr Entry kEntries[] = {
    {Activation::linear, "linear"},   {Activation::relu, "relu"},       {Activation::relu6, "relu6"},
    {Activation::leaky_relu, "leaky_relu"}, {Activation::sigmoid, "sigmoid"}, {Activation::tanh, "tanh"},
    {Activation::softmax, "softmax"}, {Activation::elu, "elu"},         {Activation::selu, "selu"},
    {Activation::gelu, "gelu"},       {Activation::silu, "silu"},       {Activation::softplus, "softplus"},
    {Activation::hard_sigmoid, "hard_sigmoid"}, {Activation::hard_silu, "hard_silu"}, {Activation::mish, "mish"},
};

// hard_sigmoid and hard_silu (MobileNetV3's) have no ops of their own: they
// are made of ops every plugin has. hard_sigmoid(z) = clip(u, 0, 1) with
// u = z / 6 + 1/2 (Keras: relu6(z + 3) / 6, equal within rounding).
Tensor like(const Tensor& t) { return Tensor(t.device(), AXON_FLOAT32, t.shape()); }

Tensor hard_sigmoid_argument(const Tensor& z, const std::string& layer) {
  Tensor scaled = like(z), half = like(z), u = like(z);
  ops::scale(z, scaled, 1.0f / 6.0f, layer);
  ops::fill(half, 0.5f, layer);
  ops::add_n({&scaled, &half}, u, layer);
  return u;
}

const axon_clipped_relu_attrs& unit_clip() {
  static const axon_clipped_relu_attrs a = ops::clipped_relu_attrs(0.0f, 1.0f, 0.0f);
  return a;
}

// hard_sigmoid'(z) = 1/6 where 0 < u < 1: dz = dy / 6 there, else 0.
void hard_sigmoid_grad(const Tensor& dy, const Tensor& u, Tensor& dz, const std::string& layer) {
  Tensor sixth = like(dy);
  ops::scale(dy, sixth, 1.0f / 6.0f, layer);
  ops::clipped_relu_grad(sixth, u, dz, unit_clip(), layer);
}

// hard_silu'(z) = hard_sigmoid(z) + z hard_sigmoid'(z).
void hard_silu_grad(const Tensor& dy, const Tensor& z, Tensor& dz, const std::string& layer) {
  const Tensor u = hard_sigmoid_argument(z, layer);
  Tensor through = like(z), inner = like(z), hs = like(z), outer = like(z);
  ops::mul(dy, z, through, layer);
  hard_sigmoid_grad(through, u, inner, layer);
  ops::clipped_relu(u, hs, unit_clip(), layer);
  ops::mul(dy, hs, outer, layer);
  ops::add_n({&outer, &inner}, dz, layer);
}

// mish(z) = z tanh(softplus(z)), Keras' three float32 steps; its gradient
// as TensorFlow differentiates them: dy tanh(s) + softplus'(z) tanh'(s) dy z.
void mish(const Tensor& z, Tensor& y, const std::string& layer) {
  Tensor s = like(z), t = like(z);
  ops::softplus(z, s, layer);
  ops::tanh(s, t, layer);
  ops::mul(z, t, y, layer);
}

void mish_grad(const Tensor& dy, const Tensor& z, Tensor& dz, const std::string& layer) {
  Tensor s = like(z), t = like(z), direct = like(z), dt = like(z), ds = like(z), inner = like(z);
  ops::softplus(z, s, layer);
  ops::tanh(s, t, layer);
  ops::mul(dy, t, direct, layer);
  ops::mul(dy, z, dt, layer);
  ops::tanh_grad(t, dt, ds, layer);
  ops::softplus_grad(ds, z, inner, layer);
  ops::add_n({&direct, &inner}, dz, layer);
}

}  // namespace

const char* activation_name(Activation a) {
  if (a == Activation::gelu_tanh) return "gelu_tanh";  // not in kEntries: no Keras name reads as it
  for (const Entry& e : kEntries)
    if (e.a == a) return e.name;
  return "linear";
}

std::optional<Activation> activation_from_name(const std::string& name) {
  if (name == "swish") return Activation::silu;
  if (name == "hard_swish") return Activation::hard_silu;
  for (const Entry& e : kEntries)
    if (name == e.name) return e.a;
  return std::nullopt;
}

const char* activation_names() {
  return "linear, relu, relu6, leaky_relu, sigmoid, tanh, softmax, elu, selu, gelu, silu (swish), softplus, "
         "hard_sigmoid, hard_silu (hard_swish), mish";
}

void activate(Activation a, const Tensor& z, Tensor& y, const std::string& layer) {
  switch (a) {
    case Activation::linear: ops::identity(z, y, layer); return;
    case Activation::relu: ops::relu(z, y, layer); return;
    case Activation::relu6: ops::relu6(z, y, layer); return;
    case Activation::leaky_relu: ops::leaky_relu(z, y, kLeakyReluSlope, layer); return;
    case Activation::sigmoid: ops::sigmoid(z, y, layer); return;
    case Activation::tanh: ops::tanh(z, y, layer); return;
    case Activation::softmax: ops::softmax(z, y, layer); return;
    case Activation::elu: ops::elu(z, y, layer); return;
    case Activation::selu: ops::selu(z, y, layer); return;
    case Activation::gelu: ops::gelu(z, y, false, layer); return;
    case Activation::gelu_tanh: ops::gelu(z, y, true, layer); return;
    case Activation::silu: ops::silu(z, y, layer); return;
    case Activation::softplus: ops::softplus(z, y, layer); return;
    case Activation::hard_sigmoid: ops::clipped_relu(hard_sigmoid_argument(z, layer), y, unit_clip(), layer); return;
    case Activation::hard_silu: {
      Tensor hs = like(z);
      ops::clipped_relu(hard_sigmoid_argument(z, layer), hs, unit_clip(), layer);
      ops::mul(z, hs, y, layer);
      return;
    }
    case Activation::mish: mish(z, y, layer); return;
  }
  throw RuntimeError("unknown activation");
}

bool uses_input(Activation a) {
  switch (a) {
    case Activation::relu6:
    case Activation::leaky_relu:
    case Activation::gelu:
    case Activation::gelu_tanh:
    case Activation::silu:
    case Activation::softplus:
    case Activation::hard_sigmoid:
    case Activation::hard_silu:
    case Activation::mish: return true;
    default: return false;
  }
}

void activation_grad(Activation a, const Tensor& dy, const Tensor& z, const Tensor& y, Tensor& dz,
                     const std::string& layer) {
  switch (a) {
    case Activation::linear: ops::identity(dy, dz, layer); return;
    case Activation::relu: ops::relu_grad(dy, y, dz, layer); return;
    case Activation::relu6: ops::relu6_grad(dy, z, dz, layer); return;
    case Activation::leaky_relu: ops::leaky_relu_grad(dy, z, dz, kLeakyReluSlope, layer); return;
    case Activation::sigmoid: ops::sigmoid_grad(y, dy, dz, layer); return;
    case Activation::tanh: ops::tanh_grad(y, dy, dz, layer); return;
    case Activation::softmax: ops::softmax_grad(dy, y, dz, layer); return;
    case Activation::elu: ops::elu_grad(dy, y, dz, layer); return;
    case Activation::selu: ops::selu_grad(dy, y, dz, layer); return;
    case Activation::gelu: ops::gelu_grad(dy, z, dz, false, layer); return;
    case Activation::gelu_tanh: ops::gelu_grad(dy, z, dz, true, layer); return;
    case Activation::silu: ops::silu_grad(dy, z, dz, layer); return;
    case Activation::softplus: ops::softplus_grad(dy, z, dz, layer); return;
    case Activation::hard_sigmoid: hard_sigmoid_grad(dy, hard_sigmoid_argument(z, layer), dz, layer); return;
    case Activation::hard_silu: hard_silu_grad(dy, z, dz, layer); return;
    case Activation::mish: mish_grad(dy, z, dz, layer); return;
  }
  throw RuntimeError("unknown activation");
}

}  // namespace axon::nn
