// Adam with Keras' defaults and update rule (ApplyAdam: epsilon added to
// sqrt(v_hat), bias correction folded into the step size). It works on a
// model copy's flat buffers: one ApplyAdam per step over every parameter.
#pragma once

#include <axon/nn/parameter_buffers.hpp>

#include <cstdint>

namespace axon::nn {

struct AdamOptions {
  float learning_rate = 1e-3f;
  float beta_1 = 0.9f;
  float beta_2 = 0.999f;
  float epsilon = 1e-7f;
};

class Adam {
 public:
  explicit Adam(AdamOptions options = {});
  const AdamOptions& options() const { return options_; }
  // Creates the zeroed m and v buffers for `params` (on their device).
  void build(ParameterBuffers& params);
  // One update of every parameter from its gradient.
  void apply(ParameterBuffers& params);
  int64_t iterations() const { return iterations_; }
  // Adam's state, for checkpoints: the first and second moments (flat, laid
  // out like the parameter values) and the step count behind the bias
  // correction.
  Tensor& m() { return m_; }
  Tensor& v() { return v_; }
  void set_iterations(int64_t n) { iterations_ = n; }

 private:
  AdamOptions options_;
  Tensor m_, v_;
  int64_t iterations_ = 0;
};

}  // namespace axon::nn
