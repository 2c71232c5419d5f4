// Keras' Adagrad: the accumulator starts at initial_accumulator_value
// (ApplyAdagrad).
#include "optimizers.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

std::vector<Optimizer::SlotSpec> Adagrad::slot_specs() const {
  return {{"accumulator", options().initial_accumulator_value, true}};
}

void Adagrad::update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) {
  axon_adagrad_attrs a{};
  a.struct_size = sizeof a;
  a.learning_rate = learning_rate();
  a.epsilon = *options().epsilon;
  ops::apply_adagrad(values, slots[0], grads, a, "adagrad");
}

}  // namespace axon::nn
