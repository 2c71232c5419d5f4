#include "keras_config.hpp"

#include <axon/error.hpp>
#include <axon/parse.hpp>

#include <cctype>
#include <cmath>
#include <optional>

namespace axon::nn {

std::string json_text(const json& v) { return parse::printable(v.dump()); }

// ------------------------------------------------------------------ writer

KerasConfigWriter::KerasConfigWriter() : impl_(std::make_unique<Impl>()) {}
KerasConfigWriter::~KerasConfigWriter() = default;

void KerasConfigWriter::integer(const char* key, int64_t value) { impl_->config[key] = value; }
void KerasConfigWriter::integers(const char* key, const std::vector<int64_t>& values) { impl_->config[key] = values; }
void KerasConfigWriter::number(const char* key, double value) { impl_->config[key] = value; }
void KerasConfigWriter::boolean(const char* key, bool value) { impl_->config[key] = value; }
void KerasConfigWriter::string(const char* key, const std::string& value) { impl_->config[key] = value; }
void KerasConfigWriter::null(const char* key) { impl_->config[key] = nullptr; }
void KerasConfigWriter::initializer(const char* key, const KerasInitializer& init) {
  const std::string& c = init.class_name;
  json config = json::object();
  if (c == "VarianceScaling")
    config = {{"scale", init.scale}, {"mode", init.mode}, {"distribution", init.distribution}, {"seed", nullptr}};
  else if (c == "RandomNormal" || c == "TruncatedNormal")
    config = {{"mean", init.mean}, {"stddev", init.stddev}, {"seed", nullptr}};
  else if (c == "RandomUniform")
    config = {{"minval", init.minval}, {"maxval", init.maxval}, {"seed", nullptr}};
  else if (c == "Constant")
    config = {{"value", init.value}};
  else if (c == "Orthogonal")
    config = {{"gain", init.gain}, {"seed", nullptr}};
  else if (c == "Identity")
    config = {{"gain", init.gain}};
  else if (c != "Zeros" && c != "Ones")
    config = {{"seed", nullptr}};  // the VarianceScaling forms by name
  impl_->config[key] = {{"module", "keras.initializers"},
                        {"class_name", c},
                        {"config", config},
                        {"registered_name", nullptr}};
}

// As Keras writes them: L1 or L2 for one factor, L1L2 for both.
void KerasConfigWriter::regularizer(const char* key, Regularizer r) {
  if (!r.any()) return;
  json config = json::object();
  if (r.l1 != 0) config["l1"] = r.l1;
  if (r.l2 != 0) config["l2"] = r.l2;
  impl_->config[key] = {{"module", "keras.regularizers"},
                        {"class_name", r.l2 == 0 ? "L1" : r.l1 == 0 ? "L2" : "L1L2"},
                        {"config", config},
                        {"registered_name", nullptr}};
}

// ------------------------------------------------------------------ reader

KerasLayerConfig::KerasLayerConfig(const std::string& source, size_t index, const json& layer)
    : source_(source), index_(index), layer_(&layer) {
  auto fail_at = [&](const std::string& why) {
    throw UsageError(source_ + ": " + where() + why);
  };
  if (!layer.is_object()) fail_at("is not an object");
  const auto cls = layer.find("class_name");
  if (cls == layer.end() || !cls->is_string()) fail_at("has no class_name");
  class_name_ = cls->get<std::string>();
  const auto c = layer.find("config");
  if (c == layer.end() || !c->is_object()) fail_at("(" + parse::printable(class_name_) + ") has no config object");
  config_ = &*c;
  const auto n = config_->find("name");
  if (n != config_->end()) {
    if (!n->is_string()) fail("its name is not a string");
    name_ = n->get<std::string>();
  }
}

std::string KerasLayerConfig::where() const {
  return index_ == kNoIndex ? std::string() : "layers[" + std::to_string(index_) + "] ";
}

const json& KerasLayerConfig::at_or_null(const char* key) const {
  static const json null_value;
  const auto it = config_->find(key);
  return it != config_->end() ? *it : null_value;
}

bool KerasLayerConfig::has(const char* key) const {
  const auto it = config_->find(key);
  return it != config_->end() && !it->is_null();
}

void KerasLayerConfig::fail(const std::string& why) const {
  throw KerasLayerError(source_ + ": " + where() + "(" + parse::printable(class_name_) + " '" +
                        parse::printable(name_) + "'): " + why);
}

int64_t KerasLayerConfig::integer(const json& v, const char* key, int64_t lo, int64_t hi) const {
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    x = u > static_cast<uint64_t>(hi) ? hi + 1 : static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else {
    fail(std::string(key) + " is " + json_text(v) + ", not a whole number");
  }
  if (x < lo || x > hi)
    fail(std::string(key) + " is " + json_text(v) + ", not from " + std::to_string(lo) + " to " + std::to_string(hi));
  return x;
}

int64_t KerasLayerConfig::integer(const char* key, int64_t lo, int64_t hi, int64_t fallback) const {
  return has(key) ? integer(at(key), key, lo, hi) : fallback;
}

std::pair<int64_t, int64_t> KerasLayerConfig::pair(const char* key, int64_t lo, int64_t hi,
                                                   std::pair<int64_t, int64_t> fallback) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (!v.is_array()) {
    const int64_t a = integer(v, key, lo, hi);
    return {a, a};
  }
  if (v.size() != 2) fail(std::string(key) + " is " + json_text(v) + ", not a pair");
  return {integer(v[0], key, lo, hi), integer(v[1], key, lo, hi)};
}

std::array<int64_t, 4> KerasLayerConfig::sides(const char* key, int64_t hi, int64_t fallback) const {
  if (!has(key)) return {fallback, fallback, fallback, fallback};
  const json& p = at(key);
  if (p.is_array() && p.size() == 2 && p[0].is_array() && p[1].is_array() && p[0].size() == 2 && p[1].size() == 2)
    return {integer(p[0][0], key, 0, hi), integer(p[0][1], key, 0, hi), integer(p[1][0], key, 0, hi),
            integer(p[1][1], key, 0, hi)};
  const auto hw = pair(key, 0, hi, {fallback, fallback});
  return {hw.first, hw.first, hw.second, hw.second};
}

double KerasLayerConfig::number(const char* key, double fallback) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(std::string(key) + " is " + json_text(v) + ", not a number");
  return v.get<double>();
}

float KerasLayerConfig::float_number(const char* key, double fallback) const {
  const double v = number(key, fallback);
  if (std::fabs(v) > 1e30) fail(std::string(key) + " is " + json_text(at(key)) + ", too large");
  return static_cast<float>(v);
}

float KerasLayerConfig::rate() const {
  if (!has("rate") || !at("rate").is_number()) fail("has no rate");
  const double rate = at("rate").get<double>();
  if (!(rate >= 0 && rate < 1 && static_cast<float>(rate) < 1))
    fail("rate is " + json_text(at("rate")) + ", not from 0 to below 1");
  return static_cast<float>(rate);
}

std::string KerasLayerConfig::string(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  if (!at(key).is_string()) fail(std::string(key) + " is " + json_text(at(key)) + ", not a string");
  return at(key).get<std::string>();
}

bool KerasLayerConfig::boolean(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  if (!at(key).is_boolean()) fail(std::string(key) + " is " + json_text(at(key)) + ", not true or false");
  return at(key).get<bool>();
}

void KerasLayerConfig::require_null(std::initializer_list<const char*> keys) const {
  for (const char* k : keys)
    if (has(k)) fail(std::string(k) + " is " + json_text(at(k)) + "; axon supports none (null)");
}

std::string KerasLayerConfig::class_or_name(const char* key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const json& v = at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("class_name") && v["class_name"].is_string())
    return v["class_name"].get<std::string>();
  fail(std::string(key) + " is " + json_text(v) + ", not a name");
}

void KerasLayerConfig::check_common() const {
  if (!boolean("trainable", true)) fail("trainable is false; axon trains every layer");
  if (has("dtype")) {
    const json& d = at("dtype");
    std::string name;
    if (d.is_string()) name = d.get<std::string>();
    else if (d.is_object() && d.contains("config") && d["config"].is_object() && d["config"].contains("name") &&
             d["config"]["name"].is_string())
      name = d["config"]["name"].get<std::string>();
    if (name != "float32") fail("dtype is " + json_text(d) + "; axon trains in float32");
  }
  if (string("data_format", "channels_last") != "channels_last")
    fail("data_format is " + parse::printable(string("data_format", "")) + "; axon's images are channels_last (NHWC)");
}

namespace {
// "GlorotUniform" -> "glorot_uniform": Keras 2 accepts either spelling.
std::string snake(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (std::isupper(c) && i > 0) out += '_';
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}
}  // namespace

void KerasLayerConfig::check_initializer(const char* key, const char* want) const {
  const std::string got = class_or_name(key, want);
  if (got != want && snake(got) != snake(want))
    fail(std::string(key) + " is " + parse::printable(got) + "; axon initialises it " + want);
}

std::optional<KerasInitializer> KerasLayerConfig::initializer(const char* key, const char* fallback) const {
  const std::string cls = class_or_name(key, fallback);
  KerasInitializer k;
  try {
    k = keras_initializer(cls);
  } catch (const UsageError&) {
    fail(std::string(key) + " is " + parse::printable(cls) + "; supported: " + keras_initializer_names());
  }
  // Its arguments, from {"class_name": ..., "config": {...}} (a name alone takes the defaults).
  const json& v = at_or_null(key);
  if (v.is_object() && v.contains("config") && v["config"].is_object()) {
    const json& c = v["config"];
    auto arg = [&](const char* name, double fallback_value) {
      if (!c.contains(name) || c[name].is_null()) return fallback_value;
      if (!c[name].is_number() || !std::isfinite(c[name].get<double>()) || std::fabs(c[name].get<double>()) > 1e30)
        fail(std::string(key) + "'s " + name + " is " + json_text(c[name]) + ", not a number a float holds");
      return c[name].get<double>();
    };
    auto word = [&](const char* name, const std::string& fallback_value, std::initializer_list<const char*> allowed) {
      if (!c.contains(name) || c[name].is_null()) return fallback_value;
      const std::string w = c[name].is_string() ? c[name].get<std::string>() : json_text(c[name]);
      for (const char* a : allowed)
        if (w == a) return w;
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      fail(std::string(key) + "'s " + name + " is " + parse::printable(w) + "; supported: " + list);
    };
    if (k.class_name == "VarianceScaling") {
      k.scale = arg("scale", k.scale);
      if (!(k.scale > 0)) fail(std::string(key) + "'s scale must be above 0");
      k.mode = word("mode", k.mode, {"fan_in", "fan_out", "fan_avg"});
      k.distribution = word("distribution", k.distribution, {"truncated_normal", "untruncated_normal", "uniform", "normal"});
      if (k.distribution == "normal") k.distribution = "truncated_normal";  // Keras' alias
    } else if (k.class_name == "RandomNormal" || k.class_name == "TruncatedNormal") {
      k.mean = arg("mean", k.mean);
      k.stddev = arg("stddev", k.stddev);
      if (k.stddev < 0) fail(std::string(key) + "'s stddev is below 0");
    } else if (k.class_name == "RandomUniform") {
      k.minval = arg("minval", k.minval);
      k.maxval = arg("maxval", k.maxval);
      if (k.minval > k.maxval) fail(std::string(key) + "'s minval is above its maxval");
    } else if (k.class_name == "Constant") {
      k.value = arg("value", k.value);
    } else if (k.class_name == "Orthogonal" || k.class_name == "Identity") {
      k.gain = arg("gain", k.gain);
    }
  }
  if (k == keras_initializer(fallback)) return std::nullopt;
  return k;
}

void KerasLayerConfig::check_no_constraints() const {
  require_null({"activity_regularizer", "kernel_constraint", "bias_constraint"});
}

Regularizer KerasLayerConfig::regularizer(const char* key) const {
  if (!has(key)) return {};
  const std::string cls = class_or_name(key, "");
  const json& v = at(key);
  const json config = v.is_object() && v.contains("config") && v["config"].is_object() ? v["config"] : json::object();
  auto factor = [&](const char* name, double fallback) {
    if (!config.contains(name) || config[name].is_null()) return fallback;
    const json& f = config[name];
    if (!f.is_number() || !(f.get<double>() >= 0) || f.get<double>() > 1e30)
      fail(std::string(key) + "'s " + name + " is " + json_text(f) + ", not a number from 0 to 1e30");
    return f.get<double>();
  };
  const std::string s = snake(cls);
  // Keras' defaults: L1(0.01), L2(0.01), L1L2(0, 0).
  if (s == "l1") return {factor("l1", 0.01), 0.0};
  if (s == "l2") return {0.0, factor("l2", 0.01)};
  if (s == "l1_l2" || s == "l1l2") return {factor("l1", 0.0), factor("l2", 0.0)};
  fail(std::string(key) + " is " + parse::printable(cls) + "; axon supports L1, L2 and L1L2 regularizers");
}

Activation KerasLayerConfig::activation() const {
  const std::string a = class_or_name("activation", "linear");
  if (const auto act = activation_from_name(a)) return *act;
  fail("activation " + parse::printable(a) + "; supported: " + activation_names());
}

axon_padding KerasLayerConfig::padding() const {
  const std::string p = string("padding", "valid");
  if (p == "valid") return AXON_PADDING_VALID;
  if (p == "same") return AXON_PADDING_SAME;
  fail("padding is " + parse::printable(p) + "; supported: valid, same");
}

}  // namespace axon::nn
