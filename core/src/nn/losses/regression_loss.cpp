#include "losses.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

void RegressionLoss::run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const {
  axon_regression_loss_attrs a{};
  a.struct_size = AXON_STRUCT_SIZE(axon_regression_loss_attrs, delta);
  switch (options().kind) {
    case LossKind::mean_absolute_error: a.loss = AXON_LOSS_MEAN_ABSOLUTE_ERROR; break;
    case LossKind::huber: a.loss = AXON_LOSS_HUBER; break;
    default: a.loss = AXON_LOSS_MEAN_SQUARED_ERROR; break;
  }
  a.delta = options().delta;
  ops::regression_loss(predictions, labels, loss, grad, a, "loss");
}

}  // namespace axon::nn
