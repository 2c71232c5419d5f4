// Loss, accuracy and the compiled metrics, accumulated on the device. Each
// batch writes its loss sum, its count of correct predictions and one sum per
// compiled metric into a few floats (which the training loop places in the
// gradient buffer, so that the strategy's all-reduce sums them over every
// replica with the gradients); accumulate() adds them to running totals on
// the device. The host syncs only when it reads the totals (at progress
// updates and epoch ends).
#pragma once

#include <axon/nn/activation.hpp>
#include <axon/tensor.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace axon::nn {

// Keras' metrics besides accuracy, each the mean over samples of a
// per-sample value, on the model's output and targets built from the class
// labels as the regression losses build them (onehot(label, C) on C > 1
// units, the label on one):
//   mean_squared_error, mean_absolute_error  mean over the units of e^2, |e|
//   (sparse_)top_k_categorical_accuracy      1 where the label is in the top k
//                                            (TensorFlow's in_top_k: ties count)
// The two top-k metrics differ in Keras only in the form of the labels they
// read (one-hot or index); axon's are class indices, so both compute the same.
enum class MetricKind {
  mean_squared_error,
  mean_absolute_error,
  top_k_categorical_accuracy,
  sparse_top_k_categorical_accuracy
};

struct MetricOptions {
  MetricKind kind = MetricKind::mean_squared_error;
  int k = 5;         // the top-k accuracies', >= 1
  std::string name;  // the key in the logs: Keras' (the name compiled, "mse", or the object's name)
};

// At most this many metrics besides accuracy (their sums ride in the
// gradient buffer, which has room for them).
inline constexpr int kMaxMetrics = 8;

// Keras' snake_case function name and class name of a metric kind.
const char* metric_name(MetricKind k);
const char* metric_keras_class(MetricKind k);
// A metric as Keras' metrics.get takes a string ("mse", "MSE",
// "mean_squared_error", "top_k_categorical_accuracy", ...), named as given;
// nullopt if none.
std::optional<MetricOptions> metric_from_name(const std::string& name);
// A metric class of keras.metrics ("MeanSquaredError", "TopKCategoricalAccuracy", ...).
std::optional<MetricKind> metric_from_keras_class(const std::string& class_name);
// "accuracy, mse, mae, top_k_categorical_accuracy, sparse_top_k_categorical_accuracy".
std::string metric_names();
// Whether a name compiles to the accuracy axon always reports ("accuracy",
// "acc", "sparse_categorical_accuracy", "categorical_accuracy", "binary_accuracy").
bool is_accuracy_name(const std::string& name);
// UsageError for more than kMaxMetrics metrics, k < 1, a name used twice or
// taken by the logs ("loss", "accuracy", a "val_" prefix).
void check_metrics(const std::vector<MetricOptions>& metrics);
// The metric in a compile_config's "metrics" list: the name Keras was given
// where it names the metric with its defaults, else the serialised object.
std::string metric_keras_json(const MetricOptions& m);

// Metric values by name, in the order compiled.
using NamedValues = std::vector<std::pair<std::string, double>>;

struct MetricValues {
  double loss = 0;      // mean per-sample loss
  double accuracy = 0;  // fraction of correct predictions
  NamedValues metrics;  // the compiled metrics' means
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
  // The compiled metrics, and the activation the model's output layer left
  // to the loss (its outputs are then logits: the regression metrics apply
  // it first, as Keras computes them on what the model outputs). Resets the
  // totals.
  void set_metrics(const std::vector<MetricOptions>& metrics, Activation output_activation);
  const std::vector<MetricOptions>& compiled() const { return metrics_; }
  // The floats of one batch's sums: loss, correct count, one per metric.
  int64_t sums_size() const { return 2 + static_cast<int64_t>(metrics_.size()); }
  void reset();
  // Writes one batch's sums into `sums` (float32 [sums_size()]): per-sample
  // loss [N], predictions [N, C], labels [N] int32.
  void batch_sums(const Tensor& per_sample_loss, const Tensor& logits, const Tensor& labels, Tensor& sums);
  // Adds batch sums covering `samples` samples to the totals.
  void accumulate(const Tensor& sums, int64_t samples);
  // The totals (float32 [sums_size()]), e.g. for a strategy to sum over replicas.
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
  // Per batch size: a value per sample, and the regression metrics' scratch.
  struct Scratch {
    Tensor per_sample, predictions, gradient;
  };
  Scratch& scratch(int64_t n, int64_t units);
  void metric_values(const MetricOptions& m, const Tensor& logits, const Tensor& labels, Scratch& s);

  Device* device_ = nullptr;
  Totals totals_;
  std::map<int64_t, Scratch> scratch_;
  bool binary_ = false;
  float threshold_ = 0.5f;
  std::vector<MetricOptions> metrics_;
  Activation output_activation_ = Activation::linear;
  int64_t samples_ = 0;
};

}  // namespace axon::nn
