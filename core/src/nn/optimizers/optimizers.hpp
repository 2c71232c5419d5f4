// The optimizer classes behind make_optimizer (one file each).
#pragma once

#include <axon/nn/optimizer.hpp>

namespace axon::nn {

class Sgd final : public Optimizer {
 public:
  explicit Sgd(const OptimizerOptions& o) : Optimizer(o) {}

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) override;
};

class Rmsprop final : public Optimizer {
 public:
  explicit Rmsprop(const OptimizerOptions& o) : Optimizer(o) {}

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) override;
};

// Adam and AdamW (Keras' AdamW is Adam with weight decay 0.004 by default).
class Adam final : public Optimizer {
 public:
  explicit Adam(const OptimizerOptions& o) : Optimizer(o) {}

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) override;
};

class Adagrad final : public Optimizer {
 public:
  explicit Adagrad(const OptimizerOptions& o) : Optimizer(o) {}

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) override;
};

class Nadam final : public Optimizer {
 public:
  explicit Nadam(const OptimizerOptions& o) : Optimizer(o) {}
  // Keras' momentum cache u_product follows from the step count alone.
  void set_iterations(int64_t n) override;
  std::vector<float> keras_scalars() const override { return {u_product_}; }

 protected:
  std::vector<SlotSpec> slot_specs() const override;
  void update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) override;

 private:
  float u_product_ = 1.0f;
};

}  // namespace axon::nn
