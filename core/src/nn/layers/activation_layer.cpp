// Activation, Softmax and ELU, Keras' layers: the activation's op forward,
// its gradient op backward (reading the input or the output, as it needs).
#include "../layer_registry.hpp"

#include <axon/error.hpp>
#include <axon/nn/layers.hpp>

namespace axon::nn {

ActivationLayer::ActivationLayer(Activation activation, std::string name, bool softmax_layer)
    : Layer(std::move(name)), activation_(activation), softmax_layer_(softmax_layer) {
  if (softmax_layer && activation != Activation::softmax) throw UsageError("Softmax: the activation must be softmax");
}

std::unique_ptr<Layer> ActivationLayer::clone() const {
  return std::make_unique<ActivationLayer>(activation_, name(), softmax_layer_);
}

void ActivationLayer::write_config(KerasConfigWriter& c) const {
  if (softmax_layer_) c.integer("axis", -1);
  else if (activation_ == Activation::gelu_tanh) c.boolean("approximate", true);
  else c.string("activation", activation_name(activation_));
}

Tensor ActivationLayer::forward(std::span<const Tensor> in) {
  const Tensor& x = in[0];
  const Activation a = logits_ ? Activation::linear : activation_;
  if (a == Activation::linear) return x;
  Tensor y = take_like(x);
  activate(a, x, y, name());
  if (remembers()) {
    if (uses_input(a)) x_ = x;
    else y_ = y;
  }
  return y;
}

void ActivationLayer::backward(const Tensor& dy, std::span<const bool> need_dx, std::span<Tensor> dx) {
  const Activation a = logits_ ? Activation::linear : activation_;
  if (need_dx[0]) {
    if (a == Activation::linear) {
      dx[0] = dy;
    } else {
      dx[0] = take_like(dy);
      activation_grad(a, dy, x_, y_, dx[0], name());
    }
  }
  x_ = y_ = Tensor();
}

namespace {

std::unique_ptr<Layer> activation_from_keras(const KerasLayerConfig& l) {
  if (!l.has("activation")) l.fail("has no activation");
  return std::make_unique<ActivationLayer>(l.activation(), l.name());
}

std::unique_ptr<Layer> softmax_from_keras(const KerasLayerConfig& l) {
  if (l.has("axis") && l.at("axis") != json(-1) && l.at("axis") != json::array({-1}))
    l.fail("axis is " + json_text(l.at("axis")) + "; axon's softmax is over the last axis (-1)");
  return std::make_unique<ActivationLayer>(Activation::softmax, l.name(), true);
}

// Keras' ELU layer is the elu activation: read as Activation("elu"), which
// --save writes; axon's elu has alpha 1, Keras' default.
std::unique_ptr<Layer> elu_from_keras(const KerasLayerConfig& l) {
  if (l.number("alpha", 1.0) != 1.0) l.fail("alpha is " + json_text(l.at("alpha")) + "; axon's elu has alpha 1");
  return std::make_unique<ActivationLayer>(Activation::elu, l.name());
}

const LayerEntry kActivation{"Activation", activation_from_keras,
                             "activation: linear, relu, relu6, leaky_relu, sigmoid, tanh, softmax, elu, selu, gelu, "
                             "silu (swish), softplus"};
const LayerEntry kSoftmax{"Softmax", softmax_from_keras, "axis -1"};
const LayerEntry kElu{"ELU", elu_from_keras, "alpha 1 (read as Activation(\"elu\"), which --save writes)"};
const LayerRegistration kRegisteredActivation(kActivation);
const LayerRegistration kRegisteredSoftmax(kSoftmax);
const LayerRegistration kRegisteredElu(kElu);

}  // namespace
}  // namespace axon::nn
