#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

void DeviceMetrics::build(Device& device) {
  device_ = &device;
  totals_ = {zeros(device, {2}), zeros(device, {2}), true};
  samples_ = 0;
}

void DeviceMetrics::set_accuracy(bool binary, float threshold) {
  binary_ = binary;
  threshold_ = threshold;
}

void DeviceMetrics::reset() {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  ops::fill(totals_.current(), 0.0f, "metrics");
  samples_ = 0;
}

void DeviceMetrics::batch_sums(const Tensor& per_sample_loss, const Tensor& logits, const Tensor& labels, Tensor& sums) {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  if (sums.numel() != 2) throw RuntimeError("DeviceMetrics::batch_sums: the sums tensor must hold 2 floats");
  const int64_t n = logits.dim(0);
  auto it = correct_buf_.find(n);
  if (it == correct_buf_.end()) it = correct_buf_.emplace(n, Tensor(*device_, AXON_FLOAT32, {n})).first;
  Tensor loss_sum = sums.view(0, {1}), correct_sum = sums.view(1, {1});
  ops::sum(per_sample_loss, loss_sum, "metrics");
  if (binary_) {
    axon_binary_accuracy_attrs a{};
    a.struct_size = AXON_STRUCT_SIZE(axon_binary_accuracy_attrs, threshold);
    a.threshold = threshold_;
    ops::binary_accuracy(logits, labels, it->second, a, "metrics");
  } else {
    // Keras' sparse categorical (and, on one-hot labels, categorical)
    // accuracy (ABI 1.3); dispatch runs InTopK on a device without it, which
    // also counts a tie for the largest logit as correct (the two differ only
    // there).
    ops::sparse_categorical_accuracy(logits, labels, it->second, "metrics");
  }
  ops::sum(it->second, correct_sum, "metrics");
}

void DeviceMetrics::accumulate(const Tensor& sums, int64_t samples) {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  ops::add_n({&totals_.current(), &sums}, totals_.other(), "metrics");
  totals_.current_is_a = !totals_.current_is_a;
  samples_ += samples;
}

MetricValues DeviceMetrics::read() const {
  MetricValues v;
  v.samples = samples_;
  if (samples_ == 0) return v;
  float sums[2] = {0, 0};
  totals_.current().copy_to_host(sums, sizeof sums);
  v.loss = static_cast<double>(sums[0]) / static_cast<double>(samples_);
  v.accuracy = static_cast<double>(sums[1]) / static_cast<double>(samples_);
  return v;
}

}  // namespace axon::nn
