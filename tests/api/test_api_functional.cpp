// axon::keras beyond Sequential: the functional API (Input, layers called on
// KerasTensors, merge layers, keras::Model), learning-rate schedules given
// to optimizers, BackupAndRestore, and model.save / models::load_model of
// .keras files. Models and data are small and synthetic: no data set needed.
#include "api_fixture.hpp"

#include <catch2/catch.hpp>

#include <axon/nn/keras_json.hpp>
#include <axon/train/weights.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <stdexcept>

using namespace axon;
using axon::test::temp_dir;
namespace layers = axon::keras::layers;
namespace schedules = axon::keras::optimizers::schedules;

namespace {

// n grey 8x8 images (48 by default) whose class (0, 1, 2) is the brightest third of the image.
struct Synthetic {
  keras::Images x;
  keras::Labels y;
};
Synthetic synthetic(int n = 48) {
  std::vector<uint8_t> pixels(static_cast<size_t>(n) * 64);
  keras::Labels y(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    y[static_cast<size_t>(i)] = i % 3;
    for (int p = 0; p < 64; ++p)
      pixels[static_cast<size_t>(i * 64 + p)] =
          static_cast<uint8_t>((p / 22 == i % 3 ? 200 : 30) + (i * 7 + p * 13) % 40);
  }
  return {keras::Images::from_uint8({n, 8, 8, 1}, pixels), y};
}

// A small residual network: conv, a residual block (conv + Add), a
// Concatenate of two branches, global pooling and the classifier.
keras::Model residual_model(const std::string& name = "residual") {
  keras::backend::clear_session();
  const keras::KerasTensor inputs = keras::Input({8, 8, 1});
  const keras::KerasTensor x = layers::Conv2D(4, {3, 3}, "relu", {}, "same")(inputs);
  const keras::KerasTensor y = layers::Conv2D(4, {3, 3}, "", {}, "same")(x);
  const keras::KerasTensor s = layers::ReLU()(layers::Add()({x, y}));
  const keras::KerasTensor c = layers::Concatenate()({s, x});
  const keras::KerasTensor outputs = layers::Dense(3)(layers::GlobalAveragePooling2D()(c));
  return keras::Model(inputs, outputs, name);
}

std::vector<float> parameter(keras::Model& model, const std::string& name) {
  for (nn::Parameter* p : model.model().parameters())
    if (p->name == name) return p->value.to_vector<float>();
  FAIL("no parameter " << name);
  return {};
}

// Throws at the end of step `step` (1-based) of epoch `epoch` (1-based): a run killed there.
class KillAt : public nn::Callback {
 public:
  KillAt(int epoch, int64_t step) : epoch_(epoch), step_(step) {}
  void on_epoch_begin(int epoch, int, int64_t) override { current_ = epoch; }
  void on_batch_end(int64_t step, const std::function<nn::MetricValues()>&) override {
    if (current_ == epoch_ && step + 1 == step_) throw std::runtime_error("killed");
  }

 private:
  int epoch_, current_ = 0;
  int64_t step_;
};

keras::optimizers::Optimizer sgd_on_cosine() {
  return keras::optimizers::SGD(
      schedules::CosineDecay({.initial_learning_rate = 0.1, .decay_steps = 20, .alpha = 0.1}), 0.9);
}

}  // namespace

TEST_CASE("the functional API: Input, layers called on tensors, merges, keras::Model", "[api][keras][functional]") {
  test::start_runtime();
  keras::backend::clear_session();
  const keras::KerasTensor inputs = keras::Input({8, 8});  // Keras' grey (8, 8): one channel
  CHECK(inputs.shape() == Shape{8, 8, 1});
  CHECK(inputs.name() == "input_layer");
  CHECK_THROWS_WITH(keras::Input({8}), "Input: the shape must be [H, W] or [H, W, C], got [8]");
  const keras::KerasTensor x = layers::Conv2D(4, {3, 3}, "relu", {}, "same")(inputs);
  const keras::KerasTensor y = layers::Conv2D(4, {3, 3}, "", {}, "same")(x);
  CHECK(x.name() == "conv2d");
  CHECK(y.name() == "conv2d_1");
  CHECK(y.shape() == Shape{8, 8, 4});
  for (const keras::Layer& merge : {layers::Add(), layers::Subtract(), layers::Multiply(), layers::Average(),
                                    layers::Maximum()})
    CHECK(merge({x, y}).shape() == Shape{8, 8, 4});
  CHECK(layers::Concatenate()({x, y, x}).shape() == Shape{8, 8, 12});
  CHECK(layers::MaxPooling2D({2, 2})(y).shape() == Shape{4, 4, 4});
  CHECK(layers::Flatten()(y).shape() == Shape{256});

  keras::Model model = residual_model();
  // conv2d 3*3*1*4 + 4, conv2d_1 3*3*4*4 + 4, dense 8*3 + 3.
  CHECK(model.count_params() == 40 + 148 + 27);
  CHECK_THAT(model.summary(), Catch::Contains("add (Add)") && Catch::Contains("concatenate (Concatenate)"));
  // to_json is Keras' functional JSON, which the core's reader reads back.
  const std::string json = model.to_json();
  CHECK_THAT(json, Catch::Contains("\"class_name\":\"Functional\"") && Catch::Contains("inbound_nodes"));
  const nn::KerasModel read = nn::model_from_keras_json(json, "to_json");
  CHECK(read.input_shape == Shape{8, 8, 1});
  CHECK(read.output_shape == Shape{3});
  CHECK(read.weights.size() == 6);
  CHECK(read.model->num_nodes() == model.model().num_nodes());
}

TEST_CASE("a functional model computes its graph: two Dense branches added", "[api][keras][functional]") {
  test::start_runtime();
  keras::backend::clear_session();
  const keras::KerasTensor inputs = keras::Input({1, 1, 2});
  const keras::KerasTensor flat = layers::Flatten()(inputs);
  const keras::KerasTensor a = layers::Dense(2)(flat);
  const keras::KerasTensor b = layers::Dense(2)(flat);
  keras::Model model(inputs, layers::Add()({a, b}));
  const std::vector<float> xs = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};
  const std::vector<float> logits = model.predict(keras::Images::from_float({3, 1, 1, 2}, xs)).to_vector<float>();
  // Host arithmetic: x (Wa + Wb) + ba + bb, kernels [in, out] as Keras lays them out.
  const std::vector<float> wa = parameter(model, "dense/kernel"), wb = parameter(model, "dense_1/kernel");
  const std::vector<float> ba = parameter(model, "dense/bias"), bb = parameter(model, "dense_1/bias");
  REQUIRE(logits.size() == 6);
  for (size_t n = 0; n < 3; ++n)
    for (size_t j = 0; j < 2; ++j) {
      double want = ba[j] + bb[j];
      for (size_t i = 0; i < 2; ++i) want += xs[n * 2 + i] * (double{wa[i * 2 + j]} + wb[i * 2 + j]);
      CHECK(logits[n * 2 + j] == Approx(want).epsilon(1e-5).margin(1e-6));
    }
}

TEST_CASE("bad functional graphs throw one clear message naming the layer", "[api][keras][functional][errors]") {
  test::start_runtime();
  keras::backend::clear_session();
  const keras::KerasTensor inputs = keras::Input({8, 8, 1});
  const keras::KerasTensor four = layers::Conv2D(4, {3, 3}, "", {}, "same")(inputs);
  const keras::KerasTensor eight = layers::Conv2D(8, {3, 3}, "", {}, "same")(inputs);
  // A merge of mismatched shapes fails when it is called, naming it.
  CHECK_THROWS_WITH(layers::Add()({four, eight}),
                    Catch::Contains("(Add 'add')") && Catch::Contains("differ in shape: [8,8,4] and [8,8,8]"));
  CHECK_THROWS_WITH(layers::Subtract()({four, four, four}), Catch::Contains("(Subtract 'subtract')"));
  CHECK_THROWS_WITH(layers::Concatenate()({four, layers::MaxPooling2D()(eight)}),
                    Catch::Contains("(Concatenate 'concatenate')"));
  CHECK_THROWS_WITH(layers::Conv2D(4, {9, 9})(inputs), Catch::Contains("(Conv2D 'conv2d_2')"));
  CHECK_THROWS_WITH(layers::Dense(3, "", {8, 8, 1})(inputs), Catch::Contains("input_shape is for a Sequential"));
  // An input that does not reach the output.
  const keras::KerasTensor other = keras::Input({8, 8, 1});
  const keras::KerasTensor from_other = layers::Dense(3)(layers::Flatten()(other));
  CHECK_THROWS_WITH(keras::Model(inputs, from_other, "m"),
                    "keras::Model 'm': the input 'input_layer' does not reach the output 'dense', which is computed "
                    "from the input 'input_layer_1' (read by layer 'flatten')");
  // Both inputs feed the output: one is not the model's.
  const keras::KerasTensor both = layers::Add()({four, layers::Conv2D(4, {3, 3}, "", {}, "same")(other)});
  CHECK_THROWS_WITH(keras::Model(inputs, both, "m"),
                    Catch::Contains("layer 'conv2d_3' reads the input 'input_layer_1', which is not the model's "
                                    "input 'input_layer'"));
  // The core's reader names the layer whose output is not [classes].
  CHECK_THROWS_WITH(keras::Model(inputs, four, "m"),
                    Catch::Contains("keras::Model m") && Catch::Contains("(Conv2D 'conv2d')") &&
                        Catch::Contains("is the model's output"));
  CHECK_THROWS_WITH(keras::Model(inputs, inputs, "m"), Catch::Contains("no layer between them"));
}

TEST_CASE("learning-rate schedules given to an optimizer drive fit's rate", "[api][keras][schedules]") {
  test::start_runtime();
  // Keras' CosineDecay: alpha + (1 - alpha) (1 + cos(pi step / decay_steps)) / 2, times the rate.
  const schedules::LearningRateSchedule cosine =
      schedules::CosineDecay({.initial_learning_rate = 0.1, .decay_steps = 20, .alpha = 0.1});
  for (int64_t step : {0, 5, 13, 20, 40}) {
    const double t = std::min<double>(static_cast<double>(step), 20) / 20;
    CHECK(cosine(step) == Approx(0.1 * (0.1 + 0.9 * 0.5 * (1 + std::cos(std::numbers::pi * t)))).epsilon(1e-6));
  }
  const schedules::LearningRateSchedule exponential =
      schedules::ExponentialDecay({.initial_learning_rate = 0.05, .decay_steps = 4, .decay_rate = 0.5});
  CHECK(exponential(6) == Approx(0.05 * std::pow(0.5, 6.0 / 4)).epsilon(1e-6));
  CHECK(schedules::PiecewiseConstantDecay({.boundaries = {3}, .values = {0.1, 0.01}})(4) == Approx(0.01));
  CHECK(schedules::PolynomialDecay({.initial_learning_rate = 0.1, .decay_steps = 10, .end_learning_rate = 0.01,
                                    .power = 2})(4) == Approx(0.09 * 0.36 + 0.01).epsilon(1e-6));
  CHECK(schedules::InverseTimeDecay({.initial_learning_rate = 0.1, .decay_steps = 5, .decay_rate = 0.5})(10) ==
        Approx(0.1 / 2).epsilon(1e-6));
  CHECK(schedules::CosineDecayRestarts({.initial_learning_rate = 0.1, .first_decay_steps = 8})(2) ==
        Approx(0.1 * 0.5 * (1 + std::cos(std::numbers::pi * 2 / 8))).epsilon(1e-6));
  // Keras 3's warmup: linear from the initial rate to warmup_target, then the decay from there.
  const schedules::LearningRateSchedule warm = schedules::CosineDecay(
      {.initial_learning_rate = 0, .decay_steps = 10, .warmup_target = 0.2, .warmup_steps = 4});
  CHECK(warm(1) == Approx(0.05).epsilon(1e-6));
  CHECK(warm(4) == Approx(0.2).epsilon(1e-6));
  CHECK(warm(9) == Approx(0.2 * 0.5 * (1 + std::cos(std::numbers::pi * 5 / 10))).epsilon(1e-6));
  // Every optimizer takes a schedule in place of its rate, starting at the schedule's first rate.
  for (const keras::optimizers::Optimizer& o :
       {keras::optimizers::Adam(cosine), keras::optimizers::SGD(cosine), keras::optimizers::RMSprop(cosine),
        keras::optimizers::AdamW(cosine), keras::optimizers::Adagrad(cosine), keras::optimizers::Nadam(cosine)}) {
    CHECK(o.schedule == cosine.get());
    CHECK(o.options.learning_rate == static_cast<float>(cosine(0)));
  }
  CHECK_FALSE(keras::optimizers::Adam(0.002).schedule);
  CHECK_THROWS_AS(schedules::CosineDecay({.initial_learning_rate = 0.1, .decay_steps = 0}), UsageError);

  keras::Model model = residual_model();
  model.compile(keras::optimizers::SGD(exponential, 0.9), keras::losses::SparseCategoricalCrossentropy(true));
  const Synthetic d = synthetic();
  // 48 images in batches of 16: 3 steps an epoch; an epoch's rate is its last step's.
  const keras::History h = model.fit(d.x, d.y, {.epochs = 2, .batch_size = 16, .verbose = 0});
  REQUIRE(h.logs.epochs.size() == 2);
  CHECK(h.logs.epochs[0].learning_rate == Approx(exponential(2)).epsilon(1e-6));
  CHECK(h.logs.epochs[1].learning_rate == Approx(exponential(5)).epsilon(1e-6));
  // Keras refuses to set a scheduled rate: so does fit.
  CHECK_THROWS_WITH(model.fit(d.x, d.y, {.verbose = 0, .callbacks = {keras::callbacks::ReduceLROnPlateau()}}),
                    Catch::Contains("ReduceLROnPlateau cannot set the learning rate"));
}

TEST_CASE("BackupAndRestore: a fit killed and run again ends with the uninterrupted fit's weights",
          "[api][keras][backup]") {
  test::start_runtime();
  const Synthetic d = synthetic();
  const auto dir = temp_dir("backup");
  const keras::FitOptions base{.epochs = 4, .batch_size = 16, .verbose = 0, .seed = 11};
  auto make = [](uint64_t init_seed = 21) {
    keras::utils::set_random_seed(init_seed);
    keras::Model m = residual_model();
    m.compile(sgd_on_cosine(), keras::losses::SparseCategoricalCrossentropy(true));
    return m;
  };
  keras::Model whole = make();
  keras::FitOptions plain = base;
  plain.callbacks = {keras::callbacks::EarlyStopping({.monitor = "loss", .patience = 10})};
  const keras::History full = whole.fit(d.x, d.y, plain);
  REQUIRE(full.history.at("loss").size() == 4);
  const std::string want = train::serialize_weights(whole.model());

  // Killed in epoch 3 (step 2 of 3): epoch ends only (the backup of epoch 2), or every step.
  for (int64_t save_freq : {0, 1}) {
    INFO("save_freq " << save_freq);
    const auto backup = dir / (save_freq == 0 ? "epochs" : "steps");
    KillAt kill(3, 2);
    keras::FitOptions killed = base;
    killed.callbacks = {keras::callbacks::EarlyStopping({.monitor = "loss", .patience = 10}),
                        keras::callbacks::Custom(kill), keras::callbacks::BackupAndRestore(backup, save_freq)};
    keras::Model first = make();
    CHECK_THROWS_WITH(first.fit(d.x, d.y, killed), "killed");
    CHECK(std::filesystem::exists(backup));

    keras::Model again = make(22);  // another initial state, which the backup replaces
    keras::FitOptions resumed = base;
    resumed.callbacks = {keras::callbacks::EarlyStopping({.monitor = "loss", .patience = 10}),
                         keras::callbacks::BackupAndRestore(backup, save_freq)};
    const keras::History rest = again.fit(d.x, d.y, resumed);
    // Epochs 3 and 4 ran, with the uninterrupted fit's figures and weights.
    REQUIRE(rest.history.at("loss").size() == 2);
    CHECK(rest.logs.epochs[0].epoch == 3);
    CHECK(rest.history.at("loss")[1] == full.history.at("loss")[3]);
    CHECK(train::serialize_weights(again.model()) == want);
    CHECK_FALSE(std::filesystem::exists(backup));  // removed when fit ended
  }

  // Another run's backup (another seed) is refused, not resumed.
  KillAt kill(2, 1);
  keras::FitOptions killed = base;
  killed.callbacks = {keras::callbacks::Custom(kill), keras::callbacks::BackupAndRestore(dir / "c", 1)};
  keras::Model first = make();
  CHECK_THROWS(first.fit(d.x, d.y, killed));
  keras::FitOptions other_seed = base;
  other_seed.seed = 12;
  other_seed.callbacks = {keras::callbacks::BackupAndRestore(dir / "c")};
  keras::Model second = make();
  CHECK_THROWS_WITH(second.fit(d.x, d.y, other_seed), Catch::Contains("BackupAndRestore(") && Catch::Contains("seed"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("model.save writes a .keras file that models::load_model reads back, compiled", "[api][keras][save]") {
  test::start_runtime();
  const Synthetic d = synthetic();
  const auto dir = temp_dir("save");
  keras::utils::set_random_seed(4);
  keras::Model model = residual_model("saved");
  model.compile(sgd_on_cosine(), keras::losses::SparseCategoricalCrossentropy(true));
  model.fit(d.x, d.y, {.epochs = 1, .batch_size = 16, .verbose = 0});
  model.save(dir / "m.keras");
  keras::Model loaded = keras::models::load_model(dir / "m.keras");
  CHECK(loaded.count_params() == model.count_params());
  CHECK(loaded.model().name() == "saved");
  // The same weights, optimizer step and state: the same figures now and after one more epoch.
  const keras::Evaluation before = model.evaluate(d.x, d.y, 16), after = loaded.evaluate(d.x, d.y, 16);
  CHECK(after.loss == before.loss);
  CHECK(after.accuracy == before.accuracy);
  CHECK(loaded.predict(d.x).to_vector<float>() == model.predict(d.x).to_vector<float>());
  CHECK(loaded.model().optimizer().iterations() == 3);
  CHECK(loaded.model().optimizer().kind() == nn::OptimizerKind::sgd);
  const keras::History h1 = model.fit(d.x, d.y, {.epochs = 1, .batch_size = 16, .verbose = 0, .seed = 5});
  const keras::History h2 = loaded.fit(d.x, d.y, {.epochs = 1, .batch_size = 16, .verbose = 0, .seed = 5});
  CHECK(h2.logs.epochs.at(0).learning_rate == h1.logs.epochs.at(0).learning_rate);  // the schedule came back
  CHECK(train::serialize_weights(loaded.model()) == train::serialize_weights(model.model()));

  // A Sequential saves and loads the same way.
  keras::Sequential seq({layers::Flatten({8, 8, 1}), layers::Dense(3)});
  CHECK_THROWS_WITH(seq.save(dir / "s.keras"), "save: call compile() first");
  seq.compile(keras::optimizers::Adam(0.01), keras::losses::SparseCategoricalCrossentropy(true));
  seq.save(dir / "s.keras");
  keras::Model seq_loaded = keras::models::load_model(dir / "s.keras");
  CHECK(seq_loaded.predict(d.x).to_vector<float>() == seq.predict(d.x).to_vector<float>());
  CHECK(seq_loaded.model().optimizer().kind() == nn::OptimizerKind::adam);
  CHECK(seq_loaded.model().optimizer().learning_rate() == 0.01f);

  CHECK_THROWS_WITH(model.save(dir / "m.h5"), Catch::Contains("is not a .keras file"));
  CHECK_THROWS_AS(keras::models::load_model(dir / "missing.keras"), UsageError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a functional model's to_json loads in Keras 3", "[api][keras][functional][keras3]") {
  const char* python = "/tmp/tfenv/bin/python";
  if (!std::filesystem::exists(python)) {
    WARN("no " << python << " (TensorFlow and Keras): skipped");
    return;
  }
  test::start_runtime();
  keras::Model model = residual_model();
  const auto dir = temp_dir("keras3");
  std::ofstream(dir / "model.json") << model.to_json();
  const std::string command = std::string(python) +
                              " -c \"import sys, keras; m = keras.models.model_from_json(open(sys.argv[1]).read()); "
                              "print(m.count_params(), [l.__class__.__name__ for l in m.layers].count('Add'))\" " +
                              (dir / "model.json").string() + " 2>/dev/null";
  FILE* out = ::popen(command.c_str(), "r");
  REQUIRE(out != nullptr);
  char line[256] = {};
  const bool read = std::fgets(line, sizeof line, out) != nullptr;
  ::pclose(out);
  REQUIRE(read);
  CHECK(std::string(line) == std::to_string(model.count_params()) + " 1\n");
  std::filesystem::remove_all(dir);
}
