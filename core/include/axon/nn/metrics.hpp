// Loss and accuracy accumulated on the device: each step adds Sum(per-sample
// loss) and Sum(InTopK(logits, labels)) into device scalars, so the host only
// syncs when it reads them (at progress updates and epoch ends).
#pragma once

#include <axon/tensor.hpp>

#include <cstdint>
#include <map>

namespace axon::nn {

struct MetricValues {
  double loss = 0;      // mean per-sample loss
  double accuracy = 0;  // fraction of correct top-1 predictions
  int64_t samples = 0;
};

class DeviceMetrics {
 public:
  // Allocates the accumulators on `device`.
  void build(Device& device);
  void reset();
  // Adds one batch: per-sample loss [N], logits [N, C], labels [N] int32.
  void update(const Tensor& per_sample_loss, const Tensor& logits, const Tensor& labels);
  // Reads the running means (synchronises with the device).
  MetricValues read() const;
  int64_t samples() const { return samples_; }

 private:
  struct Sums {
    Tensor a, b;  // ping-pong: AddN writes a fresh output rather than in place
    bool current_is_a = true;
    Tensor& current() { return current_is_a ? a : b; }
    const Tensor& current() const { return current_is_a ? a : b; }
    Tensor& other() { return current_is_a ? b : a; }
  };
  void add(Sums& sums, const Tensor& values);

  Device* device_ = nullptr;
  Sums loss_, correct_;
  Tensor batch_sum_;                    // [1] scratch
  std::map<int64_t, Tensor> correct_buf_;  // [N] per batch size
  int64_t samples_ = 0;
};

}  // namespace axon::nn
