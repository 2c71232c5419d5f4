// The optimizer as Keras 3 serialises it in a compile_config, and the order
// of its variables in a .keras file's optimizer/vars.
#include <axon/nn/lr_schedule.hpp>
#include <axon/nn/optimizer.hpp>

#include <nlohmann/json.hpp>

namespace axon::nn {

using json = nlohmann::json;

namespace {
json optional_number(const std::optional<float>& v) { return v ? json(static_cast<double>(*v)) : json(nullptr); }
}  // namespace

std::string Optimizer::keras_config(const LearningRateSchedule* schedule) const {
  const OptimizerOptions& o = options();
  json c = {{"name", optimizer_name(o.kind)},
            {"learning_rate", static_cast<double>(learning_rate())},
            {"weight_decay", optional_number(o.weight_decay)},
            {"clipnorm", optional_number(o.clipnorm)},
            {"global_clipnorm", optional_number(o.global_clipnorm)},
            {"clipvalue", optional_number(o.clipvalue)},
            {"use_ema", false},
            {"ema_momentum", 0.99},
            {"ema_overwrite_frequency", nullptr},
            {"loss_scale_factor", nullptr},
            {"gradient_accumulation_steps", nullptr}};
  if (schedule != nullptr)
    c["learning_rate"] = {{"module", "keras.optimizers.schedules"},
                          {"class_name", schedule->keras_class()},
                          {"config", json::parse(schedule->keras_config())},
                          {"registered_name", nullptr}};
  const double epsilon = static_cast<double>(*o.epsilon);
  switch (o.kind) {
    case OptimizerKind::sgd:
      c["momentum"] = static_cast<double>(o.momentum);
      c["nesterov"] = o.nesterov;
      break;
    case OptimizerKind::rmsprop:
      c["rho"] = static_cast<double>(o.rho);
      c["momentum"] = static_cast<double>(o.momentum);
      c["epsilon"] = epsilon;
      c["centered"] = o.centered;
      break;
    case OptimizerKind::adam:
    case OptimizerKind::adamw:
      c["beta_1"] = static_cast<double>(o.beta_1);
      c["beta_2"] = static_cast<double>(o.beta_2);
      c["epsilon"] = epsilon;
      c["amsgrad"] = o.amsgrad;
      break;
    case OptimizerKind::adagrad:
      c["initial_accumulator_value"] = static_cast<double>(o.initial_accumulator_value);
      c["epsilon"] = epsilon;
      break;
    case OptimizerKind::nadam:
      c["beta_1"] = static_cast<double>(o.beta_1);
      c["beta_2"] = static_cast<double>(o.beta_2);
      c["epsilon"] = epsilon;
      break;
  }
  return json{{"module", "keras.optimizers"},
              {"class_name", optimizer_keras_class(o.kind)},
              {"config", c},
              {"registered_name", nullptr}}
      .dump();
}

std::vector<std::vector<OptimizerSlot>> Optimizer::keras_slot_groups() {
  // Keras' Adam, AdamW and Nadam make momentum and velocity in one call
  // (add_optimizer_variables with two names), which interleaves them; every
  // other slot comes from a call of its own.
  std::vector<std::vector<OptimizerSlot>> groups;
  for (const OptimizerSlot& s : state()) {
    if (s.name == "v" && !groups.empty() && groups.back().size() == 1 && groups.back()[0].name == "m")
      groups.back().push_back(s);
    else
      groups.push_back({s});
  }
  return groups;
}

}  // namespace axon::nn
