// DeviceMetrics counts Keras' accuracy (argmax == label, a tie for the
// largest logit going to the lower index), not InTopK's (where a tie counts):
// the training accuracy axon prints is the one Keras prints.
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/metrics.hpp>

#include <catch2/catch.hpp>

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
