// The loss classes behind make_loss (one file each), each running its op of
// ABI 1.7 (or SparseSoftmaxCrossEntropyWithLogits).
#pragma once

#include <axon/nn/loss.hpp>

namespace axon::nn {

class CategoricalCrossentropy final : public Loss {
 public:
  explicit CategoricalCrossentropy(const LossOptions& o) : Loss(o) {}

 protected:
  void run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const override;
};

class BinaryCrossentropy final : public Loss {
 public:
  explicit BinaryCrossentropy(const LossOptions& o) : Loss(o) {}

 protected:
  void run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const override;
};

// MeanSquaredError, MeanAbsoluteError and Huber: one op, RegressionLoss.
class RegressionLoss final : public Loss {
 public:
  explicit RegressionLoss(const LossOptions& o) : Loss(o) {}

 protected:
  void run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const override;
};

}  // namespace axon::nn
