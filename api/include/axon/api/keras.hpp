// Keras for C++: layers, Sequential models, compile/fit/evaluate/predict,
// optimizers, the loss, callbacks, weights files and the data sets, named as
// in Keras so that the guide's Python translates line by line. A layer here
// is its Keras config: a model is built from those configs by axon's Keras
// reader and layer registry (every layer class axon reads, docs/training.md),
// the one way axon makes layers.
#pragma once

#include <axon/data/mnist.hpp>
#include <axon/data/sample_source.hpp>
#include <axon/nn/callback.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/lr_schedule.hpp>
#include <axon/nn/model.hpp>
#include <axon/nn/optimizer.hpp>
#include <axon/tensor.hpp>
#include <axon/train/checkpoint.hpp>
#include <axon/train/early_stopping.hpp>
#include <axon/train/reduce_lr_on_plateau.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace axon::keras {

namespace detail {
struct Node;  // one call of a layer in a functional graph (keras_functional.cpp)
}

// Keras' KerasTensor: the symbolic output of Input() or of a layer called on
// KerasTensors, holding the graph that makes it. Its shape is known at once
// (per sample, Keras' shape without the batch's None): a layer that does not
// fit its inputs throws when it is called.
class KerasTensor {
 public:
  explicit KerasTensor(std::shared_ptr<const detail::Node> node);
  const Shape& shape() const;
  // The layer that makes it ("conv2d_1", "input_layer").
  const std::string& name() const;
  const std::shared_ptr<const detail::Node>& node() const { return node_; }

 private:
  std::shared_ptr<const detail::Node> node_;
};

// keras.Input: a model's input of images [H, W, C] ([H, W]: one channel).
// `name`: "input_layer", "input_layer_1", ... when empty.
KerasTensor Input(const Shape& shape, const std::string& name = {});

// A layer as Keras serialises it: class name and config (a JSON object;
// "name" is filled in by the model when absent, Keras style: "conv2d_1").
// input_shape [H, W, C], when given, makes the model's input.
struct Layer {
  std::string class_name;
  std::string config_json = "{}";
  Shape input_shape;

  // The functional API: the layer called on a tensor (merge layers: on a
  // list of them), a new layer of the graph each call (axon shares no
  // weights between calls). A layer without a name takes Keras' next one
  // ("dense", "dense_1", ...: numbered for the process, as Keras does until
  // backend::clear_session()). UsageError naming the layer when it does not
  // fit its inputs (shapes, number of inputs, settings).
  KerasTensor operator()(const KerasTensor& input) const;
  KerasTensor operator()(const std::vector<KerasTensor>& inputs) const;
};

namespace backend {
// Restarts Keras' default layer names ("dense", "dense_1", ...) of the
// functional API.
void clear_session();
}  // namespace backend

namespace layers {
using Size2 = std::pair<int, int>;
// Keras' signatures, in its argument order as far as the guide uses them.
// activation: any name Keras and axon know ("relu", "softmax", ...; "" or
// "linear": none).
Layer Conv2D(int filters, Size2 kernel_size, const std::string& activation = {}, const Shape& input_shape = {},
             const std::string& padding = "valid", Size2 strides = {1, 1});
Layer MaxPooling2D(Size2 pool_size = {2, 2}, std::optional<Size2> strides = std::nullopt,
                   const std::string& padding = "valid");
Layer AveragePooling2D(Size2 pool_size = {2, 2}, std::optional<Size2> strides = std::nullopt,
                       const std::string& padding = "valid");
Layer Flatten(const Shape& input_shape = {});
Layer Dense(int units, const std::string& activation = {}, const Shape& input_shape = {});
Layer Dropout(double rate);
Layer BatchNormalization();
Layer ReLU();
Layer GlobalAveragePooling2D();
Layer Rescaling(double scale, double offset = 0.0, const Shape& input_shape = {});
// Merge layers, called on a list of tensors: Add()({x, y}). Add, Multiply,
// Average and Maximum take 2 or more inputs, Subtract two, whose shapes
// Keras broadcasts together (aligned at the last axis, sizes equal or 1);
// Concatenate joins along `axis` (-1: channels), the other sizes equal.
Layer Add();
Layer Subtract();
Layer Multiply();
Layer Average();
Layer Maximum();
Layer Concatenate(int axis = -1);
// Any layer class axon reads, from its Keras config (JSON text), e.g.
// from_config("RandomFlip", R"({"mode": "horizontal"})").
Layer from_config(const std::string& class_name, const std::string& config_json, const Shape& input_shape = {});
}  // namespace layers

namespace optimizers {
namespace schedules {
// keras.optimizers.schedules: a learning rate that follows the optimizer's
// step count (its iterations, 0 for the first update), given to an
// optimizer in place of a number. The settings are Keras' (nn/lr_schedule.hpp),
// checked when made (UsageError naming the schedule and the setting):
//   schedules::CosineDecay({.initial_learning_rate = 0.1, .decay_steps = 1000})
class LearningRateSchedule {
 public:
  explicit LearningRateSchedule(std::shared_ptr<const nn::LearningRateSchedule> schedule);
  // The rate of update number `step` (0-based), as Keras' schedule(step).
  double operator()(int64_t step) const;
  const std::shared_ptr<const nn::LearningRateSchedule>& get() const { return schedule_; }

 private:
  std::shared_ptr<const nn::LearningRateSchedule> schedule_;
};
LearningRateSchedule ExponentialDecay(const nn::ExponentialDecay& settings);
LearningRateSchedule PiecewiseConstantDecay(const nn::PiecewiseConstantDecay& settings);
LearningRateSchedule PolynomialDecay(const nn::PolynomialDecay& settings);
LearningRateSchedule InverseTimeDecay(const nn::InverseTimeDecay& settings);
LearningRateSchedule CosineDecay(const nn::CosineDecay& settings);
LearningRateSchedule CosineDecayRestarts(const nn::CosineDecayRestarts& settings);
}  // namespace schedules

// An optimizer's learning rate: a number, or a schedule.
struct LearningRate {
  // Implicit on purpose: a number or a schedule is the argument, as in Keras.
  LearningRate(double rate) : value(rate) {}                                                  // NOLINT
  LearningRate(const schedules::LearningRateSchedule& s) : value(s(0)), schedule(s.get()) {}  // NOLINT
  double value;
  std::shared_ptr<const nn::LearningRateSchedule> schedule;  // none: the rate stays
};

// An optimizer as compile() takes it: axon::nn::OptimizerOptions (which
// convert to it) and the schedule that drives its learning rate, if any.
struct Optimizer {
  Optimizer(const nn::OptimizerOptions& o) : options(o) {}  // NOLINT: implicit, as compile() took them before
  Optimizer(const nn::OptimizerOptions& o, const LearningRate& learning_rate);
  nn::OptimizerOptions options;
  std::shared_ptr<const nn::LearningRateSchedule> schedule;
};

// The optimizers of axon::nn::OptimizerOptions with Keras' defaults; the
// learning rate a number or a schedule:
//   optimizers::SGD(schedules::CosineDecay({.initial_learning_rate = 0.1, .decay_steps = 1000}), 0.9)
Optimizer Adam(const LearningRate& learning_rate = 0.001);
Optimizer SGD(const LearningRate& learning_rate = 0.01, double momentum = 0.0, bool nesterov = false);
Optimizer RMSprop(const LearningRate& learning_rate = 0.001);
Optimizer AdamW(const LearningRate& learning_rate = 0.001, double weight_decay = 0.004);
Optimizer Adagrad(const LearningRate& learning_rate = 0.001);
Optimizer Nadam(const LearningRate& learning_rate = 0.001);
}  // namespace optimizers

namespace losses {
// Keras' losses (axon::nn::LossOptions) with Keras' defaults: from_logits
// false, as in Keras (a model ending in a linear Dense passes true). Targets
// come from the integer labels as docs/training.md "Losses" says (one-hot
// for the categorical and regression losses, the label for binary).
nn::LossOptions SparseCategoricalCrossentropy(bool from_logits = false);
nn::LossOptions CategoricalCrossentropy(bool from_logits = false, double label_smoothing = 0.0);
nn::LossOptions BinaryCrossentropy(bool from_logits = false, double label_smoothing = 0.0);
nn::LossOptions MeanSquaredError();
nn::LossOptions MeanAbsoluteError();
nn::LossOptions Huber(double delta = 1.0);
}  // namespace losses

namespace metrics {
// A metric as compile() takes it: Keras' name ("accuracy", "mse", "mae",
// "top_k_categorical_accuracy", "sparse_top_k_categorical_accuracy", and
// their aliases; logged under the name given) or one of the objects below.
// Accuracy is always reported; its names select it.
struct Metric {
  Metric(const char* name) : Metric(std::string(name)) {}  // NOLINT: implicit, as compile() takes names
  Metric(const std::string& name);                           // NOLINT: implicit
  Metric(const nn::MetricOptions& o) : options(o) {}         // NOLINT: implicit
  std::optional<nn::MetricOptions> options;                  // empty: accuracy
};
// keras.metrics classes, with Keras' defaults (k = 5; the name is the log key).
Metric MeanSquaredError(const std::string& name = "mean_squared_error");
Metric MeanAbsoluteError(const std::string& name = "mean_absolute_error");
Metric TopKCategoricalAccuracy(int k = 5, const std::string& name = "top_k_categorical_accuracy");
Metric SparseTopKCategoricalAccuracy(int k = 5, const std::string& name = "sparse_top_k_categorical_accuracy");
}  // namespace metrics

// Images as Keras holds them, [N, H, W] or [N, H, W, C]: uint8 (0..255,
// divided by 255 on the device as axon does for every uint8 image) or
// float32 (given to the model as they are).
class Images {
 public:
  Images() = default;
  static Images from_uint8(const Shape& shape, std::vector<uint8_t> values);
  static Images from_float(const Shape& shape, const std::vector<float>& values);
  explicit Images(data::ImageSet set) : set_(std::move(set)) {}
  int64_t size() const { return set_.count; }
  Shape shape() const { return {set_.count, set_.rows, set_.cols, set_.channels}; }
  // x[begin:end], as NumPy slices.
  Images slice(int64_t begin, int64_t end) const;
  const data::ImageSet& set() const { return set_; }

 private:
  data::ImageSet set_;  // its labels are unused
};
using Labels = std::vector<int32_t>;
// y[begin:end].
Labels slice(const Labels& y, int64_t begin, int64_t end);

namespace datasets {
// (x_train, y_train), (x_test, y_test), as keras.datasets returns them:
//   auto [train, test] = keras::datasets::mnist::load_data();
//   auto& [x_train, y_train] = train;
struct Split {
  Images x;
  Labels y;
};
using Data = std::pair<Split, Split>;
// `path`: a folder of IDX files (train-images-idx3-ubyte[.gz], ...) or a
// .npz in Keras' layout (x_train, y_train, x_test, y_test), read by axon's
// data loaders (every header checked; a missing file names the package).
namespace mnist {
// Default: Keras' cache, ~/.keras/datasets/mnist.npz.
Data load_data(const std::filesystem::path& path = {});
}  // namespace mnist
namespace fashion_mnist {
// Default: /usr/share/datasets/fashion-mnist (Debian's
// dataset-fashion-mnist, axon-train's default data).
Data load_data(const std::filesystem::path& path = {});
}  // namespace fashion_mnist
}  // namespace datasets

namespace callbacks {
// A callback handed to fit: made for the model when fit starts (axon's
// callbacks need the model they watch).
struct Callback {
  std::function<std::unique_ptr<nn::Callback>(nn::Model&, int64_t batch_size)> make;
  bool progress_bar = false;  // ProgbarLogger's place: fit makes it from FitOptions::verbose
};
// Keras' CSVLogger (columns as axon-train --metrics-csv writes them).
Callback CSVLogger(const std::filesystem::path& file);
// Event files TensorBoard reads: epoch scalars, and batch ones every
// `update_freq` steps (0: epochs only).
Callback TensorBoard(const std::filesystem::path& log_dir, int64_t update_freq = 0);
Callback TerminateOnNaN();
// Keras' EarlyStopping and ReduceLROnPlateau, with Keras' arguments and
// defaults ({.monitor = "val_loss", .patience = 2, ...}). verbose 1: the
// chief says when it stops or lowers the rate; 0: silent.
using EarlyStoppingOptions = train::EarlyStoppingOptions;
Callback EarlyStopping(const EarlyStoppingOptions& options = {}, int verbose = 1);
using ReduceLROnPlateauOptions = train::ReduceLROnPlateauOptions;
Callback ReduceLROnPlateau(const ReduceLROnPlateauOptions& options = {}, int verbose = 1);
// Saves the weights (.safetensors, .keras, or axon's format) after every
// epoch, or when `monitor` improved with save_best_only.
Callback ModelCheckpoint(const std::filesystem::path& file, const std::string& monitor = "val_loss",
                         bool save_best_only = false);
// Keras' ProgbarLogger: the progress output fit prints (FitOptions::verbose
// chooses its form) at this place in the list; without one it comes first.
Callback ProgbarLogger();
// Your own nn::Callback, which must outlive fit.
Callback Custom(nn::Callback& callback);
// Your own callback that puts a saved training state back when fit starts,
// as BackupAndRestore does, passed with Custom (axon-train's --checkpoint-dir
// --resume is one). fit calls restore() on every worker with the states of
// the callbacks that keep one (EarlyStopping, ReduceLROnPlateau, a
// best-model checkpoint), in the list's order, after making them and before
// training, and goes on from the position it returns: that epoch and step,
// the finished epochs' rows written first by a CSVLogger.
class StateRestorer : public nn::Callback {
 public:
  virtual train::TrainingPosition restore(const std::vector<train::CheckpointedState*>& states) = 0;
  // When fit stopped on FitOptions::stop_requested, before it returns: the
  // states handed to restore() are still there to be saved.
  virtual void on_stopped(const nn::History& /*history*/) {}
};
// Keras' BackupAndRestore: fit writes the whole training state (weights,
// optimizer, the epoch's position, history, the other callbacks' states)
// into `backup_dir` at every epoch's end (and every `save_freq` steps, 0:
// epochs only), as axon-train --checkpoint-dir does; a fit that finds a
// backup there goes on from it, bit for bit as if never stopped; a fit that
// ends (not one that throws) removes the folder. The data, batch size, seed
// and learning rate must be the run's: another run's backup is a UsageError.
Callback BackupAndRestore(const std::filesystem::path& backup_dir, int64_t save_freq = 0);
}  // namespace callbacks

// fit's validation_data: arrays in memory, or a data set (any
// data::SampleSource: an image folder, IDX files, ...), which must outlive fit.
struct ValidationData {
  ValidationData(datasets::Split arrays) : arrays(std::move(arrays)) {}        // NOLINT: implicit, as in Keras
  ValidationData(const data::SampleSource& source) : source(&source) {}       // NOLINT: implicit
  std::optional<datasets::Split> arrays;
  const data::SampleSource* source = nullptr;
};

struct FitOptions {
  int epochs = 1;
  int64_t batch_size = 32;
  std::optional<ValidationData> validation_data;
  bool shuffle = true;
  // 1: Keras' progress bar, redrawn in place on a terminal (as
  // AXON_PROGRESS_BAR says, docs/training.md), else one line per epoch;
  // 2: one line per epoch; 0: silent. Printed by the chief alone.
  int verbose = 1;
  std::vector<callbacks::Callback> callbacks;
  int64_t steps_per_epoch = 0;  // 0: the whole training set
  uint64_t seed = 0;            // the shuffle order
  // Keras' initial_epoch: the epochs already done (their shuffle orders
  // skipped); fit trains epochs initial_epoch + 1 .. epochs.
  int initial_epoch = 0;
  // Batches prepared on a background thread while a step runs (tf.data's
  // prefetch); false: each when it is needed.
  bool prefetch = true;
  // Polled before every step (a signal handler's flag, say): when it returns
  // true, fit returns at once with History::logs.stopped. Under
  // MultiWorkerMirroredStrategy every worker passes one; they agree every
  // nn::kStopPollSteps steps.
  std::function<bool()> stop_requested;
};

// history.history["loss"], ["accuracy"], each compiled metric's name,
// ["val_loss"], ["val_accuracy"], ["val_" + name], ["seconds"]: one value per
// epoch.
struct History {
  std::map<std::string, std::vector<double>> history;
  nn::History logs;  // everything fit measured (per-epoch times, replicas, ...)
};

struct Evaluation {
  double loss = 0, accuracy = 0;
  nn::NamedValues metrics;  // the compiled metrics besides accuracy, by name, in compile's order
};

class Model;
namespace models {
Model load_model(const std::filesystem::path& file);
Model model_from_json(const std::string& json);
}

// keras.Model: what Sequential and a functional Model share. Its weights are
// created when it is first used (compile, summary, fit, ...) on the
// distribution strategy (axon::distribute) or device scope that was current
// when the model was constructed; the strategy must outlive the model. Every
// model is a Keras model JSON read by axon's Keras reader, one path for all.
class Model {
 public:
  // The functional API, keras.Model(inputs, outputs): the layers between
  // them, as Keras' functional JSON. UsageError when `outputs` is not
  // computed from `inputs` alone (naming the layer that reads another input)
  // or the graph is not one axon trains (naming the layer).
  Model(const KerasTensor& inputs, const KerasTensor& outputs, const std::string& name = "functional");
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  // metrics: names or metrics:: objects besides "accuracy" (always on);
  // UsageError for a metric axon lacks, naming those it has.
  // The optimizer's schedule, if any, sets the learning rate before every
  // update from the optimizer's step count.
  void compile(const optimizers::Optimizer& optimizer = optimizers::Adam(),
               const nn::LossOptions& loss = losses::SparseCategoricalCrossentropy(/*from_logits=*/true),
               const std::vector<metrics::Metric>& metrics = {"accuracy"});
  // model.fit(dataset, validation_data=...): `x` holds the images and their
  // labels (any data::SampleSource: an image folder, IDX files, NumPy arrays
  // as axon's loaders read them).
  History fit(const data::SampleSource& x, const FitOptions& options = {});
  // model.fit(x, y, ...): the same over arrays in memory.
  History fit(const Images& x, const Labels& y, const FitOptions& options = {});
  // model.evaluate(dataset): loss and metrics over a data set's images and labels.
  Evaluation evaluate(const data::SampleSource& x, int64_t batch_size = 32);
  // model.evaluate(x, y): the same over arrays in memory.
  Evaluation evaluate(const Images& x, const Labels& y, int64_t batch_size = 32);
  // Logits [N, classes] on the model's device.
  Tensor predict(const Images& x, int64_t batch_size = 32);
  // Prints Keras' table to stdout; returns it too.
  std::string summary();
  void save_weights(const std::filesystem::path& file);
  void load_weights(const std::filesystem::path& file);
  // model.save("m.keras"): Keras 3's .keras file, as axon-train --save
  // writes it: the model, its compile_config (optimizer, schedule, loss) and
  // the weights with the optimizer's state; Keras' load_model opens it.
  // UsageError for another extension or an uncompiled model.
  void save(const std::filesystem::path& file);
  // The model as Keras' model.to_json() writes it (a Sequential when every
  // layer reads the one before it, else a Functional).
  std::string to_json();
  int64_t count_params();

  // The core model (built), for what this layer does not wrap.
  nn::Model& model();

  struct State;

 protected:
  explicit Model(std::unique_ptr<State> state);
  friend Model models::load_model(const std::filesystem::path& file);
  friend Model models::model_from_json(const std::string& json);
  std::unique_ptr<State> s_;
};

// keras.Sequential: the layers in a row, the first one's input_shape (or
// fit's images) the model's input. A bad layer config is reported when the
// model is first used, naming the layer.
class Sequential : public Model {
 public:
  explicit Sequential(std::vector<Layer> layers = {}, const std::string& name = "sequential");
  void add(Layer layer);
};

namespace models {
// keras.models.load_model("m.keras"): the model of a .keras file (Keras'
// own or model.save()'s), built on the current strategy or device scope,
// with its weights and, when the file was saved compiled, compiled as it was
// (optimizer, learning rate or schedule, loss) with the optimizer's saved
// state, as axon-train --model m.keras takes it. UsageError naming the file
// and what axon cannot follow.
Model load_model(const std::filesystem::path& file);
// keras.models.model_from_json(model.to_json()): the model a Keras model
// JSON describes (a Sequential or a Functional, with its input shape), not
// yet compiled, its weights made when it is first used on the current
// strategy or device scope from set_random_seed's seed. UsageError naming
// what axon cannot follow.
Model model_from_json(const std::string& json);
}  // namespace models

namespace utils {
// The seed of every model's initial weights built after it (Keras'
// set_random_seed); 0 until set.
void set_random_seed(uint64_t seed);
}  // namespace utils

}  // namespace axon::keras
