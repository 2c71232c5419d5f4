// Keras 3's optimizers (SGD, RMSprop, Adam, AdamW, Adagrad, Nadam) with their
// defaults, update rules, gradient clipping and weight decay. An optimizer
// works on a model copy's flat buffers (parameter_buffers.hpp): per step at
// most one ClipGradients, one ApplyWeightDecay and one update op over every
// trainable parameter. Its state (Keras' optimizer variables) lies in flat
// buffers laid out like the trainable values; it is all-reduced nowhere (each
// replica updates its own copy from the same gradients).
#pragma once

#include <axon/nn/parameter_buffers.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace axon::nn {

enum class OptimizerKind { sgd, rmsprop, adam, adamw, adagrad, nadam };

// "sgd", "rmsprop", "adam", "adamw", "adagrad", "nadam": axon-train's names.
const char* optimizer_name(OptimizerKind k);
std::optional<OptimizerKind> optimizer_from_name(const std::string& name);
// Keras' class name: "SGD", "RMSprop", "Adam", "AdamW", "Adagrad", "Nadam".
const char* optimizer_keras_class(OptimizerKind k);
// "sgd, rmsprop, adam, adamw, adagrad, nadam".
std::string optimizer_names();

// The hyperparameters of every optimizer; each reads its own. Fields left
// unset take the optimizer's Keras default (OptimizerOptions::keras).
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::adam;
  std::optional<float> learning_rate;                         // Keras: 0.01 for SGD, 0.001 for the others
  float momentum = 0.0f;                                      // sgd, rmsprop
  bool nesterov = false;                                      // sgd
  float rho = 0.9f;                                           // rmsprop
  bool centered = false;                                      // rmsprop
  std::optional<float> epsilon;                               // rmsprop, adam, adamw, adagrad, nadam: 1e-7
  float beta_1 = 0.9f, beta_2 = 0.999f;                       // adam, adamw, nadam
  bool amsgrad = false;                                       // adam, adamw
  float initial_accumulator_value = 0.1f;                     // adagrad
  std::optional<float> weight_decay;                          // every one; adamw: 0.004
  std::optional<float> clipnorm, clipvalue, global_clipnorm;  // at most one

  // The learning rate, epsilon and weight decay with Keras' defaults filled in.
  OptimizerOptions keras() const;
};

// One trainable-sized flat buffer of optimizer state, named as Keras names
// the optimizer's variables ("m", "v" for Adam, as axon always wrote them).
struct OptimizerSlot {
  std::string name;
  Tensor* value = nullptr;
};

class LearningRateSchedule;

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  OptimizerKind kind() const { return options_.kind; }
  // Keras' values of every hyperparameter (OptimizerOptions::keras()).
  const OptimizerOptions& options() const { return options_; }
  // The axon-train flags that give this optimizer ("--optimizer sgd --momentum
  // 0.9
  // --nesterov"), the learning rate left out: how checkpoints tell optimizers
  // apart.
  std::string describe() const;

  // Creates the state for `params` (on their device) at Keras' initial values.
  void build(ParameterBuffers& params);
  // One step: clip the gradients, decay the weights, update every parameter.
  void apply(ParameterBuffers& params);

  // The learning rate of the next steps (a schedule sets it every step).
  float learning_rate() const { return learning_rate_; }
  void set_learning_rate(float lr);

  int64_t iterations() const { return iterations_; }
  // After a restore: the step count (and what depends on it only).
  virtual void set_iterations(int64_t n) { iterations_ = n; }

  // The state a checkpoint holds: only the slots this configuration uses.
  std::vector<OptimizerSlot> state();

  // Keras' serialised optimizer ({"module", "class_name", "config",
  // "registered_name"}, JSON text), its learning rate `schedule`'s when one
  // drives it, as a compile_config holds it.
  std::string keras_config(const LearningRateSchedule* schedule) const;
  // Keras' optimizer variables after `iterations` and `learning_rate`, in
  // Keras' order: groups of slots whose per-weight entries interleave (Adam's
  // m and v: one weight's m, its v, the next weight's m, ...), one group after
  // the other, then the scalars Keras keeps last (Nadam's momentum cache).
  std::vector<std::vector<OptimizerSlot>> keras_slot_groups();
  virtual std::vector<float> keras_scalars() const { return {}; }

 protected:
  explicit Optimizer(const OptimizerOptions& options);
  struct SlotSpec {
    std::string name;
    float initial = 0.0f;
    bool used = true;  // false: passed to the op but never read (Keras has no
                       // such variable)
  };
  // The state buffers the update op takes, in its input order.
  virtual std::vector<SlotSpec> slot_specs() const = 0;
  // The update op on (values, gradients) with the slots in slot_specs() order;
  // iterations() is already this step's (1 for the first).
  virtual void update(Tensor& values, const Tensor& grads, std::vector<Tensor>& slots) = 0;

 private:
  OptimizerOptions options_;
  float learning_rate_;
  int64_t iterations_ = 0;
  std::vector<Tensor> slots_;
  Tensor segment_ends_;  // int64, where each trainable variable ends (when
                         // clipping)
};

// The optimizer `options` describe; UsageError naming the bad value.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options);

}  // namespace axon::nn
