#include "losses.hpp"

#include <axon/ops.hpp>

namespace axon::nn {

void CategoricalCrossentropy::run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const {
  axon_crossentropy_attrs a{};
  a.struct_size = AXON_STRUCT_SIZE(axon_crossentropy_attrs, label_smoothing);
  a.from_logits = reads_logits() ? 1 : 0;
  a.label_smoothing = options().label_smoothing;
  ops::categorical_crossentropy(predictions, labels, loss, grad, a, "loss");
}

}  // namespace axon::nn
