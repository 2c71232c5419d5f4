#include <axon/error.hpp>
#include <axon/nn/loss.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

SparseCategoricalCrossentropy::SparseCategoricalCrossentropy(bool from_logits) : from_logits_(from_logits) {
  // The model ends in a linear Dense; a softmax output layer is not offered.
  if (!from_logits) throw UsageError("SparseCategoricalCrossentropy: only from_logits=true is supported");
}

void SparseCategoricalCrossentropy::forward_backward(const Tensor& logits, const Tensor& labels, int64_t global_batch) {
  const int64_t n = logits.dim(0);
  if (global_batch == 0) global_batch = n;
  if (global_batch < n)
    throw RuntimeError("loss: a global batch of " + std::to_string(global_batch) + " cannot hold " +
                       std::to_string(n) + " samples");
  auto it = buffers_.find(n);
  if (it == buffers_.end())
    it = buffers_.emplace(n, Buffers{Tensor(logits.device(), AXON_FLOAT32, {n}),
                                     Tensor(logits.device(), AXON_FLOAT32, logits.shape())}).first;
  Buffers& b = it->second;
  ops::sparse_softmax_cross_entropy(logits, labels, b.loss, b.grad, "loss");
  // The kernel's dlogits are per sample; the batch loss is their mean over
  // the global batch.
  ops::scale(b.grad, b.grad, 1.0f / static_cast<float>(global_batch), "loss");
}

const Tensor& SparseCategoricalCrossentropy::per_sample_loss(int64_t n) const { return buffers_.at(n).loss; }
const Tensor& SparseCategoricalCrossentropy::gradient(int64_t n) const { return buffers_.at(n).grad; }

}  // namespace axon::nn
