// DeviceMetrics counts Keras' accuracy (argmax == label, a tie for the
// largest logit going to the lower index), not InTopK's (where a tie counts):
// the training accuracy axon prints is the one Keras prints.
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/metrics.hpp>

#include <catch2/catch.hpp>

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
