// SparseCategoricalCrossentropy(from_logits=true) with Keras' default
// "sum_over_batch_size" reduction: loss = mean over the batch of
// -log softmax(logits)[label]; its gradient is (softmax - onehot) / N. Under
// a distribution strategy N is the global batch, not the replica's part of
// it (tf.distribute's compute_average_loss), so that summing the replicas'
// gradients gives the gradient of the global batch's mean loss.
#pragma once

#include <axon/tensor.hpp>

#include <map>

namespace axon::nn {

class SparseCategoricalCrossentropy {
 public:
  explicit SparseCategoricalCrossentropy(bool from_logits = true);
  bool from_logits() const { return from_logits_; }

  // logits [N, C] float32, labels [N] int32. Fills per_sample_loss() [N] and
  // gradient() [N, C], divided by global_batch (0: by N). Buffers are per N,
  // reused.
  void forward_backward(const Tensor& logits, const Tensor& labels, int64_t global_batch = 0);
  const Tensor& per_sample_loss(int64_t n) const;
  const Tensor& gradient(int64_t n) const;

 private:
  struct Buffers {
    Tensor loss, grad;
  };
  bool from_logits_;
  std::map<int64_t, Buffers> buffers_;
};

}  // namespace axon::nn
