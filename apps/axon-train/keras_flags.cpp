#include "keras_flags.hpp"

#include "keyword_list.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <limits>

namespace axon::train_app {
namespace {

constexpr int64_t kMaxSteps = int64_t{1} << 40;

}  // namespace

std::string schedule_flag_names() { return "exponential, piecewise, polynomial, inverse_time, cosine, cosine_restarts"; }

std::unique_ptr<nn::LearningRateSchedule> schedule_from_flag(const std::string& text, double lr) {
  const auto [name, args] = split_name(text);
  const std::string flag = "--lr-schedule " + parse::printable(name);
  auto steps = [&](const KeywordList& k, const char* key) {
    if (!k.has(key)) throw UsageError(flag + ": needs " + key);
    return static_cast<double>(k.integer(key, 1, kMaxSteps, 0));
  };
  if (name == "exponential" || name == "inverse_time") {
    const KeywordList k(args, flag, {"decay_steps", "decay_rate", "staircase"});
    if (!k.has("decay_rate")) throw UsageError(flag + ": needs decay_rate");
    const double steps_ = steps(k, "decay_steps"), rate = k.number("decay_rate", 0);
    const bool staircase = k.boolean("staircase", false);
    if (name == "exponential") return nn::make_schedule(nn::ExponentialDecay{lr, steps_, rate, staircase});
    return nn::make_schedule(nn::InverseTimeDecay{lr, steps_, rate, staircase});
  }
  if (name == "piecewise") {
    const KeywordList k(args, flag, {"boundaries", "values"});
    return nn::make_schedule(nn::PiecewiseConstantDecay{k.numbers("boundaries"), k.numbers("values")});
  }
  if (name == "polynomial") {
    const KeywordList k(args, flag, {"decay_steps", "end_learning_rate", "power", "cycle"});
    return nn::make_schedule(nn::PolynomialDecay{lr, steps(k, "decay_steps"), k.number("end_learning_rate", 0.0001),
                                                 k.number("power", 1.0), k.boolean("cycle", false)});
  }
  if (name == "cosine") {
    const KeywordList k(args, flag, {"decay_steps", "alpha", "warmup_target", "warmup_steps"});
    nn::CosineDecay s{lr, steps(k, "decay_steps"), k.number("alpha", 0.0), k.number("warmup_target"), 0};
    if (k.has("warmup_steps")) s.warmup_steps = static_cast<double>(k.integer("warmup_steps", 0, kMaxSteps, 0));
    if (s.warmup_steps > 0 && !s.warmup_target) throw UsageError(flag + ": warmup_steps needs warmup_target");
    return nn::make_schedule(s);
  }
  if (name == "cosine_restarts") {
    const KeywordList k(args, flag, {"first_decay_steps", "t_mul", "m_mul", "alpha"});
    return nn::make_schedule(nn::CosineDecayRestarts{lr, steps(k, "first_decay_steps"), k.number("t_mul", 2.0),
                                                     k.number("m_mul", 1.0), k.number("alpha", 0.0)});
  }
  throw UsageError("--lr-schedule: unknown schedule '" + parse::printable(name) + "'; axon has " + schedule_flag_names());
}

nn::LossOptions loss_from_flag(const std::string& text) {
  const auto [name, args] = split_name(text);
  const std::optional<nn::LossKind> kind = nn::loss_from_name(name);
  if (!kind) throw UsageError("--loss: unknown loss '" + parse::printable(name) + "'; axon has " + nn::loss_names());
  const std::string flag = "--loss " + parse::printable(name);
  std::vector<std::string> keys;
  switch (*kind) {
    case nn::LossKind::sparse_categorical_crossentropy: keys = {"from_logits"}; break;
    case nn::LossKind::categorical_crossentropy:
    case nn::LossKind::binary_crossentropy: keys = {"from_logits", "label_smoothing"}; break;
    case nn::LossKind::huber: keys = {"delta"}; break;
    default: break;
  }
  const KeywordList k(args, flag, keys);
  nn::LossOptions o;
  o.kind = *kind;
  o.from_logits = k.boolean("from_logits", true);
  o.label_smoothing = static_cast<float>(k.number("label_smoothing", 0.0));
  o.delta = static_cast<float>(k.number("delta", 1.0));
  try {
    nn::make_loss(o);  // its settings checked now
  } catch (const UsageError& e) {
    throw UsageError("--loss " + std::string(e.what()));
  }
  return o;
}

std::vector<nn::MetricOptions> metrics_from_flags(const std::vector<std::string>& texts) {
  std::vector<nn::MetricOptions> out;
  auto add = [&](const std::string& text) {
    const auto [name, args] = split_name(text);
    if (nn::is_accuracy_name(name) && args.empty()) return;
    std::optional<nn::MetricOptions> m = nn::metric_from_name(name);
    if (!m) throw UsageError("--metrics: unknown metric '" + parse::printable(name) + "'; axon has " + nn::metric_names());
    const std::string flag = "--metrics " + parse::printable(name);
    const bool top_k = m->kind == nn::MetricKind::top_k_categorical_accuracy ||
                       m->kind == nn::MetricKind::sparse_top_k_categorical_accuracy;
    const KeywordList k(args, flag, top_k ? std::vector<std::string>{"k", "name"} : std::vector<std::string>{"name"});
    if (top_k) m->k = static_cast<int>(k.integer("k", 1, std::numeric_limits<int32_t>::max(), m->k));
    m->name = k.text("name", m->name);
    out.push_back(*m);
  };
  for (const std::string& text : texts) {
    if (text.find(':') != std::string::npos) {
      add(text);
      continue;
    }
    size_t start = 0;
    for (size_t end; (end = text.find(',', start)) != std::string::npos; start = end + 1) add(text.substr(start, end - start));
    add(text.substr(start));
  }
  try {
    nn::check_metrics(out);
  } catch (const UsageError& e) {
    throw UsageError("--metrics: " + std::string(e.what()));
  }
  return out;
}

train::EarlyStoppingOptions early_stopping_from_flag(const std::string& text) {
  const KeywordList k(text, "--early-stopping",
                      {"monitor", "min_delta", "patience", "mode", "baseline", "restore_best_weights", "start_from_epoch"});
  train::EarlyStoppingOptions o;
  o.monitor = k.text("monitor", o.monitor);
  o.min_delta = k.number("min_delta", 0);
  o.patience = static_cast<int>(k.integer("patience", 0, 1000000, 0));
  o.mode = k.text("mode", o.mode);
  o.baseline = k.number("baseline");
  o.restore_best_weights = k.boolean("restore_best_weights", false);
  o.start_from_epoch = static_cast<int>(k.integer("start_from_epoch", 0, 1000000, 0));
  return o;
}

train::ReduceLROnPlateauOptions reduce_lr_from_flag(const std::string& text) {
  const KeywordList k(text, "--reduce-lr-on-plateau",
                      {"monitor", "factor", "patience", "mode", "min_delta", "cooldown", "min_lr"});
  train::ReduceLROnPlateauOptions o;
  o.monitor = k.text("monitor", o.monitor);
  o.factor = k.number("factor", o.factor);
  o.patience = static_cast<int>(k.integer("patience", 0, 1000000, o.patience));
  o.mode = k.text("mode", o.mode);
  o.min_delta = k.number("min_delta", o.min_delta);
  o.cooldown = static_cast<int>(k.integer("cooldown", 0, 1000000, 0));
  o.min_lr = k.number("min_lr", 0);
  return o;
}

ModelCheckpointOptions model_checkpoint_from_flag(const std::string& text) {
  const KeywordList k(text, "--model-checkpoint",
                      {"filepath", "monitor", "mode", "save_best_only", "initial_value_threshold"});
  ModelCheckpointOptions o;
  o.filepath = k.text("filepath", "");
  if (o.filepath.empty()) throw UsageError("--model-checkpoint: needs filepath=FILE");
  o.save_best_only = k.boolean("save_best_only", true);
  o.best.monitor = k.text("monitor", o.best.monitor);
  o.best.mode = k.text("mode", o.best.mode);
  o.best.initial_value_threshold = k.number("initial_value_threshold");
  return o;
}

}  // namespace axon::train_app
