#include <axon/nn/keras_compile_config.hpp>

#include <axon/error.hpp>
#include <axon/nn/lr_schedule.hpp>

#include <nlohmann/json.hpp>

#include <cctype>
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
    throw UsageError(where + ": the loss " + (cls.empty() ? loss.dump().substr(0, 80) : cls) +
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

}  // namespace

KerasCompileConfig read_compile_config(const std::string& config_json, const std::string& file) {
  KerasCompileConfig out;
  const json root = json::parse(config_json, nullptr, false);
  if (!root.is_object() || !root.contains("compile_config") || !root["compile_config"].is_object()) return out;
  const json& cc = root["compile_config"];
  const std::string where = file + ": compile_config";

  if (cc.contains("loss") && !cc["loss"].is_null()) out.loss = read_loss(cc["loss"], where + ".loss");

  // Metrics: names, or serialised objects ({"class_name": ..., "config": {"name": ...}}).
  if (cc.contains("metrics") && cc["metrics"].is_array())
    for (const json& m : cc["metrics"]) {
      std::string name = m.is_string() ? m.get<std::string>() : std::string();
      if (m.is_object() && m.contains("config") && m["config"].is_object() && m["config"].contains("name") &&
          m["config"]["name"].is_string())
        name = m["config"]["name"].get<std::string>();
      if (name.empty()) name = m.dump().substr(0, 60);
      if (name != "accuracy" && name != "acc") out.other_metrics.push_back(name);
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
    throw UsageError(where + ": the optimizer is " + opt.dump().substr(0, 80) + ", not a Keras optimizer");
  }
  const std::optional<nn::OptimizerKind> kind = nn::optimizer_from_name(lower(cls));
  if (!kind) throw UsageError(where + ": the optimizer " + cls + " is not one axon has (" + nn::optimizer_names() + ")");
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

}  // namespace axon::nn
