#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/ops.hpp>

namespace axon::nn {

void DeviceMetrics::build(Device& device) {
  device_ = &device;
  loss_ = {zeros(device, {1}), zeros(device, {1}), true};
  correct_ = {zeros(device, {1}), zeros(device, {1}), true};
  batch_sum_ = zeros(device, {1});
  samples_ = 0;
}

void DeviceMetrics::reset() {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  ops::fill(loss_.current(), 0.0f, "metrics");
  ops::fill(correct_.current(), 0.0f, "metrics");
  samples_ = 0;
}

void DeviceMetrics::add(Sums& sums, const Tensor& values) {
  ops::sum(values, batch_sum_, "metrics");
  ops::add_n({&sums.current(), &batch_sum_}, sums.other(), "metrics");
  sums.current_is_a = !sums.current_is_a;
}

void DeviceMetrics::update(const Tensor& per_sample_loss, const Tensor& logits, const Tensor& labels) {
  const int64_t n = logits.dim(0);
  auto it = correct_buf_.find(n);
  if (it == correct_buf_.end()) it = correct_buf_.emplace(n, Tensor(*device_, AXON_FLOAT32, {n})).first;
  add(loss_, per_sample_loss);
  ops::in_top_k(logits, labels, it->second, "metrics");
  add(correct_, it->second);
  samples_ += n;
}

MetricValues DeviceMetrics::read() const {
  MetricValues v;
  v.samples = samples_;
  if (samples_ == 0) return v;
  float loss = 0, correct = 0;
  loss_.current().copy_to_host(&loss, sizeof loss);
  correct_.current().copy_to_host(&correct, sizeof correct);
  v.loss = static_cast<double>(loss) / static_cast<double>(samples_);
  v.accuracy = static_cast<double>(correct) / static_cast<double>(samples_);
  return v;
}

}  // namespace axon::nn
