// keras::Model and keras::Sequential: every model is a Keras 3 model JSON
// (a Sequential's from its layers' configs, a functional one from its graph,
// a loaded one from its file) that the core's Keras reader turns into a
// model (through the layer registry), built on the scope's strategy or
// device; compile, fit, evaluate and predict are the core model's.
#include "context.hpp"
#include "keras_detail.hpp"

#include <axon/api/distribute.hpp>
#include <axon/api/keras.hpp>
#include <axon/dispatch.hpp>
#include <axon/error.hpp>
#include <axon/io/read_file.hpp>
#include <axon/log.hpp>
#include <axon/nn/keras_compile_config.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/model.hpp>
#include <axon/train/keras_file.hpp>
#include <axon/train/metrics_csv.hpp>
#include <axon/train/progress.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>
#include <axon/train/weights.hpp>
#include <axon/workers.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <map>
#include <unistd.h>

namespace axon::keras {
namespace {

using json = nlohmann::json;

std::atomic<uint64_t> g_seed{0};

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

namespace detail {
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
}  // namespace detail

struct Model::State {
  std::string name;
  std::vector<Layer> layers;  // a Sequential's
  std::string model_json;     // a functional or loaded model's Keras JSON (else made from `layers`)
  Shape input_shape;
  axon::Strategy* strategy = nullptr;  // the scope's when the model was made
  Device* device = nullptr;            // the device scope's then
  std::unique_ptr<nn::Model> model;
  bool compiled = false;
  std::shared_ptr<const nn::LearningRateSchedule> schedule;  // compile()'s, if any
  float learning_rate = 0;                                   // compile()'s first rate

  State() {
    api_detail::runtime();
    strategy = distribute::StrategyScope::current();
    device = DeviceScope::current();
  }

  // Names the model in the reader's messages.
  std::string source() const { return (model_json.empty() ? "keras::Sequential " : "keras::Model ") + name; }

  std::string keras_json() const {
    if (!model_json.empty()) return model_json;
    json list = json::array();
    list.push_back({{"class_name", "InputLayer"},
                    {"config", {{"name", "input_layer"},
                                {"batch_shape", {nullptr, input_shape[0], input_shape[1], input_shape[2]}},
                                {"dtype", "float32"}}}});
    std::map<std::string, int> counts;
    for (const Layer& l : layers) {
      json config = json::parse(l.config_json);
      if (!config.contains("name")) {
        const std::string base = detail::snake_case(l.class_name);
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
    if (layers.empty() && model_json.empty()) throw UsageError("the model " + name + " has no layers");
    nn::KerasModel k = nn::model_from_keras_json(keras_json(), source());
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

// ---------------------------------------------------------------- Model

Model::Model(std::unique_ptr<State> state) : s_(std::move(state)) {}

Model::Model(const KerasTensor& inputs, const KerasTensor& outputs, const std::string& name)
    : s_(std::make_unique<State>()) {
  s_->name = name;
  s_->model_json = detail::functional_json(inputs, outputs, name);
  s_->input_shape = inputs.shape();
  nn::model_from_keras_json(s_->model_json, s_->source());  // a graph axon cannot train fails here, as in Keras
}

Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

void Model::compile(const optimizers::Optimizer& optimizer, const nn::LossOptions& loss,
                    const std::vector<metrics::Metric>& metrics) {
  std::vector<nn::MetricOptions> compiled;
  for (const metrics::Metric& m : metrics)
    if (m.options) compiled.push_back(*m.options);
  try {
    nn::check_metrics(compiled);
  } catch (const UsageError& e) {
    throw UsageError("compile: " + std::string(e.what()));
  }
  nn::Model& model = s_->built(nullptr);
  model.compile(optimizer.options, loss, compiled);
  s_->schedule = optimizer.schedule;
  s_->learning_rate = model.optimizer().learning_rate();
  s_->compiled = true;
}

History Model::fit(const Images& x, const Labels& y, const FitOptions& options) {
  if (s_->input_shape.empty() && x.size() > 0) s_->input_shape = Shape(x.shape().begin() + 1, x.shape().end());
  s_->built("fit");
  const data::ImageSet train = with_labels(x, y, "fit");
  return fit(train, options);
}

History Model::fit(const data::SampleSource& x, const FitOptions& options) {
  if (s_->input_shape.empty() && x.size() > 0) s_->input_shape = x.layout().shape();
  nn::Model& model = s_->built("fit");
  std::optional<data::ImageSet> validation_arrays;
  const data::SampleSource* validation = nullptr;
  if (options.validation_data) {
    if (options.validation_data->arrays)
      validation_arrays = with_labels(options.validation_data->arrays->x, options.validation_data->arrays->y,
                                      "fit: validation_data");
    validation = validation_arrays ? &*validation_arrays : options.validation_data->source;
  }
  std::vector<std::unique_ptr<nn::Callback>> owned;
  nn::FitOptions o;
  o.epochs = options.epochs;
  o.batch_size = options.batch_size;
  o.shuffle = options.shuffle;
  o.seed = options.seed;
  o.steps_per_epoch = options.steps_per_epoch;
  o.validation_data = validation;
  o.learning_rate_schedule = s_->schedule.get();
  o.initial_epoch = options.initial_epoch;
  o.prefetch = options.prefetch;
  o.stop_requested = options.stop_requested;
  const bool chief = model.strategy().is_chief();
  // verbose 1 redraws in place on a terminal, as axon-train does; mpirun's
  // forwarded output and files get one line per epoch.
  auto add_progress = [&] {
    if (options.verbose != 0 && chief)
      owned.push_back(std::make_unique<train::ProgressBar>(stdout, options.verbose == 1 && train::redraw_progress()));
  };
  const bool progress_placed = std::any_of(options.callbacks.begin(), options.callbacks.end(),
                                           [](const callbacks::Callback& c) { return c.progress_bar; });
  if (!progress_placed) add_progress();
  for (const callbacks::Callback& c : options.callbacks) {
    if (c.progress_bar)
      add_progress();
    else
      owned.push_back(c.make(model, options.batch_size));
  }
  // BackupAndRestore goes last: its backups keep what the others decided at
  // an epoch's end (their states ride in them).
  detail::BackupAndRestoreCallback* backup = nullptr;
  callbacks::StateRestorer* restorer = nullptr;
  std::vector<train::CheckpointedState*> states;
  std::vector<train::MetricsCsvLogger*> csv_loggers;
  for (auto& c : owned) {
    if (auto* b = dynamic_cast<detail::BackupAndRestoreCallback*>(c.get())) {
      if (backup != nullptr) throw UsageError("fit: more than one BackupAndRestore");
      backup = b;
      continue;
    }
    if (s_->schedule && dynamic_cast<train::ReduceLROnPlateauCallback*>(c.get()) != nullptr)
      throw UsageError("fit: ReduceLROnPlateau cannot set the learning rate of an optimizer a schedule drives");
    // A Custom callback is looked at through its forwarder.
    nn::Callback* own = c.get();
    if (auto* f = dynamic_cast<detail::Forward*>(own)) own = &f->target();
    if (auto* r = dynamic_cast<callbacks::StateRestorer*>(own)) {
      if (restorer != nullptr) throw UsageError("fit: more than one callback restores the training state");
      restorer = r;
    } else if (auto* state = dynamic_cast<train::CheckpointedState*>(own)) {
      states.push_back(state);
    }
    if (auto* csv = dynamic_cast<train::MetricsCsvLogger*>(own)) csv_loggers.push_back(csv);
    o.callbacks.push_back(c.get());
  }
  if (backup != nullptr && restorer != nullptr)
    throw UsageError("fit: BackupAndRestore and a callback that restores the training state cannot be used together");
  std::optional<train::TrainingPosition> at;
  if (restorer != nullptr) at = restorer->restore(states);
  if (backup != nullptr) {
    const int64_t all_steps = (x.size() + options.batch_size - 1) / std::max<int64_t>(options.batch_size, 1);
    const train::RunIdentity run{options.seed, options.batch_size, x.size(),
                                 options.steps_per_epoch > 0 ? std::min(options.steps_per_epoch, all_steps) : all_steps,
                                 s_->learning_rate, {}};
    at = backup->restore(run, states, s_->strategy);
    o.callbacks.push_back(backup);
  }
  if (at) {
    o.initial_epoch = at->epochs_done;
    o.initial_step = at->step_in_epoch;
    for (train::MetricsCsvLogger* csv : csv_loggers) csv->resume(at->history);
  }
  History h;
  h.logs = model.fit(x, o);
  if (h.logs.stopped && restorer != nullptr) restorer->on_stopped(h.logs);
  if (backup != nullptr && !h.logs.stopped) backup->finish();
  for (const nn::EpochLogs& e : h.logs.epochs) {
    h.history["loss"].push_back(e.loss);
    h.history["accuracy"].push_back(e.accuracy);
    for (const auto& [name, value] : e.metrics) h.history[name].push_back(value);
    h.history["seconds"].push_back(e.seconds);
    if (e.has_validation) {
      h.history["val_loss"].push_back(e.val_loss);
      h.history["val_accuracy"].push_back(e.val_accuracy);
      for (const auto& [name, value] : e.val_metrics) h.history["val_" + name].push_back(value);
    }
  }
  return h;
}

Evaluation Model::evaluate(const data::SampleSource& x, int64_t batch_size) {
  const nn::MetricValues m = s_->built("evaluate").evaluate(x, batch_size);
  return {m.loss, m.accuracy, m.metrics};
}

Evaluation Model::evaluate(const Images& x, const Labels& y, int64_t batch_size) {
  s_->built("evaluate");
  return evaluate(with_labels(x, y, "evaluate"), batch_size);
}

Tensor Model::predict(const Images& x, int64_t batch_size) {
  nn::Model& model = s_->built(nullptr);
  const std::vector<float> logits = model.predict(x.set(), batch_size);
  const int64_t classes = x.size() > 0 ? static_cast<int64_t>(logits.size()) / x.size() : 0;
  return Tensor::from_vector<float>(model.device(), AXON_FLOAT32, {x.size(), classes}, logits);
}

std::string Model::summary() {
  const std::string text = s_->built(nullptr).summary();
  std::fputs(text.c_str(), stdout);
  if (!text.empty() && text.back() != '\n') std::fputc('\n', stdout);
  return text;
}

void Model::save_weights(const std::filesystem::path& file) { train::save_weights(s_->built(nullptr), file); }
void Model::load_weights(const std::filesystem::path& file) { train::load_weights(s_->built(nullptr), file); }

void Model::save(const std::filesystem::path& file) {
  if (!train::is_keras_file(file))
    throw UsageError("save: " + file.string() + " is not a .keras file (save_weights writes the other formats)");
  // axon's .keras writer keeps the optimizer's variables beside the weights.
  nn::Model& model = s_->built("save");
  train::WeightsMetadata m;
  m["model"] = nn::keras_json(model, model.input_shape());
  m["compile_config"] = nn::write_compile_config(model, s_->schedule.get());
  train::save_weights(model, file, m);
}

std::string Model::to_json() {
  nn::Model& model = s_->built(nullptr);
  return nn::keras_json(model, s_->input_shape);
}

int64_t Model::count_params() { return s_->built(nullptr).parameter_count(); }

nn::Model& Model::model() { return s_->built(nullptr); }

// ---------------------------------------------------------------- Sequential

Sequential::Sequential(std::vector<Layer> layers, const std::string& name) : Model(std::make_unique<State>()) {
  s_->name = name;
  for (Layer& l : layers) add(std::move(l));
}

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

// ---------------------------------------------------------------- load_model

namespace models {

Model load_model(const std::filesystem::path& file) {
  if (!train::is_keras_file(file))
    throw UsageError("load_model: " + file.string() + " is not a .keras file (load_weights reads weights files)");
  const std::string name = file.string();
  const std::string config = train::read_keras_config(file);
  const nn::KerasCompileConfig compiled = nn::read_compile_config(config, name);
  auto state = std::make_unique<Model::State>();
  nn::KerasModel k = nn::model_from_keras_json(config, name);  // every error before any work
  state->model_json = config;
  state->name = k.model->name();
  state->input_shape = k.input_shape;
  nn::Model& model = state->built(nullptr);
  const std::string bytes = io::read_regular_file(
      file, train::max_weights_file_bytes(train::WeightLayout::packed(k.weights), file), "load_model");
  train::set_weights(model, bytes, file);
  if (compiled.optimizer) {
    model.compile(*compiled.optimizer, compiled.loss.value_or(nn::LossOptions{}), compiled.metrics);
    if (!compiled.schedule_json.empty())
      state->schedule = nn::schedule_from_keras(compiled.schedule_json, name + ": compile_config");
    state->learning_rate = model.optimizer().learning_rate();
    state->compiled = true;
    // The optimizer goes on from its saved state, as in Keras (none saved:
    // it starts afresh, as Keras does).
    const std::span<const uint8_t> view(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    train::set_keras_optimizer_state(model, train::read_keras_archive(view, name, bytes.size()), name);
  }
  return Model(std::move(state));
}

Model model_from_json(const std::string& json) {
  auto state = std::make_unique<Model::State>();
  nn::KerasModel k = nn::model_from_keras_json(json, "model_from_json");  // every error before any work
  state->model_json = json;
  state->name = k.model->name();
  state->input_shape = k.input_shape;
  return Model(std::move(state));
}

}  // namespace models

namespace utils {
void set_random_seed(uint64_t seed) { g_seed.store(seed); }
}  // namespace utils

}  // namespace axon::keras
