// Keras' weight regularizers L1(l1), L2(l2) and L1L2(l1, l2), as a layer's
// config names them (kernel_regularizer=L1L2(...)).
#pragma once

namespace axon::nn {

// l1 * sum(|w|) + l2 * sum(w^2) joins the loss, l1 * sign(w) + 2 l2 w the
// gradient (factors from 0 to 1e30; both 0: none).
struct Regularizer {
  double l1 = 0.0, l2 = 0.0;
  bool any() const { return l1 != 0.0 || l2 != 0.0; }
  bool operator==(const Regularizer&) const = default;
};

}  // namespace axon::nn
