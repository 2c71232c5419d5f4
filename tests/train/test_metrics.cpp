// DeviceMetrics counts Keras' accuracy (argmax == label, a tie for the
// largest logit going to the lower index), not InTopK's (where a tie counts):
// the training accuracy axon prints is the one Keras prints.
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>

using namespace axon;
using namespace axon::nn;

TEST_CASE("metrics: accuracy is Keras' argmax == label, ties to the lower index", "[metrics]") {
  for (const char* name : {"cpu:0", "ref:0"}) {
    Device* d = test::test_runtime().find_device(name);
    REQUIRE(d != nullptr);
    INFO(d->name());
    DeviceScope scope(*d);
    DeviceMetrics m;
    m.build(*d);
    m.reset();
    // Row 0: tie between 1 and 2, label 2 (InTopK: correct; Keras: wrong).
    // Row 1: the same tie, label 1 (correct either way). Row 2: label 0 below
    // the maximum (wrong either way). Row 3: a clear maximum at the label.
    const std::vector<float> logits{0, 5, 5, 0, 5, 5, 1, 2, 3, 4, 0, 0};
    const std::vector<int32_t> labels{2, 1, 0, 0};
    Tensor l = make_tensor(*d, {4, 3}, logits);
    Tensor lb = Tensor::from_vector<int32_t>(*d, AXON_INT32, {4}, labels);
    Tensor loss = make_tensor(*d, {4}, {1, 1, 1, 1});
    Tensor sums = make_tensor(*d, {2}, {0, 0});
    m.batch_sums(loss, l, lb, sums);
    m.accumulate(sums, 4);
    const MetricValues v = m.read();
    CHECK(v.samples == 4);
    CHECK(v.loss == 1.0);
    CHECK(v.accuracy == 0.5);
  }
}

TEST_CASE("Keras' losses: names, settings, the outputs they fit, Keras' serialisation", "[loss]") {
  CHECK(loss_from_name("CategoricalCrossentropy") == LossKind::categorical_crossentropy);
  CHECK(loss_from_name("binary_crossentropy") == LossKind::binary_crossentropy);
  CHECK(loss_from_name("mse") == LossKind::mean_squared_error);
  CHECK(loss_from_name("huber_loss") == LossKind::huber);
  CHECK_FALSE(loss_from_name("hinge").has_value());

  LossOptions o;
  o.kind = LossKind::categorical_crossentropy;
  o.label_smoothing = 1.5f;
  CHECK_THROWS_WITH(make_loss(o), "categorical_crossentropy: label_smoothing must be in [0, 1], got 1.5");
  o.kind = LossKind::huber;
  o.delta = 0;
  CHECK_THROWS_WITH(make_loss(o), "huber: delta must be a positive number, got 0.0");

  o = LossOptions();
  o.kind = LossKind::binary_crossentropy;
  CHECK_THROWS_WITH(make_loss(o)->check_output(10),
                    "binary_crossentropy does not fit the model's output of 10 units (it needs 1 unit, the "
                    "probability of class 1)");
  CHECK_NOTHROW(make_loss(o)->check_output(1));
  o.kind = LossKind::categorical_crossentropy;
  CHECK_THROWS_WITH(make_loss(o)->check_output(1),
                    "categorical_crossentropy does not fit the model's output of 1 unit (it needs one unit per "
                    "class, 2 or more)");
  o.kind = LossKind::mean_squared_error;
  CHECK_NOTHROW(make_loss(o)->check_output(1));

  // Keras 3.15's serialize_keras_object, as json.dumps writes it (Huber's
  // get_config leaves delta out; axon writes it).
  o = LossOptions();
  o.kind = LossKind::categorical_crossentropy;
  o.from_logits = false;
  o.label_smoothing = 0.1f;
  CHECK(make_loss(o)->keras_json() ==
        R"({"module": "keras.losses", "class_name": "CategoricalCrossentropy", "config": {"name": )"
        R"("categorical_crossentropy", "reduction": "sum_over_batch_size", "from_logits": false, "label_smoothing": )"
        R"(0.1, "axis": -1}, "registered_name": null})");
  CHECK(make_loss(LossOptions())->keras_json() ==
        R"({"module": "keras.losses", "class_name": "SparseCategoricalCrossentropy", "config": {"name": )"
        R"("sparse_categorical_crossentropy", "reduction": "sum_over_batch_size", "from_logits": true, )"
        R"("ignore_class": null}, "registered_name": null})");
  o = LossOptions();
  o.kind = LossKind::huber;
  o.delta = 2;
  CHECK(make_loss(o)->keras_json() ==
        R"({"module": "keras.losses", "class_name": "Huber", "config": {"name": "huber_loss", "reduction": )"
        R"("sum_over_batch_size", "delta": 2.0}, "registered_name": null})");
  CHECK(make_loss(o)->describe() == "--loss huber:delta=2.0");

  // A softmax output gives its logits to a categorical cross-entropy, which
  // Keras would then be given with from_logits=False.
  o = LossOptions();
  o.kind = LossKind::categorical_crossentropy;
  o.label_smoothing = 0.2f;
  std::unique_ptr<Loss> folded = make_loss(o);
  CHECK(folded->keras_call() == "CategoricalCrossentropy(from_logits=True, label_smoothing=0.2)");
  CHECK(folded->bind_output(Activation::softmax, 10));
  CHECK(folded->reads_logits());
  CHECK(folded->keras_call() == "CategoricalCrossentropy(label_smoothing=0.2)");
  o.kind = LossKind::mean_squared_error;
  std::unique_ptr<Loss> mse = make_loss(o);
  CHECK_FALSE(mse->bind_output(Activation::softmax, 10));  // the softmax runs forward and backward
  o.kind = LossKind::binary_crossentropy;
  o.from_logits = false;
  std::unique_ptr<Loss> binary = make_loss(o);
  CHECK(binary->bind_output(Activation::sigmoid, 1));
  CHECK(binary->accuracy(1) == AccuracyKind::binary);
  CHECK(binary->binary_threshold() == 0.0f);  // on the sigmoid's logits
  o.from_logits = true;
  binary = make_loss(o);
  CHECK_FALSE(binary->bind_output(Activation::linear, 1));
  CHECK(binary->binary_threshold() == 0.5f);  // Keras thresholds the logits at 0.5 too
}

namespace {

// Keras' metrics on the host in double: the regression metrics against
// onehot(label), on softmax(logits) where `softmax`; TensorFlow's in_top_k.
double host_metric(const MetricOptions& m, const std::vector<float>& logits, const std::vector<int32_t>& labels,
                   int64_t classes, bool softmax) {
  const auto n = static_cast<int64_t>(labels.size());
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data() + i * classes;
    std::vector<double> p(row, row + classes);
    if (softmax) {
      double mx = p[0], sum = 0;
      for (double x : p) mx = std::max(mx, x);
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (double& x : p) x /= sum;
    }
    if (m.kind == MetricKind::mean_squared_error || m.kind == MetricKind::mean_absolute_error) {
      double s = 0;
      for (int64_t j = 0; j < classes; ++j) {
        const double e = p[static_cast<size_t>(j)] - (j == labels[static_cast<size_t>(i)] ? 1.0 : 0.0);
        s += m.kind == MetricKind::mean_squared_error ? e * e : std::fabs(e);
      }
      total += s / static_cast<double>(classes);
      continue;
    }
    bool finite = true;
    int greater = 0;
    for (int64_t j = 0; j < classes; ++j) {
      finite = finite && std::isfinite(row[j]);
      greater += row[j] > row[labels[static_cast<size_t>(i)]];
    }
    total += finite && greater < m.k ? 1.0 : 0.0;
  }
  return total / static_cast<double>(n);
}

}  // namespace

TEST_CASE("metrics: mse, mae and the top-k accuracies match a host reference", "[metrics]") {
  std::vector<MetricOptions> metrics = {*metric_from_name("mse"), *metric_from_name("mean_absolute_error"),
                                        *metric_from_name("sparse_top_k_categorical_accuracy"),
                                        *metric_from_name("top_k_categorical_accuracy")};
  metrics[2].k = 2;
  metrics[3].k = 1;
  metrics[3].name = "top1";
  // Rows: the label second; a tie for the top (it counts); the label third
  // of five; the label on top.
  const int64_t classes = 5;
  const std::vector<float> logits{0.5f, -1, 2, 0.25f, 3,  1, 2, 2, 0, -3,  4, 3, 2, 1, 0,  1.5f, 0, -0.5f, 2.5f, 1};
  const std::vector<int32_t> labels{2, 1, 2, 3};
  for (const char* name : {"cpu:0", "ref:0"})
    for (bool softmax : {false, true}) {
      Device* d = test::test_runtime().find_device(name);
      REQUIRE(d != nullptr);
      INFO(d->name() << (softmax ? ", softmax left to the loss" : ", linear output"));
      DeviceScope scope(*d);
      DeviceMetrics m;
      m.build(*d);
      m.set_metrics(metrics, softmax ? Activation::softmax : Activation::linear);
      REQUIRE(m.sums_size() == 6);
      m.reset();
      Tensor l = make_tensor(*d, {4, classes}, logits);
      Tensor lb = Tensor::from_vector<int32_t>(*d, AXON_INT32, {4}, labels);
      Tensor loss = make_tensor(*d, {4}, {1, 1, 1, 1});
      Tensor sums = make_tensor(*d, {6}, std::vector<float>(6, 0.0f));
      m.batch_sums(loss, l, lb, sums);
      m.accumulate(sums, 4);
      const MetricValues v = m.read();
      REQUIRE(v.metrics.size() == 4);
      for (size_t i = 0; i < metrics.size(); ++i) {
        INFO(metrics[i].name);
        CHECK(v.metrics[i].first == metrics[i].name);
        // Four float32 per-sample values summed: within 1e-6 relative.
        const double want = host_metric(metrics[i], logits, labels, classes, softmax);
        CHECK(std::fabs(v.metrics[i].second - want) <= 1e-6 * std::max(1.0, std::fabs(want)));
      }
      CHECK(v.metrics[2].second == 0.75);  // row 2 (the label third) is out
      CHECK(v.metrics[3].second == 0.5);   // row 1's tie for the top counts

      // A NaN in a row: not in any top k (TensorFlow's in_top_k).
      std::vector<float> with_nan = logits;
      with_nan[7] = std::nanf("");
      m.reset();
      Tensor ln = make_tensor(*d, {4, classes}, with_nan);
      m.batch_sums(loss, ln, lb, sums);
      m.accumulate(sums, 4);
      CHECK(m.read().metrics[2].second == 0.5);
    }
}

TEST_CASE("metrics: Keras' names, aliases, serialisation and bad lists", "[metrics]") {
  CHECK(metric_from_name("MSE")->kind == MetricKind::mean_squared_error);
  CHECK(metric_from_name("MSE")->name == "MSE");  // Keras logs the name as compiled
  CHECK(metric_from_name("mae")->kind == MetricKind::mean_absolute_error);
  CHECK(metric_from_name("sparse_top_k_categorical_accuracy")->k == 5);
  CHECK_FALSE(metric_from_name("f1_score").has_value());
  CHECK_FALSE(metric_from_name("accuracy").has_value());
  CHECK(is_accuracy_name("acc"));
  CHECK(is_accuracy_name("sparse_categorical_accuracy"));
  CHECK(metric_from_keras_class("SparseTopKCategoricalAccuracy") == MetricKind::sparse_top_k_categorical_accuracy);

  // Keras 3.15's compile_config entries, as json.dumps writes them.
  CHECK(metric_keras_json(*metric_from_name("mse")) == R"("mse")");
  MetricOptions top3 = *metric_from_name("top_k_categorical_accuracy");
  top3.k = 3;
  top3.name = "top3";
  CHECK(metric_keras_json(top3) ==
        R"({"class_name":"TopKCategoricalAccuracy","config":{"dtype":"float32","k":3,"name":"top3"},)"
        R"("module":"keras.metrics","registered_name":null})");

  CHECK_THROWS_WITH(check_metrics({top3, top3}), "the metric top3 is compiled twice");
  MetricOptions bad = top3;
  bad.name = "val_top3";
  CHECK_THROWS_WITH(check_metrics({bad}),
                    "the metric name val_top3 is taken by the logs (loss, accuracy, learning_rate, val_*)");
  bad = top3;
  bad.k = 0;
  CHECK_THROWS_WITH(check_metrics({bad}), "top3: k must be at least 1, got 0");
  CHECK_THROWS_WITH(check_metrics(std::vector<MetricOptions>(9, top3)), "at most 8 metrics besides accuracy, got 9");
}
