#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/metrics.hpp>
#include <axon/ops.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace axon::nn {
namespace {

constexpr MetricKind kMetricKinds[] = {MetricKind::mean_squared_error, MetricKind::mean_absolute_error,
                                       MetricKind::top_k_categorical_accuracy,
                                       MetricKind::sparse_top_k_categorical_accuracy};
constexpr int kDefaultK = 5;  // Keras' top-k default

bool is_top_k(MetricKind k) {
  return k == MetricKind::top_k_categorical_accuracy || k == MetricKind::sparse_top_k_categorical_accuracy;
}

}  // namespace

const char* metric_name(MetricKind k) {
  switch (k) {
    case MetricKind::mean_squared_error: return "mean_squared_error";
    case MetricKind::mean_absolute_error: return "mean_absolute_error";
    case MetricKind::top_k_categorical_accuracy: return "top_k_categorical_accuracy";
    case MetricKind::sparse_top_k_categorical_accuracy: return "sparse_top_k_categorical_accuracy";
  }
  return "?";
}

const char* metric_keras_class(MetricKind k) {
  switch (k) {
    case MetricKind::mean_squared_error: return "MeanSquaredError";
    case MetricKind::mean_absolute_error: return "MeanAbsoluteError";
    case MetricKind::top_k_categorical_accuracy: return "TopKCategoricalAccuracy";
    case MetricKind::sparse_top_k_categorical_accuracy: return "SparseTopKCategoricalAccuracy";
  }
  return "?";
}

std::optional<MetricOptions> metric_from_name(const std::string& name) {
  std::optional<MetricKind> kind;
  for (MetricKind k : kMetricKinds)
    if (name == metric_name(k)) kind = k;
  // Keras' aliases (keras.metrics.get).
  if (name == "mse" || name == "MSE") kind = MetricKind::mean_squared_error;
  if (name == "mae" || name == "MAE") kind = MetricKind::mean_absolute_error;
  if (!kind) return std::nullopt;
  return MetricOptions{*kind, kDefaultK, name};
}

std::optional<MetricKind> metric_from_keras_class(const std::string& class_name) {
  for (MetricKind k : kMetricKinds)
    if (class_name == metric_keras_class(k)) return k;
  return std::nullopt;
}

std::string metric_names() {
  return "accuracy, mse, mae, top_k_categorical_accuracy, sparse_top_k_categorical_accuracy";
}

bool is_accuracy_name(const std::string& name) {
  return name == "accuracy" || name == "acc" || name == "sparse_categorical_accuracy" ||
         name == "categorical_accuracy" || name == "binary_accuracy";
}

void check_metrics(const std::vector<MetricOptions>& metrics) {
  if (metrics.size() > static_cast<size_t>(kMaxMetrics))
    throw UsageError("at most " + std::to_string(kMaxMetrics) + " metrics besides accuracy, got " +
                     std::to_string(metrics.size()));
  std::set<std::string> seen;
  for (const MetricOptions& m : metrics) {
    if (m.name.empty()) throw UsageError(std::string("the metric ") + metric_name(m.kind) + " has no name");
    if (m.name == "loss" || m.name == "accuracy" || m.name == "learning_rate" || m.name.starts_with("val_"))
      throw UsageError("the metric name " + m.name + " is taken by the logs (loss, accuracy, learning_rate, val_*)");
    if (!seen.insert(m.name).second) throw UsageError("the metric " + m.name + " is compiled twice");
    if (is_top_k(m.kind) && m.k < 1)
      throw UsageError(m.name + ": k must be at least 1, got " + std::to_string(m.k));
  }
}

std::string metric_keras_json(const MetricOptions& m) {
  using json = nlohmann::json;
  const std::optional<MetricOptions> plain = metric_from_name(m.name);
  if (plain && plain->kind == m.kind && (!is_top_k(m.kind) || m.k == kDefaultK)) return json(m.name).dump();
  json config{{"name", m.name}, {"dtype", "float32"}};
  if (is_top_k(m.kind)) config["k"] = m.k;
  return json{{"module", "keras.metrics"},
              {"class_name", metric_keras_class(m.kind)},
              {"config", config},
              {"registered_name", nullptr}}
      .dump();
}

void DeviceMetrics::build(Device& device) {
  device_ = &device;
  totals_ = {zeros(device, {sums_size()}), zeros(device, {sums_size()}), true};
  samples_ = 0;
}

void DeviceMetrics::set_accuracy(bool binary, float threshold) {
  binary_ = binary;
  threshold_ = threshold;
}

void DeviceMetrics::set_metrics(const std::vector<MetricOptions>& metrics, Activation output_activation) {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  check_metrics(metrics);
  metrics_ = metrics;
  output_activation_ = output_activation;
  scratch_.clear();
  build(*device_);
}

void DeviceMetrics::reset() {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  ops::fill(totals_.current(), 0.0f, "metrics");
  samples_ = 0;
}

DeviceMetrics::Scratch& DeviceMetrics::scratch(int64_t n, int64_t units) {
  auto it = scratch_.find(n);
  if (it == scratch_.end()) it = scratch_.emplace(n, Scratch{Tensor(*device_, AXON_FLOAT32, {n}), {}, {}}).first;
  Scratch& s = it->second;
  // The regression metrics' predictions and (unused) gradient, when first needed.
  const bool regression = std::any_of(metrics_.begin(), metrics_.end(), [](const MetricOptions& m) { return !is_top_k(m.kind); });
  if (regression && !s.gradient.defined()) {
    s.gradient = Tensor(*device_, AXON_FLOAT32, {n, units});
    if (output_activation_ != Activation::linear) s.predictions = Tensor(*device_, AXON_FLOAT32, {n, units});
  }
  return s;
}

// One metric's per-sample values into s.per_sample.
void DeviceMetrics::metric_values(const MetricOptions& m, const Tensor& logits, const Tensor& labels, Scratch& s) {
  if (is_top_k(m.kind)) {
    // On the logits: the top k of the probabilities a softmax gives.
    ops::in_top_k(logits, labels, s.per_sample, m.k, "metrics");
    return;
  }
  const Tensor* predictions = &logits;
  if (output_activation_ != Activation::linear) {
    activate(output_activation_, logits, s.predictions, "metrics");
    predictions = &s.predictions;
  }
  axon_regression_loss_attrs a{};
  a.struct_size = AXON_STRUCT_SIZE(axon_regression_loss_attrs, delta);
  a.loss = m.kind == MetricKind::mean_absolute_error ? AXON_LOSS_MEAN_ABSOLUTE_ERROR : AXON_LOSS_MEAN_SQUARED_ERROR;
  a.delta = 1.0f;
  ops::regression_loss(*predictions, labels, s.per_sample, s.gradient, a, "metrics");
}

void DeviceMetrics::batch_sums(const Tensor& per_sample_loss, const Tensor& logits, const Tensor& labels, Tensor& sums) {
  if (device_ == nullptr) throw RuntimeError("DeviceMetrics used before build()");
  if (sums.numel() != sums_size())
    throw RuntimeError("DeviceMetrics::batch_sums: the sums tensor must hold " + std::to_string(sums_size()) +
                       " floats");
  const int64_t n = logits.dim(0);
  Scratch& s = scratch(n, logits.dim(1));
  Tensor loss_sum = sums.view(0, {1}), correct_sum = sums.view(1, {1});
  ops::sum(per_sample_loss, loss_sum, "metrics");
  if (binary_) {
    axon_binary_accuracy_attrs a{};
    a.struct_size = AXON_STRUCT_SIZE(axon_binary_accuracy_attrs, threshold);
    a.threshold = threshold_;
    ops::binary_accuracy(logits, labels, s.per_sample, a, "metrics");
  } else {
    // Keras' sparse categorical (and, on one-hot labels, categorical)
    // accuracy (ABI 1.3); dispatch runs InTopK on a device without it, which
    // also counts a tie for the largest logit as correct (the two differ only
    // there).
    ops::sparse_categorical_accuracy(logits, labels, s.per_sample, "metrics");
  }
  ops::sum(s.per_sample, correct_sum, "metrics");
  // The device runs its ops in order, so one per-sample buffer serves each
  // metric in turn.
  for (size_t i = 0; i < metrics_.size(); ++i) {
    metric_values(metrics_[i], logits, labels, s);
    Tensor slot = sums.view(2 + static_cast<int64_t>(i), {1});
    ops::sum(s.per_sample, slot, "metrics");
  }
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
  for (const MetricOptions& m : metrics_) v.metrics.emplace_back(m.name, 0.0);
  if (samples_ == 0) return v;
  std::vector<float> sums(static_cast<size_t>(sums_size()));
  totals_.current().copy_to_host(sums.data(), sums.size() * sizeof(float));
  const double n = static_cast<double>(samples_);
  v.loss = static_cast<double>(sums[0]) / n;
  v.accuracy = static_cast<double>(sums[1]) / n;
  for (size_t i = 0; i < metrics_.size(); ++i) v.metrics[i].second = static_cast<double>(sums[2 + i]) / n;
  return v;
}

}  // namespace axon::nn
