// What every optimizer shares: Keras' defaults and checks, the state buffers,
// and the step Keras' BaseOptimizer.apply takes (clip, weight decay, update).
#include "optimizers.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/ops.hpp>

#include <charconv>
#include <cmath>

namespace axon::nn {
namespace {

constexpr OptimizerKind kKinds[] = {OptimizerKind::sgd,   OptimizerKind::rmsprop, OptimizerKind::adam,
                                    OptimizerKind::adamw, OptimizerKind::adagrad, OptimizerKind::nadam};

// The shortest decimal that reads back as v: "0.9", not "0.899999976".
std::string number(float v) {
  char b[32];
  const auto r = std::to_chars(b, b + sizeof b, v);
  return std::string(b, r.ptr);
}

void require(bool ok, const std::string& why) {
  if (!ok) throw UsageError(why);
}

bool finite_positive(float v) { return v > 0 && std::isfinite(v); }

}  // namespace

const char* optimizer_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::sgd:
      return "sgd";
    case OptimizerKind::rmsprop:
      return "rmsprop";
    case OptimizerKind::adam:
      return "adam";
    case OptimizerKind::adamw:
      return "adamw";
    case OptimizerKind::adagrad:
      return "adagrad";
    case OptimizerKind::nadam:
      return "nadam";
  }
  return "";
}

const char* optimizer_keras_class(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::sgd:
      return "SGD";
    case OptimizerKind::rmsprop:
      return "RMSprop";
    case OptimizerKind::adam:
      return "Adam";
    case OptimizerKind::adamw:
      return "AdamW";
    case OptimizerKind::adagrad:
      return "Adagrad";
    case OptimizerKind::nadam:
      return "Nadam";
  }
  return "";
}

std::optional<OptimizerKind> optimizer_from_name(const std::string& name) {
  for (OptimizerKind k : kKinds)
    if (name == optimizer_name(k)) return k;
  return std::nullopt;
}

std::string optimizer_names() {
  std::string s;
  for (OptimizerKind k : kKinds) (s += s.empty() ? "" : ", ") += optimizer_name(k);
  return s;
}

OptimizerOptions OptimizerOptions::keras() const {
  OptimizerOptions o = *this;
  if (!o.learning_rate) o.learning_rate = kind == OptimizerKind::sgd ? 0.01f : 0.001f;
  if (!o.epsilon) o.epsilon = 1e-7f;
  if (!o.weight_decay && kind == OptimizerKind::adamw) o.weight_decay = 0.004f;
  return o;
}

Optimizer::Optimizer(const OptimizerOptions& options) : options_(options.keras()) {
  const OptimizerOptions& o = options_;
  const std::string name = optimizer_name(o.kind);
  require(finite_positive(*o.learning_rate),
          name + ": the learning rate must be a positive number, got " + number(*o.learning_rate));
  require(finite_positive(*o.epsilon), name + ": epsilon must be a positive number, got " + number(*o.epsilon));
  require(o.momentum >= 0 && o.momentum <= 1, name + ": momentum must be in [0, 1], got " + number(o.momentum));
  require(o.rho >= 0 && o.rho < 1, name + ": rho must be in [0, 1), got " + number(o.rho));
  require(o.beta_1 >= 0 && o.beta_1 < 1, name + ": beta_1 must be in [0, 1), got " + number(o.beta_1));
  require(o.beta_2 >= 0 && o.beta_2 < 1, name + ": beta_2 must be in [0, 1), got " + number(o.beta_2));
  require(o.initial_accumulator_value >= 0 && std::isfinite(o.initial_accumulator_value),
          name + ": the initial accumulator value must be >= 0, got " + number(o.initial_accumulator_value));
  if (o.weight_decay)
    require(*o.weight_decay >= 0 && std::isfinite(*o.weight_decay),
            name + ": weight decay must be >= 0, got " + number(*o.weight_decay));
  int clips = 0;
  for (const auto* c : {&o.clipnorm, &o.clipvalue, &o.global_clipnorm}) {
    if (!*c) continue;
    ++clips;
    require(finite_positive(**c), name + ": clipping thresholds must be positive numbers, got " + number(**c));
  }
  require(clips <= 1, name + ": at most one of clipnorm, clipvalue and global_clipnorm may be set");
  learning_rate_ = *o.learning_rate;
}

std::string Optimizer::describe() const {
  const OptimizerOptions& o = options_;
  OptimizerOptions plain;
  plain.kind = o.kind;
  const OptimizerOptions keras = plain.keras();
  std::string s = std::string("--optimizer ") + optimizer_name(o.kind);
  auto flag = [&](const char* name, float v, float def) {
    if (v != def) s += std::string(" --") + name + " " + number(v);
  };
  switch (o.kind) {
    case OptimizerKind::sgd:
      flag("momentum", o.momentum, 0.0f);
      if (o.nesterov) s += " --nesterov";
      break;
    case OptimizerKind::rmsprop:
      flag("rho", o.rho, 0.9f);
      flag("momentum", o.momentum, 0.0f);
      flag("epsilon", *o.epsilon, *keras.epsilon);
      if (o.centered) s += " --centered";
      break;
    case OptimizerKind::adam:
    case OptimizerKind::adamw:
    case OptimizerKind::nadam:
      flag("beta-1", o.beta_1, 0.9f);
      flag("beta-2", o.beta_2, 0.999f);
      flag("epsilon", *o.epsilon, *keras.epsilon);
      if (o.amsgrad) s += " --amsgrad";
      break;
    case OptimizerKind::adagrad:
      flag("initial-accumulator-value", o.initial_accumulator_value, 0.1f);
      flag("epsilon", *o.epsilon, *keras.epsilon);
      break;
  }
  if (o.weight_decay != keras.weight_decay) s += " --weight-decay " + number(o.weight_decay.value_or(0.0f));
  if (o.clipnorm) s += " --clipnorm " + number(*o.clipnorm);
  if (o.clipvalue) s += " --clipvalue " + number(*o.clipvalue);
  if (o.global_clipnorm) s += " --global-clipnorm " + number(*o.global_clipnorm);
  return s;
}

void Optimizer::set_learning_rate(float lr) {
  // A schedule may end at 0 (a cosine decay with alpha 0), as Keras allows.
  if (!std::isfinite(lr) || lr < 0)
    throw UsageError(std::string(optimizer_name(kind())) + ": the learning rate must be a number >= 0, got " +
                     number(lr));
  learning_rate_ = lr;
}

void Optimizer::build(ParameterBuffers& params) {
  if (!params.bound()) throw RuntimeError("Optimizer::build: the parameters are not bound to buffers");
  Device& device = params.values().device();
  const Shape shape = params.trainable_values().shape();
  slots_.clear();
  for (const SlotSpec& s : slot_specs()) {
    slots_.push_back(zeros(device, shape));
    if (s.initial != 0.0f && slots_.back().numel() > 0) ops::fill(slots_.back(), s.initial, "optimizer");
  }
  if (options_.clipnorm || options_.global_clipnorm || options_.clipvalue) {
    const std::vector<int64_t> ends = params.trainable_segment_ends();
    segment_ends_ = Tensor(device, AXON_INT64, {static_cast<int64_t>(ends.size())});
    if (!ends.empty()) segment_ends_.copy_from_host(ends.data(), ends.size() * sizeof(int64_t));
  }
  set_iterations(0);
}

void Optimizer::apply(ParameterBuffers& params) {
  Tensor& values = params.trainable_values();
  if (slots_.empty() || slots_[0].numel() != values.numel())
    throw RuntimeError("Optimizer::apply: the optimizer was built for other parameters");
  // Keras' BaseOptimizer.apply: clip the gradients, decay the weights, update.
  Tensor& grads = params.parameter_gradients();
  const OptimizerOptions& o = options_;
  if (o.clipnorm || o.global_clipnorm || o.clipvalue) {
    axon_clip_attrs c{};
    c.struct_size = sizeof c;
    c.mode = o.clipnorm ? AXON_CLIP_NORM : o.global_clipnorm ? AXON_CLIP_GLOBAL_NORM : AXON_CLIP_VALUE;
    c.clip = o.clipnorm ? *o.clipnorm : o.global_clipnorm ? *o.global_clipnorm : *o.clipvalue;
    ops::clip_gradients(grads, segment_ends_, c, "optimizer");
  }
  if (o.weight_decay) {
    axon_weight_decay_attrs w{};
    w.struct_size = sizeof w;
    w.learning_rate = learning_rate_;
    w.weight_decay = *o.weight_decay;
    ops::apply_weight_decay(values, w, "optimizer");
  }
  set_iterations(iterations_ + 1);
  update(values, grads, slots_);
}

std::vector<OptimizerSlot> Optimizer::state() {
  std::vector<OptimizerSlot> out;
  const std::vector<SlotSpec> specs = slot_specs();
  for (size_t i = 0; i < specs.size() && i < slots_.size(); ++i)
    if (specs[i].used) out.push_back({specs[i].name, &slots_[i]});
  return out;
}

std::unique_ptr<Optimizer> make_optimizer(const OptimizerOptions& options) {
  switch (options.kind) {
    case OptimizerKind::sgd:
      return std::make_unique<Sgd>(options);
    case OptimizerKind::rmsprop:
      return std::make_unique<Rmsprop>(options);
    case OptimizerKind::adam:
    case OptimizerKind::adamw:
      return std::make_unique<Adam>(options);
    case OptimizerKind::adagrad:
      return std::make_unique<Adagrad>(options);
    case OptimizerKind::nadam:
      return std::make_unique<Nadam>(options);
  }
  throw UsageError("unknown optimizer");
}

}  // namespace axon::nn
