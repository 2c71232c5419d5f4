// Keras' RMSprop, plain, with momentum and/or centered (ApplyRMSprop).
#include "optimizers.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

std::vector<Optimizer::SlotSpec> Rmsprop::slot_specs() const {
  return {{"velocity", 0.0f, true},
          {"momentum", 0.0f, options().momentum > 0},
          {"average_gradient", 0.0f, options().centered}};
}

void Rmsprop::update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) {
  axon_rmsprop_attrs a{};
  a.struct_size = sizeof a;
  a.learning_rate = learning_rate();
  a.rho = options().rho;
  a.momentum = options().momentum;
  a.epsilon = *options().epsilon;
  a.centered = options().centered ? 1 : 0;
  ops::apply_rmsprop(values, slots[0], slots[1], slots[2], grads, a, "rmsprop");
}

}  // namespace axon::nn
