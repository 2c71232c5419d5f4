// What every loss shares: names, settings, the output check, the batch
// scaling and buffers, Keras' serialisation.
#include "losses.hpp"

#include <axon/error.hpp>
#include <axon/ops.hpp>

#include <charconv>
#include <cmath>

namespace axon::nn {
namespace {

constexpr LossKind kKinds[] = {LossKind::sparse_categorical_crossentropy, LossKind::categorical_crossentropy,
                               LossKind::binary_crossentropy,             LossKind::mean_squared_error,
                               LossKind::mean_absolute_error,             LossKind::huber};

bool cross_entropy(LossKind k) {
  return k == LossKind::sparse_categorical_crossentropy || k == LossKind::categorical_crossentropy ||
         k == LossKind::binary_crossentropy;
}
bool smooths(LossKind k) { return k == LossKind::categorical_crossentropy || k == LossKind::binary_crossentropy; }

// The float's shortest decimal form, as Python prints the number the user
// gave ("0.1", "1.0").
std::string number(float v) {
  char text[32];
  const auto r = std::to_chars(text, text + sizeof text, v);
  std::string s(text, r.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

const char* loss_name(LossKind k) {
  switch (k) {
    case LossKind::sparse_categorical_crossentropy: return "sparse_categorical_crossentropy";
    case LossKind::categorical_crossentropy: return "categorical_crossentropy";
    case LossKind::binary_crossentropy: return "binary_crossentropy";
    case LossKind::mean_squared_error: return "mean_squared_error";
    case LossKind::mean_absolute_error: return "mean_absolute_error";
    case LossKind::huber: return "huber";
  }
  return "?";
}

const char* loss_keras_class(LossKind k) {
  switch (k) {
    case LossKind::sparse_categorical_crossentropy: return "SparseCategoricalCrossentropy";
    case LossKind::categorical_crossentropy: return "CategoricalCrossentropy";
    case LossKind::binary_crossentropy: return "BinaryCrossentropy";
    case LossKind::mean_squared_error: return "MeanSquaredError";
    case LossKind::mean_absolute_error: return "MeanAbsoluteError";
    case LossKind::huber: return "Huber";
  }
  return "?";
}

std::optional<LossKind> loss_from_name(const std::string& name) {
  for (LossKind k : kKinds)
    if (name == loss_name(k) || name == loss_keras_class(k)) return k;
  // Keras' aliases (keras.losses.get).
  if (name == "mse" || name == "MSE") return LossKind::mean_squared_error;
  if (name == "mae" || name == "MAE") return LossKind::mean_absolute_error;
  if (name == "huber_loss") return LossKind::huber;
  return std::nullopt;
}

std::string loss_names() {
  std::string s;
  for (LossKind k : kKinds) s += (s.empty() ? "" : ", ") + std::string(loss_name(k));
  return s;
}

Loss::Loss(const LossOptions& options) : options_(options), reads_logits_(options.from_logits) {
  const std::string name = loss_name(options.kind);
  if (smooths(options.kind) && !(options.label_smoothing >= 0 && options.label_smoothing <= 1))
    throw UsageError(name + ": label_smoothing must be in [0, 1], got " + number(options.label_smoothing));
  if (options.kind == LossKind::huber && !(options.delta > 0 && std::isfinite(options.delta)))
    throw UsageError(name + ": delta must be a positive number, got " + number(options.delta));
}

void Loss::check_output(int64_t units) const {
  const LossKind k = options_.kind;
  const bool fits = k == LossKind::binary_crossentropy ? units == 1
                    : cross_entropy(k)                 ? units > 1
                                                       : units >= 1;
  if (fits) return;
  const std::string output = "the model's output of " + std::to_string(units) + (units == 1 ? " unit" : " units");
  throw UsageError(std::string(loss_name(k)) + " does not fit " + output + " (" +
                   (k == LossKind::binary_crossentropy ? "it needs 1 unit, the probability of class 1"
                                                       : "it needs one unit per class, 2 or more") +
                   ")");
}

bool Loss::takes_logits_of(Activation a) const {
  const LossKind k = options_.kind;
  if (k == LossKind::binary_crossentropy) return a == Activation::sigmoid;
  return cross_entropy(k) && a == Activation::softmax;
}

bool Loss::bind_output(Activation output_activation, int64_t units) {
  check_output(units);
  folded_ = takes_logits_of(output_activation);
  reads_logits_ = options_.from_logits || folded_;
  return folded_;
}

AccuracyKind Loss::accuracy(int64_t units) const { return units == 1 ? AccuracyKind::binary : AccuracyKind::argmax; }

void Loss::forward_backward(const Tensor& predictions, const Tensor& labels, int64_t global_batch) {
  const int64_t n = predictions.dim(0);
  if (global_batch == 0) global_batch = n;
  if (global_batch < n)
    throw RuntimeError("loss: a global batch of " + std::to_string(global_batch) + " cannot hold " +
                       std::to_string(n) + " samples");
  auto it = buffers_.find(n);
  if (it == buffers_.end())
    it = buffers_.emplace(n, Buffers{Tensor(predictions.device(), AXON_FLOAT32, {n}),
                                     Tensor(predictions.device(), AXON_FLOAT32, predictions.shape())}).first;
  Buffers& b = it->second;
  run(predictions, labels, b.loss, b.grad);
  // The kernel's gradients are per sample; the batch loss is their mean over
  // the global batch.
  ops::scale(b.grad, b.grad, 1.0f / static_cast<float>(global_batch), "loss");
}

const Tensor& Loss::per_sample_loss(int64_t n) const { return buffers_.at(n).loss; }
const Tensor& Loss::gradient(int64_t n) const { return buffers_.at(n).grad; }

std::string Loss::keras_json() const {
  const LossKind k = options_.kind;
  // Keras names a Huber loss "huber_loss"; its get_config leaves delta out,
  // written here so that the file says what was trained.
  std::string c = std::string("{\"name\": \"") + (k == LossKind::huber ? "huber_loss" : loss_name(k)) +
                  "\", \"reduction\": \"sum_over_batch_size\"";
  if (cross_entropy(k)) c += std::string(", \"from_logits\": ") + (keras_from_logits() ? "true" : "false");
  if (k == LossKind::sparse_categorical_crossentropy) c += ", \"ignore_class\": null";
  if (smooths(k)) c += ", \"label_smoothing\": " + number(options_.label_smoothing) + ", \"axis\": -1";
  if (k == LossKind::huber) c += ", \"delta\": " + number(options_.delta);
  c += "}";
  return std::string("{\"module\": \"keras.losses\", \"class_name\": \"") + loss_keras_class(k) +
         "\", \"config\": " + c + ", \"registered_name\": null}";
}

std::string Loss::keras_call() const {
  const LossKind k = options_.kind;
  std::string args;
  auto add = [&](const std::string& kv) { args += (args.empty() ? "" : ", ") + kv; };
  if (cross_entropy(k) && keras_from_logits()) add("from_logits=True");
  if (smooths(k) && options_.label_smoothing != 0) add("label_smoothing=" + number(options_.label_smoothing));
  if (k == LossKind::huber && options_.delta != 1) add("delta=" + number(options_.delta));
  return std::string(loss_keras_class(k)) + "(" + args + ")";
}

std::string Loss::describe() const {
  const LossKind k = options_.kind;
  std::string s = std::string("--loss ") + loss_name(k);
  std::string settings;
  auto add = [&](const std::string& kv) { settings += (settings.empty() ? ":" : ",") + kv; };
  if (cross_entropy(k) && !options_.from_logits) add("from_logits=false");
  if (smooths(k) && options_.label_smoothing != 0) add("label_smoothing=" + number(options_.label_smoothing));
  if (k == LossKind::huber && options_.delta != 1) add("delta=" + number(options_.delta));
  return s + settings;
}

std::unique_ptr<Loss> make_loss(const LossOptions& options) {
  switch (options.kind) {
    case LossKind::sparse_categorical_crossentropy:
      return std::make_unique<SparseCategoricalCrossentropy>(options.from_logits);
    case LossKind::categorical_crossentropy: return std::make_unique<CategoricalCrossentropy>(options);
    case LossKind::binary_crossentropy: return std::make_unique<BinaryCrossentropy>(options);
    case LossKind::mean_squared_error:
    case LossKind::mean_absolute_error:
    case LossKind::huber: return std::make_unique<RegressionLoss>(options);
  }
  throw RuntimeError("make_loss: unknown loss");
}

}  // namespace axon::nn
