// Keras' SGD: plain, with momentum, or Nesterov momentum (ApplySGD).
#include "optimizers.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

// Keras keeps a "momentum" variable only when momentum is not 0.
std::vector<Optimizer::SlotSpec> Sgd::slot_specs() const { return {{"momentum", 0.0f, options().momentum != 0}}; }

void Sgd::update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) {
  axon_sgd_attrs a{};
  a.struct_size = sizeof a;
  a.learning_rate = learning_rate();
  a.momentum = options().momentum;
  a.nesterov = options().nesterov ? 1 : 0;
  ops::apply_sgd(values, slots[0], grads, a, "sgd");
}

}  // namespace axon::nn
