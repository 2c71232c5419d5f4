// Sequential and the trainer's CNN on the CPU device: architecture figures,
// seeded initialisation, Adam's update, metrics against a host computation,
// learning on a synthetic set, bit-identical reruns, weights round trip.
#include "synthetic.hpp"
#include "train_test_util.hpp"

#include <axon/error.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/model.hpp>
#include <axon/train/weights.hpp>

#include <catch2/catch.hpp>

#include <cmath>

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
