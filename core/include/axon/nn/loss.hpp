// Keras 3's losses with the default "sum_over_batch_size" reduction: the
// loss is the mean over the batch of a per-sample loss, its gradient the
// per-sample gradient / N. Under a distribution strategy N is the global
// batch, not the replica's part of it (tf.distribute's compute_average_loss),
// so that summing the replicas' gradients gives the gradient of the global
// batch's mean loss.
//
// axon's data gives int32 class indices; each loss builds its targets from
// them as a Keras user gets them (docs/training.md, "Losses"):
//   SparseCategoricalCrossentropy  the index
//   CategoricalCrossentropy        onehot(label, C), label smoothing
//   BinaryCrossentropy             the label (0 or 1) on one unit, label smoothing
//   MeanSquaredError, MeanAbsoluteError, Huber
//                                  onehot(label, C) on C > 1 units, the label on one
// As Keras does, a cross-entropy reads the logits of a model ending in
// softmax (categorical) or sigmoid (binary), from_logits or not.
#pragma once

#include <axon/nn/activation.hpp>
#include <axon/tensor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace axon::nn {

enum class LossKind {
  sparse_categorical_crossentropy,
  categorical_crossentropy,
  binary_crossentropy,
  mean_squared_error,
  mean_absolute_error,
  huber
};

// Keras' snake_case name ("categorical_crossentropy", "huber") and class name
// ("CategoricalCrossentropy", "Huber").
const char* loss_name(LossKind k);
const char* loss_keras_class(LossKind k);
// Either name, or Keras' aliases ("mse", "mae", "huber_loss"); nullopt if none.
std::optional<LossKind> loss_from_name(const std::string& name);
// "sparse_categorical_crossentropy, categorical_crossentropy, ...".
std::string loss_names();

struct LossOptions {
  LossKind kind = LossKind::sparse_categorical_crossentropy;
  bool from_logits = true;      // the cross-entropies; Keras' default is false, axon-train's true
  float label_smoothing = 0.0f;  // categorical and binary cross-entropy, in [0, 1]
  float delta = 1.0f;           // huber, > 0
};

// Which accuracy Keras' "accuracy" is for the loss and output (Keras 3's
// compile_utils): binary on one unit, else the argmax's (sparse categorical
// and categorical accuracy agree on class-index labels).
enum class AccuracyKind { argmax, binary };

class Loss {
 public:
  // UsageError for a setting out of range (label_smoothing outside [0, 1],
  // delta <= 0).
  explicit Loss(const LossOptions& options);
  virtual ~Loss() = default;
  const LossOptions& options() const { return options_; }

  // UsageError naming the loss and the output when it cannot train a model
  // with `units` outputs (binary cross-entropy on 10 units, a categorical
  // one on 1).
  void check_output(int64_t units) const;
  // Whether the loss reads the logits of an output layer with this
  // activation (the layer then leaves it out): softmax for the categorical
  // cross-entropies, sigmoid for the binary one.
  bool takes_logits_of(Activation output_activation) const;
  // Binds the loss to the model's output layer: check_output, then whether
  // the layer leaves its activation to the loss (takes_logits_of).
  bool bind_output(Activation output_activation, int64_t units);
  // Whether the predictions are logits: from_logits, or the logits of the
  // output layer's softmax or sigmoid.
  bool reads_logits() const { return reads_logits_; }
  // The accuracy Keras reports for `units` outputs; binary accuracy's
  // threshold on what the loss is given: 0.5, or 0 on the logits of a
  // sigmoid output (probability 0.5); Keras thresholds the output of a model
  // without sigmoid at 0.5, logits or not.
  AccuracyKind accuracy(int64_t units) const;
  float binary_threshold() const { return folded_ ? 0.0f : 0.5f; }

  // predictions [N, C] float32 (logits where takes_logits_of said so), labels
  // [N] int32. Fills per_sample_loss() [N] and gradient() [N, C], divided by
  // global_batch (0: by N). Buffers are per N, reused.
  void forward_backward(const Tensor& predictions, const Tensor& labels, int64_t global_batch = 0);
  const Tensor& per_sample_loss(int64_t n) const;
  const Tensor& gradient(int64_t n) const;

  // The loss as Keras would be given it for this model: from_logits is
  // false where the loss reads the logits of the output's softmax or
  // sigmoid (Keras' from_logits=True there would apply it twice).
  bool keras_from_logits() const { return options_.from_logits && !folded_; }
  // Keras' serialisation, as `compile_config` holds it: {"module":
  // "keras.losses", "class_name": ..., "config": {...}, "registered_name": null}.
  std::string keras_json() const;
  // The Python call: "CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)".
  std::string keras_call() const;
  // "--loss categorical_crossentropy:label_smoothing=0.1": axon-train's flag
  // (a checkpoint records it and refuses another).
  std::string describe() const;

 protected:
  // The loss op: per-sample loss and the gradient of each sample's loss.
  virtual void run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const = 0;

 private:
  struct Buffers {
    Tensor loss, grad;
  };
  LossOptions options_;
  bool reads_logits_;
  bool folded_ = false;  // the output layer's softmax or sigmoid is left to the loss
  std::map<int64_t, Buffers> buffers_;
};

std::unique_ptr<Loss> make_loss(const LossOptions& options);

// SparseCategoricalCrossentropy(from_logits=True): the loss axon-train uses
// unless told otherwise.
class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(bool from_logits = true);

 protected:
  void run(const Tensor& predictions, const Tensor& labels, Tensor& loss, Tensor& grad) const override;
};

}  // namespace axon::nn
