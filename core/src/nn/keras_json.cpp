// Keras model JSON in and out. The reader takes Keras 2's layout (input
// shape as "batch_input_shape" of an InputLayer or of the first layer,
// activations and initializers as plain names or {"class_name", "config"})
// and Keras 3's ("batch_shape", "module"/"registered_name" fields, dtype
// policies as objects). Every value is checked: the file may be hostile.
#include <axon/error.hpp>
#include <axon/limits.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/layers.hpp>
#include <axon/parse.hpp>

#include <nlohmann/json.hpp>

#include <set>

namespace axon::nn {
namespace {

using json = nlohmann::json;

constexpr const char* kSupported =
    "supported: InputLayer, Conv2D, MaxPooling2D, Flatten, Dense, Dropout, ReLU (docs/training.md lists their settings)";
// Deeper nesting than any model JSON has; the parser stops there.
constexpr int kMaxJsonDepth = 32;

std::string text_of(const json& v) { return parse::printable(v.dump()); }

// One entry of config.layers, with its place for messages.
class LayerConfig {
 public:
  LayerConfig(const std::string& source, size_t index, const json& layer) : source_(source), index_(index) {
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

  const std::string& class_name() const { return class_name_; }
  const std::string& name() const { return name_; }
  size_t index() const { return index_; }
  bool has(const char* key) const {
    const auto it = config_->find(key);
    return it != config_->end() && !it->is_null();
  }
  const json& at(const char* key) const { return config_->at(key); }

  [[noreturn]] void fail(const std::string& why) const {
    throw UsageError(source_ + ": layers[" + std::to_string(index_) + "] (" + parse::printable(class_name_) + " '" +
                     parse::printable(name_) + "'): " + why);
  }
  [[noreturn]] void fail_at(const std::string& why) const {
    throw UsageError(source_ + ": layers[" + std::to_string(index_) + "] " + why);
  }

  int64_t integer(const json& v, const char* key, int64_t lo, int64_t hi) const {
    int64_t x = 0;
    if (v.is_number_unsigned()) {
      const auto u = v.get<uint64_t>();
      x = u > static_cast<uint64_t>(hi) ? hi + 1 : static_cast<int64_t>(u);
    } else if (v.is_number_integer()) {
      x = v.get<int64_t>();
    } else {
      fail(std::string(key) + " is " + text_of(v) + ", not a whole number");
    }
    if (x < lo || x > hi)
      fail(std::string(key) + " is " + text_of(v) + ", not from " + std::to_string(lo) + " to " + std::to_string(hi));
    return x;
  }
  int64_t integer(const char* key, int64_t lo, int64_t hi, int64_t fallback) const {
    return has(key) ? integer(at(key), key, lo, hi) : fallback;
  }
  // An int, or a pair [a, b] with a == b (axon's layers are square).
  int64_t square(const char* key, int64_t lo, int64_t hi, int64_t fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (!v.is_array()) return integer(v, key, lo, hi);
    if (v.size() != 2) fail(std::string(key) + " is " + text_of(v) + ", not a pair");
    const int64_t a = integer(v[0], key, lo, hi), b = integer(v[1], key, lo, hi);
    if (a != b) fail(std::string(key) + " is " + text_of(v) + ": axon supports only equal height and width");
    return a;
  }
  std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!at(key).is_string()) fail(std::string(key) + " is " + text_of(at(key)) + ", not a string");
    return at(key).get<std::string>();
  }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!at(key).is_boolean()) fail(std::string(key) + " is " + text_of(at(key)) + ", not true or false");
    return at(key).get<bool>();
  }
  void require_null(std::initializer_list<const char*> keys) const {
    for (const char* k : keys)
      if (has(k)) fail(std::string(k) + " is " + text_of(at(k)) + "; axon supports none (null)");
  }
  // Keras 2 writes an initializer or activation as a name or {"class_name": ...}.
  std::string class_or_name(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json& v = at(key);
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object() && v.contains("class_name") && v["class_name"].is_string())
      return v["class_name"].get<std::string>();
    fail(std::string(key) + " is " + text_of(v) + ", not a name");
  }

  void check_common() const {
    if (!boolean("trainable", true)) fail("trainable is false; axon trains every layer");
    if (has("dtype")) {
      const json& d = at("dtype");
      std::string name;
      if (d.is_string()) name = d.get<std::string>();
      else if (d.is_object() && d.contains("config") && d["config"].is_object() && d["config"].contains("name") &&
               d["config"]["name"].is_string())
        name = d["config"]["name"].get<std::string>();
      if (name != "float32") fail("dtype is " + text_of(d) + "; axon trains in float32");
    }
    if (string("data_format", "channels_last") != "channels_last")
      fail("data_format is " + string("data_format", "") + "; axon's images are channels_last (NHWC)");
  }
  void check_initializers(const char* kernel, const char* bias) const {
    const std::string k = class_or_name(kernel, "GlorotUniform"), b = class_or_name(bias, "Zeros");
    if (k != "GlorotUniform" && k != "glorot_uniform")
      fail(std::string(kernel) + " is " + parse::printable(k) + "; axon initialises kernels GlorotUniform");
    if (b != "Zeros" && b != "zeros") fail(std::string(bias) + " is " + parse::printable(b) + "; axon initialises biases Zeros");
    require_null({"kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                  "bias_constraint"});
  }
  Activation activation(bool softmax_allowed) const {
    const std::string a = class_or_name("activation", "linear");
    if (a == "relu") return Activation::relu;
    if (a == "linear") return Activation::linear;
    if (a == "softmax") {
      if (softmax_allowed) return Activation::softmax;
      fail("activation softmax is supported on the last layer only (as the model's output)");
    }
    fail("activation " + parse::printable(a) + "; supported: relu, linear" +
         (softmax_allowed ? ", softmax (the last layer)" : ""));
  }
  axon_padding padding() const {
    const std::string p = string("padding", "valid");
    if (p == "valid") return AXON_PADDING_VALID;
    if (p == "same") return AXON_PADDING_SAME;
    fail("padding is " + parse::printable(p) + "; supported: valid, same");
  }

 private:
  std::string source_;
  size_t index_;
  std::string class_name_, name_;
  const json* config_ = nullptr;
};

// [null, H, W, C] -> {H, W, C}.
Shape input_shape_from(const json& v, const std::string& source, const std::string& where) {
  auto bad = [&](const std::string& why) -> UsageError {
    return UsageError(source + ": the input shape (" + where + ") is " + text_of(v) + ": " + why);
  };
  if (!v.is_array() || v.size() != 4 || !v[0].is_null())
    throw bad("axon needs [null, height, width, channels]");
  Shape s;
  for (size_t i = 1; i < 4; ++i) {
    if (!v[i].is_number_integer() || v[i].get<int64_t>() < 1) throw bad("sizes must be whole numbers of at least 1");
    const int64_t limit = i < 3 ? limits::kMaxImageSide : 4;
    if (v[i].get<int64_t>() > limit)
      throw bad((i < 3 ? "height and width are at most " : "channels are at most ") + std::to_string(limit));
    s.push_back(v[i].get<int64_t>());
  }
  return s;
}

int64_t conv_out(int64_t in, int64_t k, int64_t stride, axon_padding p) {
  return p == AXON_PADDING_SAME ? (in + stride - 1) / stride : (in < k ? 0 : (in - k) / stride + 1);
}

}  // namespace

KerasModel model_from_keras_json(const std::string& text, const std::string& source) {
  json doc;
  try {
    doc = json::parse(text, [&](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth) throw UsageError(source + ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      return true;
    });
  } catch (const json::exception& e) {
    throw UsageError(source + ": not valid JSON: " + parse::printable(e.what()));
  }
  if (!doc.is_object() || !doc.contains("class_name") || !doc["class_name"].is_string())
    throw UsageError(source + ": not a Keras model JSON (no class_name); write it with model.to_json()");
  const std::string cls = doc["class_name"].get<std::string>();
  if (cls != "Sequential")
    throw UsageError(source + ": the model is a " + parse::printable(cls) +
                     "; axon reads Sequential models (keras.Sequential([...]).to_json())");
  if (!doc.contains("config") || !doc["config"].is_object() || !doc["config"].contains("layers") ||
      !doc["config"]["layers"].is_array())
    throw UsageError(source + ": the Sequential has no config.layers list");
  const json& layers = doc["config"]["layers"];
  if (layers.size() > static_cast<size_t>(limits::kMaxModelLayers))
    throw UsageError(source + ": " + std::to_string(layers.size()) + " layers, above the limit of " +
                     std::to_string(limits::kMaxModelLayers));
  std::string model_name = "sequential";
  if (doc["config"].contains("name") && doc["config"]["name"].is_string())
    model_name = parse::printable(doc["config"]["name"].get<std::string>());

  KerasModel out;
  out.model = std::make_unique<Sequential>(model_name);
  // The input shape: an InputLayer first (Keras 3 "batch_shape", Keras 2
  // "batch_input_shape"), the first layer's "batch_input_shape" (Keras 2's
  // input_shape= argument), or Keras 3's build_config.
  bool have_input = false;
  size_t first = 0;
  if (!layers.empty()) {
    const LayerConfig l0(source, 0, layers[0]);
    for (const char* key : {"batch_shape", "batch_input_shape"})
      if (!have_input && l0.has(key)) {
        out.input_shape = input_shape_from(l0.at(key), source, "layers[0] " + std::string(key));
        have_input = true;
      }
    if (l0.class_name() == "InputLayer") {
      if (!have_input) l0.fail("has no batch_shape");
      if (l0.boolean("sparse", false) || l0.boolean("ragged", false)) l0.fail("sparse and ragged inputs are not supported");
      l0.check_common();
      first = 1;
    }
  }
  if (!have_input && doc.contains("build_config") && doc["build_config"].is_object() &&
      doc["build_config"].contains("input_shape")) {
    out.input_shape = input_shape_from(doc["build_config"]["input_shape"], source, "build_config.input_shape");
    have_input = true;
  }
  if (!have_input)
    throw UsageError(source + ": no input shape: give the model an Input(shape=(28, 28, 1)) (or input_shape=) first");
  if (first == layers.size()) throw UsageError(source + ": the model has no layers after its input");

  Shape shape = out.input_shape;
  int64_t params = 0;
  std::set<std::string> names;
  for (size_t i = first; i < layers.size(); ++i) {
    const LayerConfig l(source, i, layers[i]);
    const bool last = i + 1 == layers.size();
    const std::string& c = l.class_name();
    if (c != "Conv2D" && c != "MaxPooling2D" && c != "Flatten" && c != "Dense" && c != "Dropout" && c != "ReLU")
      l.fail("axon does not support this layer; " + std::string(kSupported));
    const std::string& name = l.name();
    if (name.empty() || name.size() > 128 ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != std::string::npos)
      l.fail("the name must be 1 to 128 letters, digits, '_', '.' or '-' (it names the layer's weights)");
    if (!names.insert(name).second) l.fail("the name is used by an earlier layer");
    l.check_common();
    if (i > first) {
      for (const char* key : {"batch_shape", "batch_input_shape"})
        if (l.has(key)) l.fail(std::string(key) + " on a layer after the first");
    }
    const bool image = shape.size() == 3;
    std::unique_ptr<Layer> layer;
    if (c == "Conv2D") {
      if (!image) l.fail("needs a [height, width, channels] input, gets " + shape_string(shape));
      const int64_t filters = l.integer("filters", 1, 65536, 0);
      if (filters == 0) l.fail("has no filters");
      const int64_t k = l.square("kernel_size", 1, limits::kMaxImageSide, 0);
      if (k == 0) l.fail("has no kernel_size");
      const int64_t s = l.square("strides", 1, limits::kMaxImageSide, 1);
      for (const char* key : {"dilation_rate", "groups"})
        if (l.has(key) && l.at(key) != json(1) && l.at(key) != json::array({1, 1}))
          l.fail(std::string(key) + " is " + text_of(l.at(key)) + "; axon supports 1 only");
      const axon_padding pad = l.padding();
      const bool bias = l.boolean("use_bias", true);
      l.check_initializers("kernel_initializer", "bias_initializer");
      const int64_t oh = conv_out(shape[0], k, s, pad), ow = conv_out(shape[1], k, s, pad);
      if (oh < 1 || ow < 1) l.fail("its " + std::to_string(k) + "x" + std::to_string(k) + " kernel is larger than its input " + shape_string(shape));
      params += k * k * shape[2] * filters + (bias ? filters : 0);
      out.weights.push_back({name + "/kernel", {k, k, shape[2], filters}});
      if (bias) out.weights.push_back({name + "/bias", {filters}});
      layer = std::make_unique<Conv2D>(static_cast<int>(filters), static_cast<int>(k), l.activation(false),
                                       static_cast<int>(s), pad, name, bias);
      shape = {oh, ow, filters};
    } else if (c == "MaxPooling2D") {
      if (!image) l.fail("needs a [height, width, channels] input, gets " + shape_string(shape));
      const int64_t p = l.square("pool_size", 1, limits::kMaxImageSide, 2);
      const int64_t s = l.square("strides", 1, limits::kMaxImageSide, p);
      const axon_padding pad = l.padding();
      if (p * p > 255) l.fail("a pool of " + std::to_string(p) + "x" + std::to_string(p) + " is above axon's 255 taps");
      const int64_t oh = conv_out(shape[0], p, s, pad), ow = conv_out(shape[1], p, s, pad);
      if (oh < 1 || ow < 1) l.fail("its pool is larger than its input " + shape_string(shape));
      layer = std::make_unique<MaxPooling2D>(static_cast<int>(p), name, static_cast<int>(s), pad);
      shape = {oh, ow, shape[2]};
    } else if (c == "Flatten") {
      layer = std::make_unique<Flatten>(name);
      shape = {numel(shape)};
    } else if (c == "Dense") {
      if (shape.size() != 1) l.fail("needs a flat input (a Flatten before it), gets " + shape_string(shape));
      const int64_t units = l.integer("units", 1, 65536, 0);
      if (units == 0) l.fail("has no units");
      if (!l.boolean("use_bias", true)) l.fail("use_bias is false; axon's Dense has a bias");
      l.check_initializers("kernel_initializer", "bias_initializer");
      if (shape[0] > limits::kMaxModelParameters / units)
        l.fail("its kernel of " + std::to_string(shape[0]) + "x" + std::to_string(units) +
               " is above the model's limit of " + std::to_string(limits::kMaxModelParameters) + " parameters");
      params += shape[0] * units + units;
      out.weights.push_back({name + "/kernel", {shape[0], units}});
      out.weights.push_back({name + "/bias", {units}});
      layer = std::make_unique<Dense>(static_cast<int>(units), l.activation(last), name);
      shape = {units};
    } else if (c == "Dropout") {
      if (!l.has("rate") || !l.at("rate").is_number()) l.fail("has no rate");
      const double rate = l.at("rate").get<double>();
      if (!(rate >= 0 && rate < 1)) l.fail("rate is " + text_of(l.at("rate")) + ", not from 0 to below 1");
      l.require_null({"noise_shape"});
      layer = std::make_unique<Dropout>(static_cast<float>(rate), name);
    } else {  // ReLU
      if (l.has("max_value")) l.fail("max_value is set; axon's ReLU has none");
      for (const char* k : {"negative_slope", "threshold"})
        if (l.has(k) && (!l.at(k).is_number() || l.at(k).get<double>() != 0))
          l.fail(std::string(k) + " is " + text_of(l.at(k)) + "; axon's ReLU supports 0 only");
      layer = std::make_unique<ReLU>(name);
    }
    if (numel(shape) > limits::kMaxLayerOutputsPerSample)
      l.fail("outputs " + shape_string(shape) + " per sample, above the limit of " +
             std::to_string(limits::kMaxLayerOutputsPerSample) + " values");
    if (params > limits::kMaxModelParameters)
      l.fail("brings the model to " + std::to_string(params) + " parameters, above the limit of " +
             std::to_string(limits::kMaxModelParameters));
    if (last && c != "Dense") l.fail("the last layer must be a Dense (the model's logits)");
    out.model->add(std::move(layer));
  }
  return out;
}

std::string keras_json(Sequential& model, const Shape& input_shape) {
  auto entry = [](const char* cls, json config) {
    config["trainable"] = true;
    config["dtype"] = "float32";
    return json{{"module", "keras.layers"}, {"class_name", cls}, {"config", std::move(config)}, {"registered_name", nullptr}};
  };
  const json batch_shape = {nullptr, input_shape.at(0), input_shape.at(1), input_shape.at(2)};
  json layers = json::array();
  layers.push_back(entry("InputLayer", {{"name", "input_layer"}, {"batch_shape", batch_shape}, {"sparse", false}}));
  layers.back()["config"].erase("trainable");
  for (Layer* l : model.layers()) {
    const std::string type = l->type();
    json c = {{"name", l->name()}};
    if (auto* conv = dynamic_cast<Conv2D*>(l)) {
      c["filters"] = conv->filters();
      c["kernel_size"] = {conv->kernel_size(), conv->kernel_size()};
      c["strides"] = {conv->stride(), conv->stride()};
      c["padding"] = conv->padding() == AXON_PADDING_SAME ? "same" : "valid";
      c["data_format"] = "channels_last";
      c["activation"] = activation_name(conv->activation());
      c["use_bias"] = conv->use_bias();
    } else if (auto* pool = dynamic_cast<MaxPooling2D*>(l)) {
      c["pool_size"] = {pool->pool_size(), pool->pool_size()};
      c["strides"] = {pool->attrs().stride_h, pool->attrs().stride_w};
      c["padding"] = pool->attrs().padding == AXON_PADDING_SAME ? "same" : "valid";
      c["data_format"] = "channels_last";
    } else if (dynamic_cast<Flatten*>(l) != nullptr) {
      c["data_format"] = "channels_last";
    } else if (auto* dense = dynamic_cast<Dense*>(l)) {
      c["units"] = dense->units();
      c["activation"] = activation_name(dense->activation());
      c["use_bias"] = true;
    } else if (auto* drop = dynamic_cast<Dropout*>(l)) {
      c["rate"] = drop->rate();
    } else if (dynamic_cast<ReLU*>(l) == nullptr) {
      throw RuntimeError("keras_json: no Keras form for layer " + l->name() + " (" + type + ")");
    }
    layers.push_back(entry(l->type(), std::move(c)));
  }
  const json doc = {{"module", "keras"},
                    {"class_name", "Sequential"},
                    {"config", {{"name", model.name()}, {"trainable", true}, {"dtype", "float32"}, {"layers", layers}}},
                    {"registered_name", nullptr},
                    {"build_config", {{"input_shape", batch_shape}}}};
  return doc.dump();
}

}  // namespace axon::nn
