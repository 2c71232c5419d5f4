#include <axon/nn/loss.hpp>
#include <axon/ops.hpp>

namespace axon::nn {
namespace {
LossOptions sparse(bool from_logits) {
  LossOptions o;
  o.from_logits = from_logits;
  return o;
}
}  // namespace

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(bool from_logits) : Loss(sparse(from_logits)) {}

// On logits: -log softmax(logits)[label] and softmax - onehot. On
// probabilities (from_logits=false, an output without softmax): Keras'
// categorical cross-entropy of onehot(label), clipped probabilities.
void SparseCategoricalCrossentropy::run(const Tensor& predictions, const Tensor& labels, Tensor& loss,
                                        Tensor& grad) const {
  if (reads_logits()) {
    ops::sparse_softmax_cross_entropy(predictions, labels, loss, grad, "loss");
    return;
  }
  axon_crossentropy_attrs a{};
  a.struct_size = AXON_STRUCT_SIZE(axon_crossentropy_attrs, label_smoothing);
  a.from_logits = 0;
  a.label_smoothing = 0.0f;
  ops::categorical_crossentropy(predictions, labels, loss, grad, a, "loss");
}

}  // namespace axon::nn
