// Sequential and the trainer's CNN on the CPU device: architecture figures,
// seeded initialisation (Keras' initializers by name), Adam's update, metrics against a host computation,
// learning on a synthetic set, bit-identical reruns, weights round trip.
#include "synthetic.hpp"
#include "train_test_util.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/model.hpp>
#include <axon/train/weights.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

using namespace axon;
using namespace axon::nn;
using axon::test::batch_of;

namespace {

std::unique_ptr<Sequential> cnn(uint64_t seed) {
  auto m = make_cnn(10);
  m->build({28, 28, 1}, test::test_cpu(), seed);
  m->compile();
  return m;
}

// Records the running loss after every step (a sync per step: tests only).
struct LossRecorder : Callback {
  std::vector<double> losses;
  void on_batch_end(int64_t, const std::function<MetricValues()>& read) override { losses.push_back(read().loss); }
};

}  // namespace

TEST_CASE("model: the CNN's shape, parameters and FLOPs", "[model]") {
  auto m = cnn(1);
  CHECK(m->parameter_count() == 93322);
  CHECK(m->layers().back()->output_shape() == Shape{10});
  CHECK(m->training_flops_per_sample() == 16376064);  // the 16.4 MFLOP the benchmark uses
  const std::string s = m->summary();
  CHECK_THAT(s, Catch::Contains("conv2d_1 (Conv2D)") && Catch::Contains("(None, 3, 3, 64)") &&
                    Catch::Contains("Total params: 93,322"));
}

TEST_CASE("model: glorot_uniform kernels and zero biases depend only on the seed", "[model]") {
  auto a = cnn(5), b = cnn(5), c = cnn(6);
  CHECK(train::serialize_weights(*a) == train::serialize_weights(*b));
  CHECK(train::serialize_weights(*a) != train::serialize_weights(*c));
  for (Parameter* p : a->parameters()) {
    const std::vector<float> v = p->value.to_vector<float>();
    if (p->value.rank() == 1) {
      for (float x : v) REQUIRE(x == 0.0f);
      continue;
    }
    const auto [fan_in, fan_out] = compute_fans(p->value.shape());
    const double limit = std::sqrt(6.0 / (fan_in + fan_out));
    double mean = 0, sq = 0;
    for (float x : v) {
      REQUIRE(std::fabs(x) <= limit);
      mean += x;
      sq += double{x} * x;
    }
    mean /= static_cast<double>(v.size());
    const double var = sq / static_cast<double>(v.size()) - mean * mean;
    INFO(p->name << ": variance " << var << ", uniform's " << limit * limit / 3);
    CHECK(var == Approx(limit * limit / 3).epsilon(0.15));  // U(-l, l) has variance l^2 / 3
  }
}

namespace {

// Mean, standard deviation, smallest and largest of a weight's values.
struct Moments {
  double mean = 0, stddev = 0, lo = 0, hi = 0;
};
Moments moments(const std::vector<float>& v) {
  Moments m{0, 0, v.at(0), v.at(0)};
  double sq = 0;
  for (float x : v) {
    m.mean += x;
    sq += double{x} * x;
    m.lo = std::min<double>(m.lo, x);
    m.hi = std::max<double>(m.hi, x);
  }
  m.mean /= static_cast<double>(v.size());
  m.stddev = std::sqrt(sq / static_cast<double>(v.size()) - m.mean * m.mean);
  return m;
}

}  // namespace

// Keras' initializers as its documentation defines them (VarianceScaling:
// n the fan its mode names, a normal of stddev sqrt(scale / n) truncated at
// two standard deviations and widened by 1 / 0.8796 to keep that stddev, a
// uniform of limit sqrt(3 scale / n)), checked on 36,864-value kernels:
// each standard deviation within 3% (a sample's is within 0.4% at 1 sigma),
// each bound exact.
// Keras' Orthogonal: the weight as a [rows, cols] matrix (rows: all axes
// but the last) has orthonormal columns (rows, where it is wide) times
// gain; Identity is gain on the diagonal of a 2-D weight. Each checked
// against the matrix product in double within 1e-5; other ranks refused.
TEST_CASE("model: Orthogonal and Identity initializers", "[model][keras]") {
  const std::string json =
      R"({"class_name": "Sequential", "config": {"name": "inits", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 6, 6, 4], "name": "in"}}, )"
      R"({"class_name": "Conv2D", "config": {"name": "tall", "filters": 16, "kernel_size": 3, "kernel_initializer": )"
      R"({"class_name": "Orthogonal", "config": {"gain": 2.0, "seed": null}}}}, )"
      R"({"class_name": "Flatten", "config": {"name": "f"}}, )"
      R"({"class_name": "Dense", "config": {"name": "square", "units": 256, "kernel_initializer": "orthogonal"}}, )"
      R"({"class_name": "Dense", "config": {"name": "wide", "units": 300, "kernel_initializer": "orthogonal"}}, )"
      R"({"class_name": "Dense", "config": {"name": "eye", "units": 10, "kernel_initializer": )"
      R"({"class_name": "Identity", "config": {"gain": 0.5}}}}]}})";
  KerasModel k = model_from_keras_json(json, "orthogonal.json");
  k.model->build(k.input_shape, test::test_cpu(), 5);
  // The [rows, cols] matrix's Gram matrix over its shorter side against gain^2 I.
  auto check_orthogonal = [](const Parameter& p, double gain) {
    const std::vector<float> w = p.value.to_vector<float>();
    const int64_t cols = p.value.shape().back(), rows = static_cast<int64_t>(w.size()) / cols;
    const bool tall = rows >= cols;
    const int64_t n = tall ? cols : rows, m = tall ? rows : cols;
    auto at = [&](int64_t vec, int64_t e) {  // element e of column (tall) or row (wide) `vec`
      return static_cast<double>(tall ? w[static_cast<size_t>(e * cols + vec)] : w[static_cast<size_t>(vec * cols + e)]);
    };
    double worst = 0;
    for (int64_t a = 0; a < n; ++a)
      for (int64_t b = 0; b < n; ++b) {
        double dot = 0;
        for (int64_t e = 0; e < m; ++e) dot += at(a, e) * at(b, e);
        worst = std::max(worst, std::fabs(dot - (a == b ? gain * gain : 0.0)));
      }
    INFO(p.name << " " << rows << "x" << cols);
    CHECK(worst <= 1e-5 * gain * gain);
  };
  std::map<std::string, Parameter*> w;
  for (Parameter* p : k.model->parameters()) w[p->name] = p;
  check_orthogonal(*w["tall/kernel"], 2.0);    // 36 x 16
  check_orthogonal(*w["square/kernel"], 1.0);  // 256 x 256
  check_orthogonal(*w["wide/kernel"], 1.0);    // 256 x 300
  const std::vector<float> eye = w["eye/kernel"]->value.to_vector<float>();  // 300 x 10
  for (int64_t r = 0; r < 300; ++r)
    for (int64_t c = 0; c < 10; ++c) CHECK(eye[static_cast<size_t>(r * 10 + c)] == (r == c ? 0.5f : 0.0f));
  // Written back with gain, read again the same.
  const KerasModel back = model_from_keras_json(keras_json(*k.model, k.input_shape), "written");
  CHECK(back.model->layers()[0]->initializer("kernel", "GlorotUniform") ==
        k.model->layers()[0]->initializer("kernel", "GlorotUniform"));
  CHECK(back.model->layers()[4]->initializer("kernel", "GlorotUniform").gain == 0.5);
  // Identity on a convolution's 4-D kernel: refused at build, before its weights exist.
  KerasModel bad = model_from_keras_json(
      R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 6, 6, 4], "name": "in"}}, )"
      R"({"class_name": "Conv2D", "config": {"name": "c", "filters": 4, "kernel_size": 3, "kernel_initializer": "identity"}}, )"
      R"({"class_name": "Flatten", "config": {"name": "f"}}, {"class_name": "Dense", "config": {"name": "d", "units": 10}}]}})",
      "bad.json");
  CHECK_THROWS_WITH(bad.model->build(bad.input_shape, test::test_cpu(), 5),
                    Catch::Contains("Conv2D 'c': kernel: the Identity initializer takes 2-D weights (Keras' rule); "
                                    "this one is [3,3,4,4]"));
}

TEST_CASE("model: a config's initializers draw Keras' distributions", "[model][keras]") {
  auto conv = [](const char* name, const std::string& kernel, const std::string& bias) {
    return R"({"class_name": "Conv2D", "config": {"name": ")" + std::string(name) +
           R"(", "filters": 64, "kernel_size": [3, 3], "padding": "same", "kernel_initializer": )" + kernel +
           R"(, "bias_initializer": )" + bias + "}}";
  };
  const std::string json =
      R"({"class_name": "Sequential", "config": {"name": "inits", "layers": [)"
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 4], "name": "in"}}, )" +
      conv("z", R"("glorot_uniform")", R"("zeros")") + ", " +  // 64 channels for the others
      conv("a", R"("he_normal")", R"({"class_name": "Constant", "config": {"value": 0.1}})") + ", " +
      conv("b", R"({"class_name": "HeUniform", "config": {"seed": null}})",
           R"({"class_name": "RandomNormal", "config": {"mean": 0.5, "stddev": 0.2, "seed": 7}})") + ", " +
      conv("c", R"({"class_name": "VarianceScaling", "config": {"scale": 0.5, "mode": "fan_out", "distribution": "untruncated_normal"}})",
           R"("ones")") + ", " +
      conv("d", R"({"class_name": "TruncatedNormal", "config": {"mean": 0.0, "stddev": 0.1}})",
           R"({"class_name": "RandomUniform", "config": {"minval": -0.3, "maxval": 0.2}})") + ", " +
      conv("e", R"("glorot_normal")", R"("zeros")") + ", " +
      R"({"class_name": "Flatten", "config": {"name": "f"}}, {"class_name": "Dense", "config": {"name": "g", "units": 10, "kernel_initializer": "lecun_uniform"}}]}})";
  KerasModel k = model_from_keras_json(json, "inits.json");
  k.model->build(k.input_shape, test::test_cpu(), 3);
  std::map<std::string, Moments> w;
  for (Parameter* p : k.model->parameters()) w[p->name] = moments(p->value.to_vector<float>());
  const double fan_in = 3 * 3 * 64, fan_out = 3 * 3 * 64;
  auto truncated = [&](const Moments& m, double sigma) {
    CHECK(m.stddev == Approx(sigma).epsilon(0.03));
    CHECK(std::max(-m.lo, m.hi) <= 2 * sigma / 0.87962566103423978 * (1 + 1e-6));
  };
  auto uniform = [&](const Moments& m, double limit) {
    CHECK(m.stddev == Approx(limit / std::sqrt(3.0)).epsilon(0.03));
    CHECK(std::max(-m.lo, m.hi) <= limit * (1 + 1e-6));
    CHECK(std::max(-m.lo, m.hi) >= 0.99 * limit);
  };
  INFO("a/kernel he_normal, b/kernel HeUniform, c/kernel VarianceScaling, d/kernel TruncatedNormal, e/kernel glorot_normal");
  truncated(w["a/kernel"], std::sqrt(2 / fan_in));
  CHECK(w["a/bias"].lo == Approx(0.1).epsilon(1e-7));
  CHECK(w["a/bias"].hi == Approx(0.1).epsilon(1e-7));
  uniform(w["b/kernel"], std::sqrt(6 / fan_in));
  CHECK(std::fabs(w["b/bias"].mean - 0.5) <= 4 * 0.2 / 8);  // 64 values: 4 standard errors
  CHECK(w["b/bias"].stddev == Approx(0.2).epsilon(0.3));
  CHECK(w["c/kernel"].stddev == Approx(std::sqrt(0.5 / fan_out)).epsilon(0.03));
  CHECK(std::max(-w["c/kernel"].lo, w["c/kernel"].hi) > 2.5 * std::sqrt(0.5 / fan_out));  // not truncated
  CHECK((w["c/bias"].lo == 1.0 && w["c/bias"].hi == 1.0));
  CHECK(w["d/kernel"].stddev == Approx(0.1 * 0.87962566103423978).epsilon(0.03));
  CHECK(std::max(-w["d/kernel"].lo, w["d/kernel"].hi) <= 0.2 * (1 + 1e-6));
  CHECK((w["d/bias"].lo >= -0.3 && w["d/bias"].hi < 0.2));
  truncated(w["e/kernel"], std::sqrt(2 / (fan_in + fan_out)));
  CHECK((w["e/bias"].lo == 0.0 && w["e/bias"].hi == 0.0));
  uniform(w["g/kernel"], std::sqrt(3 / (4.0 * 4 * 64)));

  // Written back under Keras' names and arguments, read again the same.
  const KerasModel back = model_from_keras_json(keras_json(*k.model, k.input_shape), "written");
  const std::vector<Layer*> before = k.model->layers(), after = back.model->layers();
  REQUIRE(before.size() == after.size());
  for (size_t i = 0; i < before.size(); ++i)
    for (const char* weight : {"kernel", "bias"}) {
      INFO(before[i]->name() << "/" << weight);
      CHECK(after[i]->initializer(weight, "GlorotUniform") == before[i]->initializer(weight, "GlorotUniform"));
    }
  CHECK(after[1]->initializer("kernel", "GlorotUniform").class_name == "HeNormal");

  auto refused = [&](const std::string& init, const char* must) {
    CHECK_THROWS_WITH(model_from_keras_json(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
                                            R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1]}}, )" +
                                                conv("a", init, R"("zeros")") + "]}}",
                                            "bad.json"),
                      Catch::Contains("bad.json: layers[1] (Conv2D 'a'): kernel_initializer") && Catch::Contains(must));
  };
  refused(R"("he_uniformish")", "supported: GlorotUniform, GlorotNormal, HeNormal");
  refused(R"({"class_name": "VarianceScaling", "config": {"mode": "fan_sum"}})", "mode is fan_sum; supported: fan_in");
  refused(R"({"class_name": "RandomNormal", "config": {"stddev": "wide"}})", "stddev is \"wide\", not a number");
  refused(R"({"class_name": "RandomUniform", "config": {"minval": 1, "maxval": 0}})", "minval is above its maxval");
  // Regularizers: L1, L2 and L1L2 with Keras' defaults (their penalties are
  // checked against Keras' in goldens.keras_models), written back as Keras
  // writes them; no other.
  auto regularized = [&](const std::string& regularizer) {
    return model_from_keras_json(R"({"class_name": "Sequential", "config": {"name": "s", "layers": [)"
                                 R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4, 4, 1]}}, )"
                                 R"({"class_name": "Conv2D", "config": {"name": "a", "filters": 2, "kernel_size": 3, )"
                                 R"("kernel_regularizer": )" +
                                     regularizer + R"(}}, {"class_name": "Flatten", "config": {"name": "f"}}]}})",
                                 "reg.json");
  };
  auto read = [&](const std::string& regularizer) {
    return regularized(regularizer).model->layers()[0]->regularizer("kernel");
  };
  CHECK(read(R"("l2")") == Regularizer{0.0, 0.01});
  CHECK(read(R"("l1")") == Regularizer{0.01, 0.0});
  CHECK(read(R"({"class_name": "L1L2", "config": {"l1": 0.0, "l2": 0.003}})") == Regularizer{0.0, 0.003});
  CHECK(read(R"({"class_name": "L1L2", "config": {"l1": 0.002, "l2": 0.003}})") == Regularizer{0.002, 0.003});
  CHECK(read(R"({"class_name": "L1", "config": {"l1": 0.25}})") == Regularizer{0.25, 0.0});
  const KerasModel both = regularized(R"({"class_name": "L1L2", "config": {"l1": 0.002, "l2": 0.003}})");
  const nlohmann::json written = nlohmann::json::parse(keras_json(*both.model, both.input_shape));
  const nlohmann::json& reg = written["config"]["layers"][1]["config"]["kernel_regularizer"];
  CHECK(reg["class_name"] == "L1L2");
  CHECK(reg["config"] == nlohmann::json({{"l1", 0.002}, {"l2", 0.003}}));
  CHECK_THROWS_WITH(regularized(R"({"class_name": "OrthogonalRegularizer", "config": {"factor": 0.01}})"),
                    Catch::Contains("reg.json: layers[1] (Conv2D 'a'): kernel_regularizer is OrthogonalRegularizer; "
                                    "axon supports L1, L2 and L1L2"));
  CHECK_THROWS_WITH(regularized(R"({"class_name": "L1", "config": {"l1": "x"}})"),
                    Catch::Contains("kernel_regularizer's l1 is \"x\", not a number from 0 to 1e30"));
  CHECK_THROWS_WITH(regularized(R"({"class_name": "L2", "config": {"l2": -1}})"),
                    Catch::Contains("kernel_regularizer's l2 is -1, not a number from 0 to 1e30"));
}

TEST_CASE("model: Adam steps are TensorFlow's ApplyAdam with Keras defaults", "[model]") {
  auto m = cnn(3);
  const data::ImageSet set = test::synthetic_set(24, 1);
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  auto params = m->parameters();
  // Host mirror of the optimizer state, in double.
  std::vector<std::vector<double>> w, mm, vv;
  for (Parameter* p : params) {
    const std::vector<float> v = p->value.to_vector<float>();
    w.emplace_back(v.begin(), v.end());
    mm.emplace_back(v.size(), 0.0);
    vv.emplace_back(v.size(), 0.0);
  }
  for (int t = 1; t <= 3; ++t) {
    const data::HostBatch b = batch_of(set, (t - 1) * 8, 8);
    m->compute_gradients(b);
    std::vector<std::vector<float>> g;
    for (Parameter* p : params) g.push_back(p->grad.to_vector<float>());
    m->train_step(b);  // the same weights and batch: the same gradients, then one update
    CHECK(m->optimizer().iterations() == t);
    const double lr_t = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
    for (size_t k = 0; k < params.size(); ++k) {
      const std::vector<float> now = params[k]->value.to_vector<float>();
      for (size_t i = 0; i < now.size(); ++i) {
        mm[k][i] = b1 * mm[k][i] + (1 - b1) * g[k][i];
        vv[k][i] = b2 * vv[k][i] + (1 - b2) * g[k][i] * g[k][i];
        w[k][i] -= lr_t * mm[k][i] / (std::sqrt(vv[k][i]) + eps);
        INFO("step " << t << " " << params[k]->name << "[" << i << "] grad " << g[k][i]);
        REQUIRE(now[i] == Approx(w[k][i]).margin(2e-7).epsilon(1e-5));
        w[k][i] = now[i];  // follow the device so float rounding does not accumulate
      }
    }
  }
}

// A schedule will set the learning rate every step: the step after
// set_learning_rate uses the new rate in the weight decay and the update
// (SGD: w - w wd lr - lr g), as a model built with that rate does.
TEST_CASE("model: set_learning_rate takes effect at the next step", "[model][optimizers]") {
  const data::ImageSet set = test::synthetic_set(16, 1);
  const data::HostBatch b = batch_of(set, 0, 8);
  auto model = [&](float lr) {
    auto m = make_cnn(10);
    m->build({28, 28, 1}, test::test_cpu(), 7);
    OptimizerOptions o;
    o.kind = OptimizerKind::sgd;
    o.learning_rate = lr;
    o.weight_decay = 0.1f;
    m->compile(o);
    return m;
  };
  auto fixed = model(0.02f), changed = model(0.5f);
  changed->set_learning_rate(0.02f);
  CHECK(changed->optimizer().learning_rate() == 0.02f);
  fixed->train_step(b);
  changed->train_step(b);
  CHECK(train::serialize_weights(*fixed) == train::serialize_weights(*changed));
  auto other = model(0.02f);
  other->set_learning_rate(0.03f);
  other->train_step(b);
  CHECK(train::serialize_weights(*other) != train::serialize_weights(*fixed));
  CHECK_THROWS_AS(fixed->set_learning_rate(-1.0f), UsageError);
}

TEST_CASE("model: evaluate's device-side loss and accuracy match the host", "[model]") {
  auto m = cnn(4);
  const data::ImageSet set = test::synthetic_set(70, 2);
  const MetricValues v = m->evaluate(set, 32);  // 32 + 32 + 6: two batch sizes
  const std::vector<float> logits = m->predict(set, 32);
  double loss = 0;
  int correct = 0;
  for (int64_t i = 0; i < set.count; ++i) {
    const float* l = logits.data() + i * 10;
    int best = 0;
    double mx = l[0];
    for (int j = 1; j < 10; ++j)
      if (l[j] > l[best]) best = j;
    for (int j = 0; j < 10; ++j) mx = std::max(mx, double{l[j]});
    double z = 0;
    for (int j = 0; j < 10; ++j) z += std::exp(l[j] - mx);
    loss += std::log(z) + mx - l[set.labels[static_cast<size_t>(i)]];
    correct += best == set.labels[static_cast<size_t>(i)];
  }
  CHECK(v.samples == 70);
  CHECK(v.loss == Approx(loss / 70).epsilon(1e-5));
  CHECK(v.accuracy == Approx(correct / 70.0).margin(1e-9));
}

TEST_CASE("model: fit learns the synthetic set", "[model][fit]") {
  auto m = cnn(7);
  const data::ImageSet train = test::synthetic_set(1280, 3), val = test::synthetic_set(320, 4);
  FitOptions o;
  o.epochs = 2;
  o.batch_size = 32;
  o.seed = 1;
  o.validation_data = &val;
  const History h = m->fit(train, o);
  REQUIRE(h.epochs.size() == 2);
  CHECK(h.epochs[0].samples == 1280);
  CHECK(h.epochs[0].steps == 40);
  CHECK(h.epochs[1].loss < h.epochs[0].loss);
  CHECK(h.epochs[0].loss < 2.0);
  CHECK(h.epochs[1].val_accuracy > 0.9);  // chance is 0.1
}

TEST_CASE("model: same seed gives a bit-identical loss curve, with or without prefetch", "[model][determinism]") {
  const data::ImageSet train = test::synthetic_set(640, 5);
  auto run = [&](bool prefetch) {
    auto m = cnn(21);
    LossRecorder rec;
    FitOptions o;
    o.epochs = 2;
    o.batch_size = 48;  // 640 = 13 x 48 + 16: the short last batch too
    o.seed = 9;
    o.prefetch = prefetch;
    o.callbacks = {&rec};
    m->fit(train, o);
    return std::make_pair(rec.losses, train::serialize_weights(*m));
  };
  const auto a = run(true), b = run(true), c = run(false);
  REQUIRE(a.first.size() == 28);
  CHECK(a.first == b.first);
  CHECK(a.second == b.second);
  CHECK(a.first == c.first);
  CHECK(a.second == c.second);
}

TEST_CASE("model: weights save and load round trip; bad files are rejected", "[model][weights]") {
  test::TempDir dir("weights");
  const data::ImageSet set = test::synthetic_set(64, 6);
  auto a = cnn(30);
  a->train_step(batch_of(set, 0, 32));
  const auto file = dir.path / "w.axw";
  train::save_weights(*a, file);
  auto b = cnn(31);
  CHECK(a->predict(set, 32) != b->predict(set, 32));
  train::load_weights(*b, file);
  CHECK(a->predict(set, 32) == b->predict(set, 32));
  CHECK(test::read_all(file) == train::serialize_weights(*a));
  CHECK(test::read_all(file).substr(0, 8) == "AXONWTS1");

  std::string bytes = test::read_all(file);
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
  test::write_raw(dir.path / "bad.axw", bytes);
  CHECK_THROWS_WITH(train::load_weights(*b, dir.path / "bad.axw"), Catch::Contains("checksum"));
  test::write_raw(dir.path / "short.axw", test::read_all(file).substr(0, 100));
  CHECK_THROWS_AS(train::load_weights(*b, dir.path / "short.axw"), UsageError);

  auto other = std::make_unique<Sequential>();
  other->add<Flatten>();
  other->add<Dense>(10);
  other->build({28, 28, 1}, test::test_cpu(), 1);
  CHECK_THROWS_WITH(train::load_weights(*other, file), Catch::Contains("holds 10 tensors, the model has 2"));
  CHECK_THROWS_AS(train::save_weights(*a, dir.path / "no-such-folder" / "w.axw"), UsageError);
}

TEST_CASE("model: no device allocation after the first step of a batch size", "[model][memory]") {
  auto m = cnn(40);
  Device& d = test::test_cpu();
  const data::ImageSet set = test::synthetic_set(96, 7);
  m->train_step(batch_of(set, 0, 32));
  m->train_step(batch_of(set, 32, 16));  // a second size: its own buffers, once
  const axon_memory_info before = d.memory_info();
  // The CPU plugin reports its memory; a device that stopped would fail here.
  REQUIRE(before.struct_size != 0);
  REQUIRE(before.peak_in_use != 0);
  for (int i = 0; i < 10; ++i) {
    m->train_step(batch_of(set, 32 + (i % 2) * 32, 32));
    m->train_step(batch_of(set, 80, 16));
  }
  m->metrics().read();
  const axon_memory_info after = d.memory_info();
  CHECK(after.in_use == before.in_use);
  CHECK(after.peak_in_use == before.peak_in_use);
}
