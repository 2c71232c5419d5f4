// The FLOPs the profiler counts (op_cost.hpp) over one training step of a
// whole model, against Model::training_flops_per_sample. That figure counts
// the layers' convolutions, products and batch normalizations, forward and
// backward; over a step with the separate ops, the FLOPs of exactly those
// ops are it times the batch, and the other ops (bias, activations, pooling,
// the loss) come on top. With the fused ops the step counts the same FLOPs:
// a fused op counts its parts.
#include "train_test_util.hpp"

#include <axon/io/read_file.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/model.hpp>
#include <axon/nn/random.hpp>
#include <axon/profile.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace axon;
using namespace axon::nn;

namespace {

// The ops behind the layers Model::training_flops_per_sample counts.
const std::set<std::string> kLayerCounted = {"Conv2D",
                                             "Conv2DBackpropInput",
                                             "Conv2DBackpropFilter",
                                             "DepthwiseConv2dNative",
                                             "DepthwiseConv2dNativeBackpropInput",
                                             "DepthwiseConv2dNativeBackpropFilter",
                                             "MatMul",
                                             "FusedBatchNormV3",
                                             "FusedBatchNormGradV3"};

struct StepFlops {
  int64_t per_sample = 0;     // training_flops_per_sample
  int64_t layer_counted = 0;  // the FLOPs of the ops in kLayerCounted
  int64_t total = 0;          // of every op
  int64_t bytes = 0;
  std::set<std::string> ops;
};

// One forward and backward pass (compute_gradients) of tests/data/`file` on
// the CPU device, a batch of `n` images, profiled.
StepFlops step_flops(const std::string& file, bool fused, int n) {
  Device* cpu = test::test_runtime().find_device("cpu:0");
  REQUIRE(cpu != nullptr);
  KerasModel k = model_from_keras_json(
      io::read_regular_file(std::string(AXON_TEST_DATA_DIR) + "/" + file, 1 << 20, "model"), file);
  Model& model = *k.model;
  model.build(k.input_shape, *cpu, 3);
  model.compile();
  for (Layer* l : model.layers()) l->set_fused_ops(fused);
  Rng rng(4);
  data::HostBatch batch;
  batch.size = n;
  for (int i = 0; i < n * 784; ++i) batch.images.push_back(static_cast<uint8_t>(rng.below(256)));
  for (int i = 0; i < n; ++i) batch.labels.push_back(static_cast<uint8_t>(i % 10));
  const bool profiling = op_profiling();
  set_op_profiling(true);
  reset_op_times();
  model.compute_gradients(batch);
  set_op_profiling(profiling);
  StepFlops s;
  s.per_sample = model.training_flops_per_sample();
  for (const OpTime& t : op_times()) {
    if (kLayerCounted.count(t.op) != 0) s.layer_counted += t.flops;
    s.total += t.flops;
    s.bytes += t.bytes;
    s.ops.insert(t.op);
  }
  return s;
}

}  // namespace

TEST_CASE("op costs over a training step: the guide's CNN", "[op_cost]") {
  const StepFlops separate = step_flops("keras_guide_cnn.json", false, 8);
  CHECK(separate.per_sample == 16376064);  // the 16.4 MFLOP of the trainer's CNN, the same layers
  CHECK(separate.layer_counted == separate.per_sample * 8);
  CHECK(separate.total > separate.layer_counted);
  CHECK(separate.ops.count("_FusedConv2DMaxPool") == 0);
  const StepFlops fused = step_flops("keras_guide_cnn.json", true, 8);
  CHECK(fused.ops.count("_FusedConv2DMaxPool") == 1);  // the fused path did run
  CHECK(fused.total == separate.total);
  CHECK(fused.bytes < separate.bytes);  // what fusion is for: the intermediates stay inside the op
}

TEST_CASE("op costs over a training step: the ResNet, with batch normalization", "[op_cost]") {
  const StepFlops separate = step_flops("keras_resnet.json", false, 6);
  CHECK(separate.ops.count("FusedBatchNormGradV3") == 1);
  CHECK(separate.layer_counted == separate.per_sample * 6);
  const StepFlops fused = step_flops("keras_resnet.json", true, 6);
  CHECK(fused.ops.count("_FusedBatchNormGradEx") == 1);
  CHECK(fused.total == separate.total);
}
