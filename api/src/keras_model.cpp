// keras::Sequential: the layers' Keras configs become a Keras 3 Sequential
// JSON that the core's Keras reader turns into a model (through the layer
// registry), built on the scope's strategy or device; compile, fit, evaluate
// and predict are the core model's.
#include "context.hpp"

#include <axon/api/distribute.hpp>
#include <axon/api/keras.hpp>
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/model.hpp>
#include <axon/train/progress.hpp>
#include <axon/train/weights.hpp>
#include <axon/workers.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <map>
#include <unistd.h>

namespace axon::keras {
namespace {

using json = nlohmann::json;

std::atomic<uint64_t> g_seed{0};

// Keras' default layer name: "MaxPooling2D" -> "max_pooling2d".
std::string snake_case(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool upper = std::isupper(c) != 0;
    const bool after_lower = i > 0 && std::islower(static_cast<unsigned char>(name[i - 1])) != 0;
    const bool starts_word = i > 0 && upper && i + 1 < name.size() &&
                             std::islower(static_cast<unsigned char>(name[i + 1])) != 0 && name[i - 1] != '_';
    if (upper && (after_lower || starts_word)) out += '_';
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// [H, W] (Keras' (28, 28) of grey images) is [H, W, 1].
Shape image_shape(Shape shape) {
  if (shape.size() == 2) shape.push_back(1);
  return shape;
}

data::ImageSet with_labels(const Images& x, const Labels& y, const char* what) {
  if (static_cast<int64_t>(y.size()) != x.size())
    throw UsageError(std::string(what) + ": " + std::to_string(x.size()) + " images but " + std::to_string(y.size()) +
                     " labels");
  data::ImageSet set = x.set();
  for (size_t i = 0; i < y.size(); ++i) {
    if (y[i] < 0 || y[i] > 255)
      throw UsageError(std::string(what) + ": label " + std::to_string(y[i]) + " at index " + std::to_string(i) +
                       " is not a class number from 0 to 255");
    set.labels[i] = static_cast<uint8_t>(y[i]);
  }
  return set;
}

}  // namespace

struct Sequential::State {
  std::string name;
  std::vector<Layer> layers;
  Shape input_shape;
  axon::Strategy* strategy = nullptr;  // the scope's when the model was made
  Device* device = nullptr;            // the device scope's then
  std::unique_ptr<nn::Model> model;
  bool compiled = false;

  std::string keras_json() const {
    json list = json::array();
    list.push_back({{"class_name", "InputLayer"},
                    {"config", {{"name", "input_layer"},
                                {"batch_shape", {nullptr, input_shape[0], input_shape[1], input_shape[2]}},
                                {"dtype", "float32"}}}});
    std::map<std::string, int> counts;
    for (const Layer& l : layers) {
      json config = json::parse(l.config_json);
      if (!config.contains("name")) {
        const std::string base = snake_case(l.class_name);
        const int n = counts[base]++;
        config["name"] = n == 0 ? base : base + "_" + std::to_string(n);
      }
      list.push_back({{"class_name", l.class_name}, {"config", config}});
    }
    return json{{"class_name", "Sequential"}, {"config", {{"name", name}, {"layers", list}}}}.dump();
  }

  // Builds the model once the input shape is known.
  void build() {
    if (model) return;
    if (input_shape.empty()) throw UsageError("the model " + name + " has no input shape: give the first layer one");
    if (layers.empty()) throw UsageError("the model " + name + " has no layers");
    nn::KerasModel k = nn::model_from_keras_json(keras_json(), "keras::Sequential " + name);
    const uint64_t seed = g_seed.load();
    if (strategy != nullptr)
      k.model->build(input_shape, *strategy, seed);
    else
      k.model->build(input_shape, device != nullptr ? *device : api_detail::current_device(), seed);
    model = std::move(k.model);
  }

  nn::Model& built(const char* what) {
    build();
    if (!compiled && what != nullptr) throw UsageError(std::string(what) + ": call compile() first");
    return *model;
  }
};

Sequential::Sequential(std::vector<Layer> layers, const std::string& name) : s_(std::make_unique<State>()) {
  api_detail::runtime();
  s_->name = name;
  s_->strategy = distribute::StrategyScope::current();
  s_->device = DeviceScope::current();
  for (Layer& l : layers) add(std::move(l));
}

Sequential::~Sequential() = default;
Sequential::Sequential(Sequential&&) noexcept = default;
Sequential& Sequential::operator=(Sequential&&) noexcept = default;

void Sequential::add(Layer layer) {
  if (s_->model) throw UsageError("add: the model " + s_->name + " is already built");
  if (!layer.input_shape.empty()) {
    if (!s_->layers.empty()) throw UsageError("add: only the first layer takes input_shape");
    s_->input_shape = image_shape(layer.input_shape);
    if (s_->input_shape.size() != 3)
      throw UsageError("add: input_shape must be [H, W] or [H, W, C], got " + shape_string(layer.input_shape));
  }
  s_->layers.push_back(std::move(layer));
  // Keras builds a Sequential with a known input shape as layers arrive;
  // axon builds it when it is used, so a bad layer is reported at the call
  // that needs the model (compile, summary, fit).
}

void Sequential::compile(const nn::OptimizerOptions& optimizer, const nn::LossOptions& loss,
                         const std::vector<std::string>& metrics) {
  for (const std::string& m : metrics)
    if (m != "accuracy" && m != "acc" && m != "sparse_categorical_accuracy")
      throw UsageError("compile: metric \"" + m + "\" is not supported; axon computes \"accuracy\"");
  nn::Model& model = s_->built(nullptr);
  model.compile(optimizer, loss);
  s_->compiled = true;
}

History Sequential::fit(const Images& x, const Labels& y, const FitOptions& options) {
  if (s_->input_shape.empty() && x.size() > 0) s_->input_shape = Shape(x.shape().begin() + 1, x.shape().end());
  nn::Model& model = s_->built("fit");
  const data::ImageSet train = with_labels(x, y, "fit");
  std::optional<data::ImageSet> validation;
  if (options.validation_data) validation = with_labels(options.validation_data->x, options.validation_data->y,
                                                        "fit: validation_data");
  std::vector<std::unique_ptr<nn::Callback>> owned;
  nn::FitOptions o;
  o.epochs = options.epochs;
  o.batch_size = options.batch_size;
  o.shuffle = options.shuffle;
  o.seed = options.seed;
  o.steps_per_epoch = options.steps_per_epoch;
  o.validation_data = validation ? &*validation : nullptr;
  const bool chief = model.strategy().is_chief();
  // Redrawn in place on a terminal, as axon-train does; mpirun's forwarded
  // output gets one line per epoch.
  const bool interactive = ::isatty(::fileno(stdout)) != 0 && !started_by_mpi_launcher();
  if (options.verbose != 0 && chief) owned.push_back(std::make_unique<train::ProgressBar>(stdout, interactive));
  for (const callbacks::Callback& c : options.callbacks) owned.push_back(c.make(model, options.batch_size));
  for (auto& c : owned) o.callbacks.push_back(c.get());
  History h;
  h.logs = model.fit(train, o);
  for (const nn::EpochLogs& e : h.logs.epochs) {
    h.history["loss"].push_back(e.loss);
    h.history["accuracy"].push_back(e.accuracy);
    h.history["seconds"].push_back(e.seconds);
    if (e.has_validation) {
      h.history["val_loss"].push_back(e.val_loss);
      h.history["val_accuracy"].push_back(e.val_accuracy);
    }
  }
  return h;
}

Evaluation Sequential::evaluate(const Images& x, const Labels& y, int64_t batch_size) {
  nn::Model& model = s_->built("evaluate");
  const data::ImageSet set = with_labels(x, y, "evaluate");
  const nn::MetricValues m = model.evaluate(set, batch_size);
  return {m.loss, m.accuracy};
}

Tensor Sequential::predict(const Images& x, int64_t batch_size) {
  nn::Model& model = s_->built(nullptr);
  const std::vector<float> logits = model.predict(x.set(), batch_size);
  const int64_t classes = x.size() > 0 ? static_cast<int64_t>(logits.size()) / x.size() : 0;
  return Tensor::from_vector<float>(model.device(), AXON_FLOAT32, {x.size(), classes}, logits);
}

std::string Sequential::summary() {
  const std::string text = s_->built(nullptr).summary();
  std::fputs(text.c_str(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  return text;
}

void Sequential::save_weights(const std::filesystem::path& file) { train::save_weights(s_->built(nullptr), file); }
void Sequential::load_weights(const std::filesystem::path& file) { train::load_weights(s_->built(nullptr), file); }

std::string Sequential::to_json() {
  nn::Model& model = s_->built(nullptr);
  return nn::keras_json(model, s_->input_shape);
}

int64_t Sequential::count_params() { return s_->built(nullptr).parameter_count(); }

nn::Model& Sequential::model() { return s_->built(nullptr); }

namespace utils {
void set_random_seed(uint64_t seed) { g_seed.store(seed); }
}  // namespace utils

}  // namespace axon::keras
