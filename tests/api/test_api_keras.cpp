// axon::keras: models built from Keras configs through the layer registry,
// compile/fit/evaluate/predict, weights files, callbacks, strategies, and the
// errors of bad use. Training runs take a few hundred Fashion-MNIST images;
// without the data set those cases are skipped (exit 77 is not needed: they
// SUCCEED with a warning, as the other data tests here do).
#include "api_fixture.hpp"

#include <catch2/catch.hpp>

#include <axon/io/zip_writer.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace axon;
using axon::test::temp_dir;
namespace layers = axon::keras::layers;

namespace {

keras::Sequential guide_cnn() {
  return keras::Sequential({layers::Conv2D(32, {3, 3}, "relu", {28, 28, 1}), layers::MaxPooling2D({2, 2}),
                            layers::Conv2D(64, {3, 3}, "relu"), layers::MaxPooling2D({2, 2}),
                            layers::Conv2D(64, {3, 3}, "relu"), layers::Flatten(), layers::Dense(64, "relu"),
                            layers::Dense(10)});
}

bool have_data() { return std::filesystem::exists(data::kDefaultDataDir); }

// A NumPy .npy of uint8 values (format 1.0: magic, header length, a header
// padded with spaces to a multiple of 64 bytes, then the data).
std::string npy_uint8(const Shape& shape, const std::vector<uint8_t>& values) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(values.data()), values.size());
  return out;
}

}  // namespace

TEST_CASE("mnist::load_data reads Keras' mnist.npz layout", "[api][keras][data]") {
  test::start_runtime();
  // Three 2x2 training images and two test images, as keras.datasets' mnist.npz holds them.
  const std::string x_train = npy_uint8({3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const std::string y_train = npy_uint8({3}, {7, 8, 9});
  const std::string x_test = npy_uint8({2, 2, 2}, {20, 21, 22, 23, 24, 25, 26, 27});
  const std::string y_test = npy_uint8({2}, {1, 2});
  const auto dir = temp_dir("npz");
  const auto file = dir / "mnist.npz";
  std::ofstream(file, std::ios::binary) << io::zip_stored(
      {{"x_train.npy", x_train}, {"y_train.npy", y_train}, {"x_test.npy", x_test}, {"y_test.npy", y_test}});
  auto [train, test] = keras::datasets::mnist::load_data(file);
  CHECK(train.x.shape() == Shape{3, 2, 2, 1});
  CHECK(train.y == keras::Labels{7, 8, 9});
  CHECK(test.x.shape() == Shape{2, 2, 2, 1});
  CHECK(test.y == keras::Labels{1, 2});
  CHECK(test.x.set().images == std::vector<uint8_t>{20, 21, 22, 23, 24, 25, 26, 27});
  CHECK(train.x.slice(1, 2).set().images == std::vector<uint8_t>{4, 5, 6, 7});
  CHECK_THROWS_AS(keras::datasets::mnist::load_data(dir / "missing.npz"), UsageError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the guide's CNN is built from Keras configs", "[api][keras]") {
  test::start_runtime();
  keras::Sequential model = guide_cnn();
  // 320 + 18496 + 36928 (convolutions) + 36928 + 650 (dense): Keras' summary of the same model.
  CHECK(model.count_params() == 93322);
  const std::string summary = model.summary();
  CHECK_THAT(summary, Catch::Contains("conv2d_2 (Conv2D)") && Catch::Contains("max_pooling2d_1 (MaxPooling2D)") &&
                          Catch::Contains("dense_1 (Dense)") && Catch::Contains("93,322"));
  const std::string json = model.to_json();
  CHECK_THAT(json, Catch::Contains("\"class_name\": \"Sequential\"") || Catch::Contains("\"class_name\":\"Sequential\""));
  CHECK(&model.model().device() == &Runtime::get().default_device());
  // Any registered layer from its config; Keras' (28, 28) input is one channel.
  keras::Sequential flat({layers::from_config("Flatten", "{}", {28, 28}), layers::Dense(10, "softmax")});
  CHECK(flat.count_params() == 7850);
}

TEST_CASE("every layer function makes a config the registry reads", "[api][keras]") {
  test::start_runtime();
  keras::Sequential model({layers::Rescaling(1.0 / 127.5, -1.0, {28, 28, 1}),
                           layers::Conv2D(8, {3, 3}, "", {}, "same", {2, 2}), layers::BatchNormalization(),
                           layers::ReLU(), layers::AveragePooling2D({2, 2}), layers::MaxPooling2D({3, 3}, {{1, 1}}),
                           layers::Dropout(0.25), layers::GlobalAveragePooling2D(), layers::Dense(10, "softmax")});
  // Conv 3*3*1*8 + 8, batch normalisation 4 * 8 (16 trainable), Dense 8*10 + 10.
  CHECK(model.count_params() == 80 + 32 + 90);
  const std::string summary = model.summary();
  for (const char* name : {"rescaling (Rescaling)", "conv2d (Conv2D)", "(None, 14, 14, 8)", "batch_normalization",
                           "re_lu (ReLU)", "average_pooling2d", "(None, 7, 7, 8)", "(None, 5, 5, 8)", "dropout",
                           "global_average_pooling2d", "dense (Dense)"})
    CHECK_THAT(summary, Catch::Contains(name));
}

TEST_CASE("bad models and bad use throw one clear message", "[api][keras][errors]") {
  test::start_runtime();
  keras::Sequential unknown({layers::from_config("LSTM", R"({"units": 4})", {28, 28, 1})});
  CHECK_THROWS_WITH(unknown.count_params(), Catch::Contains("LSTM") && Catch::Contains("supported: InputLayer"));
  keras::Sequential model = guide_cnn();
  CHECK_THROWS_WITH(model.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true), {"f1_score"}),
                    "compile: unknown metric \"f1_score\"; axon has accuracy, mse, mae, top_k_categorical_accuracy, "
                    "sparse_top_k_categorical_accuracy");
  CHECK_THROWS_WITH(keras::metrics::TopKCategoricalAccuracy(0), "top_k_categorical_accuracy: k must be at least 1, got 0");
  CHECK_THROWS_WITH(model.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(true),
                                  {"mse", keras::metrics::MeanSquaredError("mse")}),
                    "compile: the metric mse is compiled twice");
  const keras::Images x = keras::Images::from_uint8({2, 28, 28, 1}, std::vector<uint8_t>(2 * 784));
  CHECK_THROWS_WITH(model.fit(x, {0, 1}), "fit: call compile() first");
  CHECK_THROWS_WITH(model.compile(keras::optimizers::Adam(), keras::losses::BinaryCrossentropy(/*from_logits=*/true)),
                    Catch::Contains("binary_crossentropy does not fit the model's output of 10 units"));
  model.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true));
  CHECK_THROWS_WITH(model.fit(x, {0}), "fit: 2 images but 1 labels");
  CHECK_THROWS_WITH(layers::from_config("Dense", "{units: 3}"), Catch::Contains("the config is not a JSON object"));
  keras::Sequential no_shape({layers::Dense(3)});
  CHECK_THROWS_WITH(no_shape.summary(), "the model sequential has no input shape: give the first layer one");
}

TEST_CASE("fit, evaluate, predict and weights files on Fashion-MNIST", "[api][keras]") {
  if (!have_data()) {
    WARN("no " << data::kDefaultDataDir << ": skipped");
    return;
  }
  test::start_runtime();
  auto [train, test] = keras::datasets::fashion_mnist::load_data();
  CHECK(train.x.shape() == Shape{60000, 28, 28, 1});
  CHECK(test.y.size() == 10000);
  const keras::Images x = train.x.slice(0, 1024);
  const keras::Labels y = keras::slice(train.y, 0, 1024);
  const keras::Images vx = test.x.slice(0, 256);
  const keras::Labels vy = keras::slice(test.y, 0, 256);

  keras::utils::set_random_seed(3);
  keras::Sequential model({layers::Flatten({28, 28, 1}), layers::Dense(64, "relu"), layers::Dense(10)});
  model.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true), {"accuracy"});
  const auto dir = temp_dir("fit");
  const keras::History h = model.fit(
      x, y,
      {.epochs = 2, .batch_size = 64, .validation_data = keras::datasets::Split{vx, vy}, .verbose = 0,
       .callbacks = {keras::callbacks::CSVLogger(dir / "log.csv"), keras::callbacks::TerminateOnNaN(),
                     keras::callbacks::ModelCheckpoint(dir / "best.safetensors", "val_loss", true)}});
  REQUIRE(h.history.at("loss").size() == 2);
  CHECK(h.history.at("val_accuracy").size() == 2);
  CHECK(h.history.at("loss")[1] < h.history.at("loss")[0]);
  // Two epochs over 1024 images: well above chance (0.1).
  CHECK(h.history.at("val_accuracy")[1] > 0.5);
  const keras::Evaluation e = model.evaluate(vx, vy, 64);
  CHECK(e.accuracy == Approx(h.history.at("val_accuracy")[1]).margin(1e-9));
  CHECK(e.loss == Approx(h.history.at("val_loss")[1]).epsilon(1e-6));
  const Tensor logits = model.predict(vx, 64);
  CHECK(logits.shape() == Shape{256, 10});

  // The CSV has a header and one row per epoch; the checkpoint was written.
  std::ifstream csv(dir / "log.csv");
  int lines = 0;
  for (std::string l; std::getline(csv, l);) ++lines;
  CHECK(lines == 3);
  CHECK(std::filesystem::exists(dir / "best.safetensors"));

  // Weights round trip: a fresh model with the saved weights predicts the same.
  model.save_weights(dir / "w.safetensors");
  keras::utils::set_random_seed(99);
  keras::Sequential again({layers::Flatten({28, 28, 1}), layers::Dense(64, "relu"), layers::Dense(10)});
  CHECK(again.predict(vx, 64).to_vector<float>() != logits.to_vector<float>());
  again.load_weights(dir / "w.safetensors");
  CHECK(again.predict(vx, 64).to_vector<float>() == logits.to_vector<float>());
  std::filesystem::remove_all(dir);
}

TEST_CASE("models::model_from_json makes the model to_json describes, its weights from the seed", "[api][keras]") {
  test::start_runtime();
  std::vector<uint8_t> pixels(4 * 64);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 53 % 256);
  const keras::Images x = keras::Images::from_uint8({4, 8, 8, 1}, pixels);
  keras::utils::set_random_seed(11);
  keras::Sequential model({layers::Conv2D(4, {3, 3}, "relu", {8, 8, 1}), layers::Flatten(), layers::Dense(3)});
  const std::vector<float> logits = model.predict(x).to_vector<float>();
  keras::utils::set_random_seed(11);
  keras::Model same = keras::models::model_from_json(model.to_json());
  CHECK(same.to_json() == model.to_json());
  CHECK(same.count_params() == model.count_params());
  CHECK(same.predict(x).to_vector<float>() == logits);
  keras::utils::set_random_seed(12);
  CHECK(keras::models::model_from_json(model.to_json()).predict(x).to_vector<float>() != logits);
  // Uncompiled, as Keras' model_from_json returns it.
  CHECK_THROWS_WITH(same.fit(x, {0, 1, 2, 0}), Catch::Contains("call compile() first"));
  CHECK_THROWS_AS(keras::models::model_from_json("{\"class_name\": \"Sequential\"}"), UsageError);
}

TEST_CASE("save_weights and load_weights through a .keras file", "[api][keras]") {
  test::start_runtime();
  keras::utils::set_random_seed(5);
  keras::Sequential model({layers::Conv2D(4, {3, 3}, "relu", {8, 8, 1}), layers::Flatten(), layers::Dense(3)});
  model.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true));
  std::vector<uint8_t> pixels(4 * 64);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i * 37 % 256);
  const keras::Images x = keras::Images::from_uint8({4, 8, 8, 1}, pixels);
  const std::vector<float> logits = model.predict(x).to_vector<float>();
  const auto dir = temp_dir("keras-file");
  model.save_weights(dir / "m.keras");  // Keras 3's own file: config.json and model.weights.h5
  keras::utils::set_random_seed(6);
  keras::Sequential other({layers::Conv2D(4, {3, 3}, "relu", {8, 8, 1}), layers::Flatten(), layers::Dense(3)});
  CHECK(other.predict(x).to_vector<float>() != logits);
  other.load_weights(dir / "m.keras");
  CHECK(other.predict(x).to_vector<float>() == logits);
  std::filesystem::remove_all(dir);
}

TEST_CASE("EarlyStopping, ReduceLROnPlateau and TensorBoard act on fit", "[api][keras]") {
  if (!have_data()) {
    WARN("no " << data::kDefaultDataDir << ": skipped");
    return;
  }
  test::start_runtime();
  auto [train, test] = keras::datasets::fashion_mnist::load_data();
  keras::Sequential model({layers::Flatten({28, 28, 1}), layers::Dense(10)});
  model.compile(keras::optimizers::SGD(0.01), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true));
  const auto dir = temp_dir("callbacks");
  const keras::Images x = train.x.slice(0, 256);
  const keras::Labels y = keras::slice(train.y, 0, 256);
  // min_delta 10: no epoch after the first improves enough, so ReduceLROnPlateau
  // (patience 0) cuts the rate after epoch 2, for epoch 3 ...
  const keras::History h = model.fit(
      x, y,
      {.epochs = 3, .batch_size = 64, .verbose = 0,
       .callbacks = {keras::callbacks::ReduceLROnPlateau({.monitor = "loss", .factor = 0.1, .patience = 0, .min_delta = 10}),
                     keras::callbacks::TensorBoard(dir / "logs")}});
  REQUIRE(h.logs.epochs.size() == 3);
  CHECK(h.logs.epochs[1].learning_rate == Approx(0.01));
  CHECK(h.logs.epochs[2].learning_rate == Approx(0.001));
  // ... and EarlyStopping (patience 1) ends the next fit after its second epoch.
  const keras::History stopped = model.fit(
      x, y,
      {.epochs = 5, .batch_size = 64, .verbose = 0,
       .callbacks = {keras::callbacks::EarlyStopping({.monitor = "loss", .min_delta = 10, .patience = 1})}});
  CHECK(stopped.history.at("loss").size() == 2);
  CHECK(stopped.logs.early_stopped_epoch == 2);
  int event_files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "logs"))
    event_files += e.path().filename().string().rfind("events.out.tfevents.", 0) == 0 && e.file_size() > 0;
  CHECK(event_files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a model built under MirroredStrategy.scope() trains on every replica", "[api][keras][distribute]") {
  if (!have_data()) {
    WARN("no " << data::kDefaultDataDir << ": skipped");
    return;
  }
  test::start_runtime();
  config::set_logical_device_configuration(config::list_physical_devices("CPU").at(0), {{}, {}});
  distribute::MirroredStrategy strategy({"/cpu:0", "/cpu:1"});  // the CPUs, GPUs or not
  REQUIRE(strategy.num_replicas_in_sync() == 2);
  auto [train, test] = keras::datasets::fashion_mnist::load_data();
  keras::Sequential model;
  {
    auto scope = strategy.scope();
    CHECK(distribute::StrategyScope::current() == &strategy.strategy());
    model = keras::Sequential({layers::Flatten({28, 28, 1}), layers::Dense(32, "relu"), layers::Dense(10)});
    model.compile(keras::optimizers::SGD(0.1), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true));
  }
  CHECK(distribute::StrategyScope::current() == nullptr);
  CHECK(model.model().num_replicas() == 2);
  const keras::History h =
      model.fit(train.x.slice(0, 512), keras::slice(train.y, 0, 512), {.epochs = 1, .batch_size = 64, .verbose = 0});
  REQUIRE(h.logs.epochs.size() == 1);
  CHECK(h.logs.epochs[0].replicas.size() == 2);
  CHECK(model.evaluate(test.x.slice(0, 256), keras::slice(test.y, 0, 256)).accuracy > 0.3);
  // The global batch must split evenly over the replicas, as axon-train says.
  CHECK_THROWS_AS(model.fit(train.x.slice(0, 64), keras::slice(train.y, 0, 64), {.batch_size = 63, .verbose = 0}),
                  UsageError);
}

TEST_CASE("compile's metrics: in the history and evaluate, as Keras computes them", "[api][keras]") {
  if (!have_data()) {
    WARN("no " << data::kDefaultDataDir << ": skipped");
    return;
  }
  test::start_runtime();
  auto [train, test] = keras::datasets::fashion_mnist::load_data();
  const keras::Images x = train.x.slice(0, 512), vx = test.x.slice(0, 200);
  const keras::Labels y = keras::slice(train.y, 0, 512), vy = keras::slice(test.y, 0, 200);
  keras::Sequential model({layers::Flatten({28, 28, 1}), layers::Dense(10)});
  model.compile(keras::optimizers::SGD(0.1), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true),
                {"accuracy", "mse", keras::metrics::SparseTopKCategoricalAccuracy(3, "top3")});
  const keras::History h =
      model.fit(x, y, {.epochs = 2, .batch_size = 64, .validation_data = keras::datasets::Split{vx, vy}, .verbose = 0});
  for (const char* key : {"mse", "top3", "val_mse", "val_top3"}) CHECK(h.history.at(key).size() == 2);
  const keras::Evaluation e = model.evaluate(vx, vy, 64);
  REQUIRE(e.metrics.size() == 2);
  CHECK(e.metrics[0].first == "mse");
  CHECK(e.metrics[1].first == "top3");
  CHECK(e.metrics[1].second == Approx(h.history.at("val_top3")[1]).margin(1e-9));
  // Against the host: mse on the logits against one-hot labels, top-3 by
  // counting the logits above the label's (in double).
  const std::vector<float> logits = model.predict(vx, 64).to_vector<float>();
  double mse = 0, top3 = 0;
  for (size_t i = 0; i < vy.size(); ++i) {
    const float* row = logits.data() + 10 * i;
    int above = 0;
    for (int j = 0; j < 10; ++j) {
      const double d = row[j] - (j == vy[i] ? 1.0 : 0.0);
      mse += d * d / 10;
      above += row[j] > row[vy[i]];
    }
    top3 += above < 3;
  }
  CHECK(e.metrics[0].second == Approx(mse / 200).epsilon(1e-5));
  CHECK(e.metrics[1].second == top3 / 200);
  CHECK(e.metrics[1].second >= e.accuracy);
}

TEST_CASE("Keras' other losses train through compile: label-smoothed categorical, Huber", "[api][keras]") {
  if (!have_data()) {
    WARN("no " << data::kDefaultDataDir << ": skipped");
    return;
  }
  test::start_runtime();
  auto [train, test] = keras::datasets::fashion_mnist::load_data();
  const keras::Images x = train.x.slice(0, 512);
  const keras::Labels y = keras::slice(train.y, 0, 512);
  for (const nn::LossOptions& loss : {keras::losses::CategoricalCrossentropy(/*from_logits=*/true, 0.1),
                                      keras::losses::Huber(2.0)}) {
    keras::Sequential model({layers::Flatten({28, 28, 1}), layers::Dense(10)});
    model.compile(keras::optimizers::SGD(0.1), loss);
    const keras::History h = model.fit(x, y, {.epochs = 3, .batch_size = 64, .verbose = 0});
    const std::vector<double>& losses = h.history.at("loss");
    REQUIRE(losses.size() == 3);
    INFO(nn::loss_name(loss.kind) << ": " << losses[0] << " -> " << losses[2]);
    CHECK(std::isfinite(losses[2]));
    CHECK(losses[2] < losses[0]);
  }
}

namespace {

// A StateRestorer that puts back a made-up position and notes what fit gave it.
class PositionRestorer : public keras::callbacks::StateRestorer {
 public:
  explicit PositionRestorer(train::TrainingPosition at) : at_(std::move(at)) {}
  train::TrainingPosition restore(const std::vector<train::CheckpointedState*>& states) override {
    states_seen = static_cast<int>(states.size());
    return at_;
  }
  void on_stopped(const nn::History& history) override { stopped_at_step = history.stopped_step; }
  int states_seen = -1;
  int64_t stopped_at_step = -1;

 private:
  train::TrainingPosition at_;
};

data::ImageSet with_labels(const keras::Images& x, const keras::Labels& y) {
  data::ImageSet set = x.set();
  for (size_t i = 0; i < y.size(); ++i) set.labels[i] = static_cast<uint8_t>(y[i]);
  return set;
}

}  // namespace

TEST_CASE("fit and evaluate over a data set equal them over arrays, and fit starts where initial_epoch or a StateRestorer says", "[api][keras]") {
  if (!have_data()) {
    WARN("no " << data::kDefaultDataDir << ": skipped");
    return;
  }
  test::start_runtime();
  auto [train, test] = keras::datasets::fashion_mnist::load_data();
  const keras::Images x = train.x.slice(0, 512), vx = test.x.slice(0, 128);
  const keras::Labels y = keras::slice(train.y, 0, 512), vy = keras::slice(test.y, 0, 128);
  const data::ImageSet train_set = with_labels(x, y), test_set = with_labels(vx, vy);
  auto small_model = [] {
    keras::utils::set_random_seed(5);
    keras::Sequential m({layers::Flatten({28, 28, 1}), layers::Dense(10)});
    m.compile(keras::optimizers::Adam(), keras::losses::SparseCategoricalCrossentropy(/*from_logits=*/true));
    return m;
  };

  // The same data as arrays and as a data set: the same epochs, bit for bit.
  keras::Sequential arrays = small_model(), dataset = small_model();
  const keras::History ha = arrays.fit(
      x, y, {.epochs = 2, .batch_size = 64, .validation_data = keras::datasets::Split{vx, vy}, .verbose = 0, .seed = 1});
  const keras::History hd =
      dataset.fit(train_set, {.epochs = 2, .batch_size = 64, .validation_data = test_set, .verbose = 0, .seed = 1});
  CHECK(hd.history.at("loss") == ha.history.at("loss"));
  CHECK(hd.history.at("val_loss") == ha.history.at("val_loss"));
  CHECK(dataset.predict(vx, 64).to_vector<float>() == arrays.predict(vx, 64).to_vector<float>());
  // evaluate over the data set: what the last epoch's validation measured, as over arrays.
  const keras::Evaluation ed = dataset.evaluate(test_set, 64), ea = arrays.evaluate(vx, vy, 64);
  CHECK(ed.loss == ea.loss);
  CHECK(ed.accuracy == ea.accuracy);
  CHECK(std::fabs(ed.loss - hd.history.at("val_loss").back()) <= 1e-6 * std::fabs(ed.loss));

  // initial_epoch 1 of 2: only the second epoch is trained.
  keras::Sequential later = small_model();
  const keras::History h1 = later.fit(train_set, {.epochs = 2, .batch_size = 64, .verbose = 0, .initial_epoch = 1});
  REQUIRE(h1.logs.epochs.size() == 1);
  CHECK(h1.logs.epochs[0].epoch == 2);

  // A StateRestorer gets the other callbacks' states and sets where fit starts:
  // epoch 2, step 3 of 8, so that epoch trains its last 5 steps.
  keras::Sequential resumed = small_model();
  PositionRestorer restorer(train::TrainingPosition{1, 3, 11, {}});
  const keras::History h2 = resumed.fit(
      train_set, {.epochs = 2, .batch_size = 64, .verbose = 0,
                  .callbacks = {keras::callbacks::EarlyStopping({.monitor = "loss", .patience = 5}),
                                keras::callbacks::Custom(restorer)}});
  CHECK(restorer.states_seen == 1);
  REQUIRE(h2.logs.epochs.size() == 1);
  CHECK(h2.logs.epochs[0].epoch == 2);
  CHECK(resumed.model().optimizer().iterations() == 5);
  CHECK(restorer.stopped_at_step == -1);

  // stop_requested before the fourth step: fit returns at once, and the
  // restorer hears of it while the states still exist.
  keras::Sequential stopped = small_model();
  PositionRestorer fresh(train::TrainingPosition{});
  int polls = 0;
  const keras::History h3 = stopped.fit(train_set, {.epochs = 2, .batch_size = 64, .verbose = 0,
                                                    .callbacks = {keras::callbacks::Custom(fresh)},
                                                    .stop_requested = [&polls] { return ++polls > 3; }});
  CHECK(h3.logs.stopped);
  CHECK(h3.logs.stopped_step == 3);
  CHECK(fresh.stopped_at_step == 3);
  CHECK(stopped.model().optimizer().iterations() == 3);
}
