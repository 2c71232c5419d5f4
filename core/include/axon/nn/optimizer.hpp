// Adam with Keras' defaults and update rule (ApplyAdam: epsilon added to
// sqrt(v_hat), bias correction folded into the step size).
#pragma once

#include <axon/nn/layer.hpp>

#include <cstdint>
#include <vector>

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
  // Creates the zeroed m and v slots for `params` (on their devices).
  void build(const std::vector<Parameter*>& params);
  // One update of every parameter from its gradient.
  void apply(const std::vector<Parameter*>& params);
  int64_t iterations() const { return iterations_; }

 private:
  struct Slots {
    Tensor m, v;
  };
  AdamOptions options_;
  std::vector<Slots> slots_;
  int64_t iterations_ = 0;
};

}  // namespace axon::nn
