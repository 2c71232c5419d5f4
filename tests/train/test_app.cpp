// axon-train end to end: a short real run (loss falls, accuracy well above
// chance, CSV and weights written, memory bounded), bit-identical reruns, one
// clear message and exit code 2 for bad input, the GPU fallback, --compare.
// [long]: the acceptance run with defaults (5 epochs of Fashion-MNIST) and the
// Keras models of tests/data against Keras' spread (3 epochs each).
#include "synthetic.hpp"
#include "train_test_util.hpp"

#include <axon/data/mnist.hpp>

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

using namespace axon;
using axon::test::TempDir;

namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

Result run(const std::string& args, const TempDir& dir, const std::string& env = "") {
  const auto out = dir.path / "stdout.txt", err = dir.path / "stderr.txt";
  const std::string cmd = env + (env.empty() ? "" : " ") + "'" AXON_TRAIN_EXE "' " + args + " >'" + out.string() +
                          "' 2>'" + err.string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = test::read_all(out);
  r.err = test::read_all(err);
  return r;
}

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// The data folder for short runs: the installed Fashion-MNIST, or else a
// learnable synthetic set written as IDX files into `dir`.
std::string data_dir(const TempDir& dir) {
  if (!data::find_idx_file(data::kDefaultDataDir, "train-images-idx3-ubyte").empty()) return data::kDefaultDataDir;
  for (auto [split, n, seed] : {std::tuple<const char*, int64_t, uint64_t>{"train", 6400, 1}, {"t10k", 2000, 2}}) {
    const data::ImageSet s = test::synthetic_set(n, seed);
    test::write_raw(dir.path / (std::string(split) + "-images-idx3-ubyte"),
                    test::idx_bytes(0x08, {static_cast<uint32_t>(n), 28, 28}, s.images));
    test::write_raw(dir.path / (std::string(split) + "-labels-idx1-ubyte"),
                    test::idx_bytes(0x08, {static_cast<uint32_t>(n)}, s.labels));
  }
  return dir.path.string();
}

// CSV rows as vectors of fields (header skipped).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "epoch,loss,accuracy,val_loss,val_accuracy,seconds,samples_per_second,input_wait_seconds,learning_rate");
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::string cell;
    std::istringstream l(line);
    while (std::getline(l, cell, ',')) f.push_back(cell);
    REQUIRE(f.size() == 9);
    rows.push_back(f);
  }
  return rows;
}

double peak_mib(const std::string& out) {
  const auto at = out.find("Peak resident memory: ");
  REQUIRE(at != std::string::npos);
  return std::stod(out.substr(at + 22));
}

bool has_gpu() {
  return test::test_runtime().find_device("gpu:0") != nullptr;
}

// The validation accuracy of each epoch's line of axon-train's stdout.
std::vector<double> val_accuracies(const std::string& out) {
  std::vector<double> v;
  const std::string key = " - val_accuracy: ";
  for (auto at = out.find(key); at != std::string::npos; at = out.find(key, at + 1))
    v.push_back(std::stod(out.substr(at + key.size())));
  return v;
}

}  // namespace

TEST_CASE("axon-train: a short run learns and writes its files", "[app]") {
  TempDir dir("app-run");
  const std::string data = data_dir(dir);
  const auto csv = dir.path / "m.csv", w = dir.path / "w.axw";
  const Result r = run("--data '" + data + "' --train-limit 3200 --test-limit 1000 --epochs 2 --seed 3 --verbose "
                       "--metrics-csv '" + csv.string() + "' --save '" + w.string() + "'", dir);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("Training on /device:CPU:0") && Catch::Contains("Epoch 1/2") &&
                        Catch::Contains("Epoch 2/2") && Catch::Contains("50/50 [==============================] - ") &&
                        Catch::Contains("ms/step - loss: ") && Catch::Contains(" - val_accuracy: ") &&
                        Catch::Contains("samples/s") && Catch::Contains("for input") &&
                        Catch::Contains("Total params: 93,322") && Catch::Contains("Memory on /device:CPU:0"));
  CHECK(r.out.find('\r') == std::string::npos);  // not a terminal: no redraws
  const auto rows = csv_rows(test::read_all(csv));
  REQUIRE(rows.size() == 2);
  CHECK(std::stod(rows[1][1]) < std::stod(rows[0][1]));  // loss falls
  CHECK(std::stod(rows[1][2]) > std::stod(rows[0][2]));  // accuracy rises
  CHECK(std::stod(rows[1][4]) > 0.6);                    // chance is 0.1
  CHECK(test::read_all(w).substr(0, 8) == "AXONWTS1");
  CHECK(peak_mib(r.out) < 200);
  // No temporary files left behind by the atomic writes.
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir.path)) files += e.path().filename().string()[0] == '.';
  CHECK(files == 0);
}

TEST_CASE("axon-train: same seed and threads give a bit-identical run", "[app][determinism]") {
  TempDir dir("app-determinism");
  const std::string data = data_dir(dir);
  // 20 steps an epoch; 5 under the sanitizers, where each is 20 times slower.
  const std::string limit = std::getenv("AXON_TEST_SANITIZED") != nullptr ? "320" : "1280";
  auto once = [&](int seed, const std::string& tag) {
    const auto csv = dir.path / (tag + ".csv"), w = dir.path / (tag + ".axw");
    const Result r = run("--data '" + data + "' --train-limit " + limit + " --test-limit 500 --epochs 2 --threads 2 " +
                         "--quiet --seed " + std::to_string(seed) + " --metrics-csv '" + csv.string() + "' --save '" +
                         w.string() + "'", dir);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.empty());  // --quiet
    std::string curve;
    for (const auto& row : csv_rows(test::read_all(csv))) curve += row[1] + "," + row[2] + "," + row[3] + "," + row[4] + "\n";
    return std::make_pair(curve, test::read_all(w));
  };
  const auto a = once(5, "a"), b = once(5, "b"), c = once(6, "c");
  CHECK(a.first == b.first);
  CHECK(a.second == b.second);
  CHECK(a.second != c.second);
}

TEST_CASE("axon-train: bad input exits 2 with one message", "[app][errors]") {
  TempDir dir("app-errors");
  auto expect_usage = [&](const std::string& args, const std::string& needle) {
    const Result r = run(args, dir);
    INFO("axon-train " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_THAT(r.err, Catch::StartsWith("axon-train: error: ") && Catch::Contains(needle));
  };
  expect_usage("--data '" + (dir.path / "absent").string() + "'", "apt-get install dataset-fashion-mnist");
  expect_usage("--batch-size 0", "--batch-size must be at least 1, got 0");
  expect_usage("--batch-size -5", "--batch-size");
  expect_usage("--epochs 0", "--epochs");
  expect_usage("--learning-rate -1", "--learning-rate");
  expect_usage("--learning-rate abc", "learning-rate");
  expect_usage("--seed -3", "--seed");
  expect_usage("--optimizer nope",
               "unknown optimizer 'nope'; expected one of sgd, rmsprop, adam, adamw, adagrad, nadam");
  expect_usage("--nesterov", "--nesterov does not apply to --optimizer adam (only to sgd)");
  expect_usage("--optimizer sgd --rho 0.5", "--rho does not apply to --optimizer sgd (only to rmsprop)");
  expect_usage("--optimizer adagrad --amsgrad",
               "--amsgrad does not apply to --optimizer adagrad (only to adam, adamw)");
  expect_usage("--optimizer sgd --momentum -0.5", "--momentum must be in [0, 1], got -0.5");
  expect_usage("--optimizer rmsprop --rho 1", "--rho must be in [0, 1), got 1");
  expect_usage("--beta-2 1.5", "--beta-2 must be in [0, 1), got 1.5");
  expect_usage("--optimizer rmsprop --epsilon 0", "--epsilon must be a positive number, got 0");
  expect_usage("--weight-decay -1", "--weight-decay must be 0 or more, got -1");
  expect_usage("--clipnorm 0", "--clipnorm must be a positive number, got 0");
  expect_usage("--clipnorm 1 --global-clipnorm 1", "--clipnorm, --clipvalue and --global-clipnorm do not go together");
  expect_usage("--no-such-flag", "no-such-flag");
  expect_usage("--train-limit -1", "--train-limit");
  expect_usage("--threads -2", "--threads");
  expect_usage("--strategy nope", "strategy");
  expect_usage("--metrics-csv '" + (dir.path / "no" / "m.csv").string() + "'", "does not exist");
  expect_usage("--save '" + (dir.path / "no" / "w.axw").string() + "'", "does not exist");
  expect_usage("--device 'cpu:zero'", "cpu:zero");

  // A truncated image file in an otherwise good folder.
  TempDir bad("app-corrupt");
  test::write_dataset(bad.path, 100, 20, true);
  const std::string gz = test::read_all(bad.path / "train-images-idx3-ubyte.gz");
  test::write_raw(bad.path / "train-images-idx3-ubyte.gz", gz.substr(0, gz.size() - 40));
  expect_usage("--data '" + bad.path.string() + "'", "train-images-idx3-ubyte.gz");
  // A label file that lies about its count.
  TempDir lying("app-lying");
  test::write_dataset(lying.path, 100, 20, false);
  test::write_raw(lying.path / "t10k-labels-idx1-ubyte", test::idx_bytes(0x08, {30}, std::vector<uint8_t>(20, 1)));
  expect_usage("--data '" + lying.path.string() + "'", "t10k-labels-idx1-ubyte");
}

TEST_CASE("axon-train: --device gpu:0 without a GPU", "[app][placement]") {
  if (has_gpu()) {
    WARN("this machine has a GPU: the no-GPU fallback is not exercised");
    return;
  }
  TempDir dir("app-gpu");
  const std::string data = data_dir(dir);
  const Result strict = run("--data '" + data + "' --device gpu:0 --strict-placement", dir);
  INFO(strict.err);
  CHECK(strict.code == 2);
  CHECK(lines(strict.err) == 1);
  CHECK_THAT(strict.err, Catch::Contains("/device:GPU:0 is not available") && Catch::Contains("/device:CPU:0"));

  const Result soft = run("--data '" + data + "' --device gpu:0 --train-limit 128 --test-limit 64 --epochs 1", dir);
  INFO(soft.out << soft.err);
  CHECK(soft.code == 0);
  CHECK_THAT(soft.err, Catch::Contains("falling back to /device:CPU:0"));
  CHECK_THAT(soft.out, Catch::Contains("Training on /device:CPU:0") && Catch::Contains("fallback"));
}

TEST_CASE("axon-train: --compare runs what is there and prints the table", "[app][compare]") {
  TempDir dir("app-compare");
  const std::string data = data_dir(dir);
  const Result r = run("--data '" + data + "' --compare cpu:0,gpu:0 --train-limit 256 --test-limit 128 --epochs 1", dir);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  if (!has_gpu()) CHECK_THAT(r.out, Catch::Contains("No GPU on this machine"));
  CHECK_THAT(r.out, Catch::Contains("s/epoch") && Catch::Contains("samples/s") && Catch::Contains("final accuracy") &&
                        Catch::Contains("speedup") && Catch::Contains("1.00x"));
}

TEST_CASE("axon-train: --help lists the flags with examples", "[app]") {
  TempDir dir("app-help");
  const Result r = run("--help", dir);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("--batch-size") && Catch::Contains("--metrics-csv") && Catch::Contains("Examples:") &&
                        Catch::Contains("--visible-devices"));
}

// A model file's summary is the model's alone: no data is read (here none is there).
TEST_CASE("axon-train: --summary of a --model needs no data", "[app]") {
  TempDir dir("app-summary");
  const Result r = run("--model '" AXON_TEST_DATA_DIR "/keras_applications.json' --summary --data '" +
                           (dir.path / "absent").string() + "'",
                       dir);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(None, 28, 28, 1)") && Catch::Contains("cropping2d (Cropping2D)") &&
                        Catch::Contains("Total params: 2,981"));
}

// Keras itself (bench/peer/keras_cnn.py, TensorFlow 2.21 CPU, seeds 0-7, this
// data) ends epoch 1 at 85.3-86.5% and epoch 5 at 89.6-90.2% (mean 89.9%):
// 90% is the middle of the spread, so the thresholds are Keras parity with
// half a point of room (docs/training.md, "Accuracy against Keras").
TEST_CASE("axon-train: defaults train Fashion-MNIST to Keras' accuracy in 5 epochs", "[long]") {
  // tools/install-deps installs the data set; without it this test fails.
  REQUIRE_FALSE(data::find_idx_file(data::kDefaultDataDir, "train-images-idx3-ubyte").empty());
  // The README's run as docs.shown.default_run kept it (the ctest fixture
  // default_run: trained once for both), or else trained here.
  std::string out;
  double peak = 0;
  const char* kept = std::getenv("AXON_TEST_DEFAULT_RUN_DIR");
  if (kept != nullptr && std::filesystem::exists(std::filesystem::path(kept) / "stdout.txt")) {
    out = test::read_all(std::filesystem::path(kept) / "stdout.txt");
    peak = std::stod(test::read_all(std::filesystem::path(kept) / "peak_mib.txt"));
  } else {
    TempDir dir("app-full");
    const Result r = run("--verbose", dir);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    out = r.out;
    peak = peak_mib(r.out);
  }
  INFO(out);
  const std::vector<double> accuracy = val_accuracies(out);
  REQUIRE(accuracy.size() == 5);
  CHECK(accuracy[0] >= 0.84);
  CHECK(accuracy[4] >= 0.895);
  CHECK(peak < 200);
}

// Keras' own spread on the models of tests/data, measured by
// bench/peer/keras_models_accuracy.py (TensorFlow 2.21, Keras 3.15, a 2-core
// AMD EPYC, 2026-12-01): 3 epochs of Fashion-MNIST, batch 64, Adam 1e-3, from
// Keras' own initialisation and shuffle after keras.utils.set_random_seed(s).
// Each figure is the lowest over Keras' seeds after epoch 3: validation
// accuracy (seeds 1-3; 1-12 for sequential_mix, whose validation accuracy
// moves by up to 23 points between Keras' seeds, so three of them do not show
// its spread) and the epoch's training accuracy, which moves far less.
// axon-train at --seed 1 must reach the first less half a point (Keras' own
// spread) and the second less one point (docs/training.md, "Accuracy against
// Keras").
struct KerasSpread {
  const char* model;    // tests/data/keras_<model>.json
  const char* seeds;    // Keras' seeds
  double val_accuracy;  // the lowest validation accuracy after epoch 3
  double accuracy;      // the lowest training accuracy of epoch 3
};
constexpr KerasSpread kKerasSpread[] = {
    {"resnet", "1-3", 0.7956, 0.8991},
    {"inception", "1-3", 0.8913, 0.9054},
    {"sequential_mix", "1-12", 0.6006, 0.8233},
    {"strided", "1-3", 0.8727, 0.8819},
    {"convnext", "1-3", 0.8636, 0.8743},
};

void check_keras_spread(const std::string& model) {
  // tools/install-deps installs the data set; without it this test fails.
  REQUIRE_FALSE(data::find_idx_file(data::kDefaultDataDir, "train-images-idx3-ubyte").empty());
  const KerasSpread* keras = nullptr;
  for (const KerasSpread& k : kKerasSpread)
    if (model == k.model) keras = &k;
  REQUIRE(keras != nullptr);
  TempDir dir("app-keras-" + model);
  const auto csv = dir.path / "m.csv";
  const Result r = run("--model '" AXON_TEST_DATA_DIR "/keras_" + model + ".json' --epochs 3 --seed 1 --metrics-csv '" +
                           csv.string() + "'",
                       dir);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto rows = csv_rows(test::read_all(csv));
  REQUIRE(rows.size() == 3);
  INFO("Keras' lowest over seeds " << keras->seeds << ": val_accuracy " << keras->val_accuracy << ", accuracy "
                                   << keras->accuracy);
  CHECK(std::stod(rows[2][4]) >= keras->val_accuracy - 0.005);
  CHECK(std::stod(rows[2][2]) >= keras->accuracy - 0.01);
}

TEST_CASE("axon-train: keras_resnet.json lands within Keras' spread in 3 epochs", "[long][keras_spread][resnet]") {
  check_keras_spread("resnet");
}
TEST_CASE("axon-train: keras_inception.json lands within Keras' spread in 3 epochs",
          "[long][keras_spread][inception]") {
  check_keras_spread("inception");
}
TEST_CASE("axon-train: keras_sequential_mix.json lands within Keras' spread in 3 epochs",
          "[long][keras_spread][sequential_mix]") {
  check_keras_spread("sequential_mix");
}
TEST_CASE("axon-train: keras_strided.json lands within Keras' spread in 3 epochs", "[long][keras_spread][strided]") {
  check_keras_spread("strided");
}
TEST_CASE("axon-train: keras_convnext.json lands within Keras' spread in 3 epochs", "[long][keras_spread][convnext]") {
  check_keras_spread("convnext");
}
