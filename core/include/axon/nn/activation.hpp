// Keras' activation functions by name, as a layer's `activation=` and the
// Activation layer apply them, each a pair of ops (forward, gradient). The
// gradient reads the activation's input z or its output y, whichever its op
// takes (uses_input), so a layer keeps only that one for its backward.
#pragma once

#include <axon/tensor.hpp>

#include <optional>
#include <string>

namespace axon::nn {

// gelu_tanh is gelu's tanh approximation, keras.ops.gelu's default
// (approximate=True): no Keras activation name gives it, only that call,
// which axon reads as an Activation layer and writes back as the call.
enum class Activation {
  linear, relu, relu6, leaky_relu, sigmoid, tanh, softmax, elu, selu, gelu, silu, softplus, hard_sigmoid, hard_silu,
  mish, gelu_tanh
};

// Keras' name ("relu", "silu", ...); gelu_tanh's, "gelu_tanh", is axon's own.
const char* activation_name(Activation a);
// From a Keras name ("swish" is silu, "hard_swish" hard_silu); nullopt for a name axon lacks.
std::optional<Activation> activation_from_name(const std::string& name);
// The names activation_from_name takes, for messages and docs.
const char* activation_names();

// y = a(z) (z and y of the same shape; y may not be z).
void activate(Activation a, const Tensor& z, Tensor& y, const std::string& layer);
// Whether the gradient op reads z (else it reads y).
bool uses_input(Activation a);
// dz = dy * a'(z), reading z or y as uses_input says (the other may be empty).
void activation_grad(Activation a, const Tensor& dy, const Tensor& z, const Tensor& y, Tensor& dz,
                     const std::string& layer);

}  // namespace axon::nn
