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
};

}  // namespace

const char* activation_name(Activation a) {
  for (const Entry& e : kEntries)
    if (e.a == a) return e.name;
  return "linear";
}

std::optional<Activation> activation_from_name(const std::string& name) {
  if (name == "swish") return Activation::silu;
  for (const Entry& e : kEntries)
    if (name == e.name) return e.a;
  return std::nullopt;
}

const char* activation_names() {
  return "linear, relu, relu6, leaky_relu, sigmoid, tanh, softmax, elu, selu, gelu, silu (swish), softplus";
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
    case Activation::silu: ops::silu(z, y, layer); return;
    case Activation::softplus: ops::softplus(z, y, layer); return;
  }
  throw RuntimeError("unknown activation");
}

bool uses_input(Activation a) {
  switch (a) {
    case Activation::relu6:
    case Activation::leaky_relu:
    case Activation::gelu:
    case Activation::silu:
    case Activation::softplus: return true;
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
    case Activation::silu: ops::silu_grad(dy, z, dz, layer); return;
    case Activation::softplus: ops::softplus_grad(dy, z, dz, layer); return;
  }
  throw RuntimeError("unknown activation");
}

}  // namespace axon::nn
