// Keras' Nadam (ApplyNadam). Its momentum cache u_product is a float32
// variable multiplied by u_t each step; it is recomputed here from the step
// count in the same float32 operations, so a restored run continues with the
// same bits and checkpoints need not hold it.
#include "optimizers.hpp"

#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

std::vector<Optimizer::SlotSpec> Nadam::slot_specs() const { return {{"m", 0.0f, true}, {"v", 0.0f, true}}; }

void Nadam::set_iterations(int64_t n) {
  // Keras: u_product = u_product * beta_1 * (1.0 - 0.5 * 0.96^t), t = 1 ... n;
  // one more factor for the next step, all of them after a restore.
  auto next = [&](float u, int64_t t) {
    return u * options().beta_1 * (1.0f - 0.5f * std::pow(0.96f, static_cast<float>(t)));
  };
  if (n == iterations() + 1) {
    u_product_ = next(u_product_, n);
  } else {
    u_product_ = 1.0f;
    for (int64_t t = 1; t <= n; ++t) u_product_ = next(u_product_, t);
  }
  Optimizer::set_iterations(n);
}

void Nadam::update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) {
  axon_nadam_attrs a{};
  a.struct_size = sizeof a;
  a.learning_rate = learning_rate();
  a.beta_1 = options().beta_1;
  a.beta_2 = options().beta_2;
  a.epsilon = *options().epsilon;
  a.step = iterations();
  a.u_product = u_product_;
  ops::apply_nadam(values, slots[0], slots[1], grads, a, "nadam");
}

}  // namespace axon::nn
