// Keras' Adam and AdamW: ApplyAdam (bias correction folded into the step
// size, epsilon added to sqrt(v)), or ApplyAdamWithAmsgrad with amsgrad.
#include "optimizers.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

// "m" and "v" are the names axon's checkpoints always had for Adam's moments.
std::vector<Optimizer::SlotSpec> Adam::slot_specs() const {
  std::vector<SlotSpec> s = {{"m", 0.0f, true}, {"v", 0.0f, true}};
  if (options().amsgrad) s.push_back({"velocity_hat", 0.0f, true});
  return s;
}

void Adam::update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) {
  axon_adam_attrs a{};
  a.struct_size = sizeof a;
  a.learning_rate = learning_rate();
  a.beta_1 = options().beta_1;
  a.beta_2 = options().beta_2;
  a.epsilon = *options().epsilon;
  a.step = iterations();
  if (options().amsgrad)
    ops::apply_adam_with_amsgrad(values, slots[0], slots[1], slots[2], grads, a, "adam");
  else
    ops::apply_adam(values, slots[0], slots[1], grads, a, "adam");
}

}  // namespace axon::nn
