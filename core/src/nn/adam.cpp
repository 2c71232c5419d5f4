#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/ops.hpp>

#include <cmath>

namespace axon::nn {

Adam::Adam(AdamOptions options) : options_(options) {
  if (!(options.learning_rate > 0) || !std::isfinite(options.learning_rate))
    throw UsageError("Adam: learning rate must be a positive number, got " + std::to_string(options.learning_rate));
  if (!(options.beta_1 >= 0 && options.beta_1 < 1) || !(options.beta_2 >= 0 && options.beta_2 < 1))
    throw UsageError("Adam: beta_1 and beta_2 must be in [0, 1)");
  if (!(options.epsilon > 0)) throw UsageError("Adam: epsilon must be positive");
}

void Adam::build(ParameterBuffers& params) {
  if (!params.bound()) throw RuntimeError("Adam::build: the parameters are not bound to buffers");
  m_ = zeros(params.values().device(), params.trainable_values().shape());
  v_ = zeros(params.values().device(), params.trainable_values().shape());
  iterations_ = 0;
}

void Adam::apply(ParameterBuffers& params) {
  if (!m_.defined() || m_.numel() != params.trainable_values().numel())
    throw RuntimeError("Adam::apply: the optimizer was built for other parameters");
  ++iterations_;
  axon_adam_attrs a{};
  a.struct_size = sizeof a;
  a.learning_rate = options_.learning_rate;
  a.beta_1 = options_.beta_1;
  a.beta_2 = options_.beta_2;
  a.epsilon = options_.epsilon;
  a.step = iterations_;
  ops::apply_adam(params.trainable_values(), m_, v_, params.parameter_gradients(), a, "adam");
}

}  // namespace axon::nn
