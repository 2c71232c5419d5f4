// Loss and accuracy accumulated on the device. Each batch writes its loss sum
// and its count of correct top-1 predictions into two floats (which the
// training loop places in the gradient buffer, so that the strategy's
// all-reduce sums them over every replica with the gradients); accumulate()
// adds them to running totals on the device. The host syncs only when it
// reads the totals (at progress updates and epoch ends).
#pragma once

#include <axon/tensor.hpp>

#include <cstdint>
#include <map>

namespace axon::nn {

struct MetricValues {
  double loss = 0;      // mean per-sample loss
  double accuracy = 0;  // fraction of correct top-1 predictions
  int64_t samples = 0;
  double learning_rate = 0;  // the optimizer's, for the step just taken (fit's reads)
};

class DeviceMetrics {
 public:
  // Allocates the totals on `device`.
  void build(Device& device);
  // The accuracy counted: the argmax's (default), or Keras' binary_accuracy
  // with this threshold (a one-unit output).
  void set_accuracy(bool binary, float threshold);
  void reset();
  // Writes one batch's sums into `sums` (float32 [2]: loss sum, correct
  // count): per-sample loss [N], predictions [N, C], labels [N] int32.
  void batch_sums(const Tensor& per_sample_loss, const Tensor& logits, const Tensor& labels, Tensor& sums);
  // Adds batch sums covering `samples` samples to the totals.
  void accumulate(const Tensor& sums, int64_t samples);
  // The totals (float32 [2]), e.g. for a strategy to sum over replicas.
  Tensor& totals() { return totals_.current(); }
  // Sets the sample count behind totals() (after they were summed elsewhere).
  void set_samples(int64_t samples) { samples_ = samples; }
  // Reads the running means (synchronises with the device).
  MetricValues read() const;
  int64_t samples() const { return samples_; }

 private:
  struct Totals {
    Tensor a, b;  // ping-pong: AddN writes a fresh output rather than in place
    bool current_is_a = true;
    Tensor& current() { return current_is_a ? a : b; }
    const Tensor& current() const { return current_is_a ? a : b; }
    Tensor& other() { return current_is_a ? b : a; }
  };

  Device* device_ = nullptr;
  Totals totals_;
  std::map<int64_t, Tensor> correct_buf_;  // [N] per batch size
  bool binary_ = false;
  float threshold_ = 0.5f;
  int64_t samples_ = 0;
};

}  // namespace axon::nn
