#include <axon/nn/keras_compile_config.hpp>

#include <axon/error.hpp>
#include <axon/nn/lr_schedule.hpp>
#include <axon/nn/model.hpp>
#include <axon/parse.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>

namespace axon::nn {
namespace {

using json = nlohmann::json;

struct Reader {
  const json& config;
  std::string where;
  [[noreturn]] void fail(const std::string& why) const { throw UsageError(where + ": " + why); }
  bool present(const char* key) const { return config.contains(key) && !config[key].is_null(); }
  std::optional<float> number(const char* key) const {
    if (!present(key)) return std::nullopt;
    if (!config[key].is_number() || !std::isfinite(config[key].get<double>()))
      fail(std::string(key) + " is " + config[key].dump() + ", not a number");
    return config[key].get<float>();
  }
  bool boolean(const char* key) const {
    if (!present(key)) return false;
    if (!config[key].is_boolean()) fail(std::string(key) + " is " + config[key].dump() + ", not true or false");
    return config[key].get<bool>();
  }
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A Keras loss: "categorical_crossentropy" (Keras' defaults) or
// {"class_name": "CategoricalCrossentropy", "config": {...}}.
nn::LossOptions read_loss(const json& loss, const std::string& where) {
  static const json kNoConfig = json::object();
  std::string cls;
  const json* config = &kNoConfig;
  if (loss.is_string()) {
    cls = loss.get<std::string>();
  } else if (loss.is_object() && loss.contains("class_name") && loss["class_name"].is_string()) {
    cls = loss["class_name"].get<std::string>();
    if (loss.contains("config") && loss["config"].is_object()) config = &loss["config"];
  }
  const std::optional<nn::LossKind> kind = cls.empty() ? std::nullopt : nn::loss_from_name(cls);
  if (!kind)
    throw UsageError(where + ": the loss " + parse::printable(cls.empty() ? loss.dump() : cls, 80) +
                     " is not one axon has (" + nn::loss_names() + ")");
  const Reader r{*config, where};
  nn::LossOptions o;
  o.kind = *kind;
  o.from_logits = r.boolean("from_logits");  // Keras' default: probabilities
  if (auto v = r.number("label_smoothing")) o.label_smoothing = *v;
  if (auto v = r.number("delta")) o.delta = *v;
  if (r.present("ignore_class")) r.fail("ignore_class is not supported");
  if (r.present("axis") && (*config)["axis"] != -1)
    r.fail("axis " + (*config)["axis"].dump() + " is not supported (-1 is)");
  try {
    nn::make_loss(o);  // its settings checked now
  } catch (const UsageError& e) {
    throw UsageError(where + ": " + e.what());
  }
  return o;
}

// A Keras metric: "mse" (named as given) or {"class_name": "SparseTopKCategoricalAccuracy",
// "config": {"name": "top3", "k": 3}}; accuracy's names and classes give an
// empty name (axon always reports accuracy).
nn::MetricOptions read_metric(const json& metric, const std::string& where) {
  if (metric.is_string()) {
    const std::string name = metric.get<std::string>();
    if (nn::is_accuracy_name(name)) return {};
    if (std::optional<nn::MetricOptions> m = nn::metric_from_name(name)) return *m;
    throw UsageError(where + ": the metric " + parse::printable(name) + " is not one axon has (" +
                     nn::metric_names() + ")");
  }
  if (!metric.is_object() || !metric.contains("class_name") || !metric["class_name"].is_string())
    throw UsageError(where + ": the metric " + parse::printable(metric.dump(), 80) + " is not a Keras metric");
  const std::string cls = metric["class_name"].get<std::string>();
  static const json kNoConfig = json::object();
  const json& config = metric.contains("config") && metric["config"].is_object() ? metric["config"] : kNoConfig;
  if (cls == "Accuracy" || cls == "SparseCategoricalAccuracy" || cls == "CategoricalAccuracy" ||
      cls == "BinaryAccuracy")
    return {};
  const std::optional<nn::MetricKind> kind = nn::metric_from_keras_class(cls);
  if (!kind)
    throw UsageError(where + ": the metric " + parse::printable(cls) + " is not one axon has (" +
                     nn::metric_names() + ")");
  nn::MetricOptions m;
  m.kind = *kind;
  m.name = nn::metric_name(*kind);
  if (config.contains("name") && config["name"].is_string()) m.name = config["name"].get<std::string>();
  if (config.contains("k") && !config["k"].is_null()) {
    if (!config["k"].is_number_integer() || config["k"].get<int64_t>() < 1 || config["k"].get<int64_t>() > INT32_MAX)
      throw UsageError(where + ": " + m.name + ": k is " + config["k"].dump() + ", not a positive integer");
    m.k = static_cast<int>(config["k"].get<int64_t>());
  }
  return m;
}

}  // namespace

KerasCompileConfig read_compile_config(const std::string& config_json, const std::string& file) {
  KerasCompileConfig out;
  const json root = json::parse(config_json, nullptr, false);
  if (!root.is_object() || !root.contains("compile_config") || !root["compile_config"].is_object()) return out;
  const json& cc = root["compile_config"];
  const std::string where = file + ": compile_config";

  if (cc.contains("loss") && !cc["loss"].is_null()) out.loss = read_loss(cc["loss"], where + ".loss");

  // Metrics: names, or serialised objects ({"class_name": ..., "config": {"name": ..., "k": ...}}).
  if (cc.contains("metrics") && !cc["metrics"].is_null()) {
    if (!cc["metrics"].is_array()) throw UsageError(where + ".metrics is " + cc["metrics"].dump().substr(0, 80) + ", not a list");
    for (const json& m : cc["metrics"]) out.metrics.push_back(read_metric(m, where + ".metrics"));
    out.metrics.erase(std::remove_if(out.metrics.begin(), out.metrics.end(),
                                     [](const nn::MetricOptions& m) { return m.name.empty(); }),
                      out.metrics.end());
    try {
      nn::check_metrics(out.metrics);
    } catch (const UsageError& e) {
      throw UsageError(where + ".metrics: " + e.what());
    }
  }

  if (!cc.contains("optimizer") || cc["optimizer"].is_null()) return out;
  const json& opt = cc["optimizer"];
  static const json kNoConfig = json::object();
  std::string cls;
  const json* config = &kNoConfig;
  if (opt.is_string()) {
    cls = opt.get<std::string>();
  } else if (opt.is_object() && opt.contains("class_name") && opt["class_name"].is_string()) {
    cls = opt["class_name"].get<std::string>();
    if (opt.contains("config") && opt["config"].is_object()) config = &opt["config"];
  } else {
    throw UsageError(where + ": the optimizer is " + parse::printable(opt.dump(), 80) + ", not a Keras optimizer");
  }
  const std::optional<nn::OptimizerKind> kind = nn::optimizer_from_name(lower(cls));
  if (!kind)
    throw UsageError(where + ": the optimizer " + parse::printable(cls) + " is not one axon has (" +
                     nn::optimizer_names() + ")");
  const Reader r{*config, where + ".optimizer"};
  if (r.boolean("use_ema")) r.fail("use_ema (exponential moving averages of the weights) is not supported");
  for (const char* key : {"loss_scale_factor", "gradient_accumulation_steps"})
    if (r.present(key)) r.fail(std::string(key) + " is not supported");

  nn::OptimizerOptions o;
  o.kind = *kind;
  if (r.present("learning_rate")) {
    if ((*config)["learning_rate"].is_object()) {
      out.schedule_json = (*config)["learning_rate"].dump();
      o.learning_rate = (*nn::schedule_from_keras(out.schedule_json, where + ".optimizer.learning_rate"))(0);
    } else {
      o.learning_rate = r.number("learning_rate");
    }
  }
  if (auto v = r.number("momentum")) o.momentum = *v;
  o.nesterov = r.boolean("nesterov");
  if (auto v = r.number("rho")) o.rho = *v;
  o.centered = r.boolean("centered");
  o.epsilon = r.number("epsilon");
  if (auto v = r.number("beta_1")) o.beta_1 = *v;
  if (auto v = r.number("beta_2")) o.beta_2 = *v;
  o.amsgrad = r.boolean("amsgrad");
  if (auto v = r.number("initial_accumulator_value")) o.initial_accumulator_value = *v;
  o.weight_decay = r.number("weight_decay");
  o.clipnorm = r.number("clipnorm");
  o.clipvalue = r.number("clipvalue");
  o.global_clipnorm = r.number("global_clipnorm");
  out.optimizer = o.keras();
  try {
    nn::make_optimizer(*out.optimizer);  // its values checked now
  } catch (const UsageError& e) {
    throw UsageError(where + ".optimizer: " + e.what());
  }
  out.describe = cls + (out.schedule_json.empty() ? "" : " on a learning-rate schedule");
  return out;
}

std::string write_compile_config(Model& model, const LearningRateSchedule* schedule) {
  json metrics = json::array({"accuracy"});
  for (const MetricOptions& m : model.replica(0).train_metrics().compiled())
    metrics.push_back(json::parse(metric_keras_json(m)));
  return json{{"optimizer", json::parse(model.replica(0).optimizer().keras_config(schedule))},
              {"loss", json::parse(model.loss().keras_json())},
              {"loss_weights", nullptr},
              {"metrics", metrics},
              {"weighted_metrics", nullptr},
              {"run_eagerly", false},
              {"steps_per_execution", 1},
              {"jit_compile", false}}
      .dump();
}

}  // namespace axon::nn
