// Conv2D and Dense take the fused ops (_FusedConv2D, _FusedMatMul,
// _FusedReluGradBiasAddGrad) where the device has them, and the fusion pass
// joins Conv2D + MaxPooling2D and BatchNormalization + ReLU. The fused and the
// separate-op paths (Layer::set_fused_ops(false)) must agree: bit for bit on
// one device (the CPU plugin's fused kernels round exactly like its separate
// ones; the reference composes its own), and within 1e-5 * (1 + |value|)
// between the CPU device's fused path and the reference device's separate
// ops (float sums in different orders; observed ~1e-7).
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/io/read_file.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/keras_json.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/model.hpp>
#include <axon/profile.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>

using namespace axon;
using namespace axon::nn;

namespace {

// Forward output, dx, then every parameter gradient, as host vectors.
std::vector<std::vector<float>> run_layer(Device& dev, Layer& layer, const Shape& in, int64_t n, bool fused) {
  DeviceScope scope(dev);
  Rng rng(11);  // same weights, input and dy for every run
  layer.set_fused_ops(fused);
  layer.build(in, dev, rng);
  layer.set_training(true);
  Shape xs{n};
  xs.insert(xs.end(), in.begin(), in.end());
  std::vector<float> xv(static_cast<size_t>(numel(xs)));
  for (float& v : xv) v = rng.uniform(-1, 1);
  Tensor x = make_tensor(dev, xs, xv);
  // Non-zero biases, so a dropped bias would show.
  for (Parameter* p : layer.parameters())
    if (p->value.rank() == 1) {
      std::vector<float> b(static_cast<size_t>(p->value.numel()));
      for (float& v : b) v = rng.uniform(-0.5, 0.5);
      p->value.copy_from_host(b.data(), b.size() * sizeof(float));
    }
  std::vector<std::vector<float>> out;
  const Tensor y = layer.forward(x);
  out.push_back(y.to_vector<float>());
  std::vector<float> r(static_cast<size_t>(y.numel()));
  for (float& v : r) v = rng.uniform(-1, 1);
  Tensor dy = make_tensor(dev, y.shape(), r);
  out.push_back(layer.backward(dy, true).to_vector<float>());
  for (Parameter* p : layer.parameters()) out.push_back(p->grad.to_vector<float>());
  return out;
}

void check_close(const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& want, double rel) {
  REQUIRE(got.size() == want.size());
  for (size_t t = 0; t < got.size(); ++t) {
    REQUIRE(got[t].size() == want[t].size());
    for (size_t i = 0; i < got[t].size(); ++i) {
      const double tol = rel * (1.0 + std::fabs(want[t][i]));
      if (std::fabs(double(got[t][i]) - want[t][i]) > tol || std::isnan(got[t][i])) {
        FAIL("output " << t << " [" << i << "]: " << got[t][i] << " vs " << want[t][i] << " (allowed " << tol << ")");
      }
    }
  }
}

using Factory = std::function<std::unique_ptr<Layer>()>;

struct Case {
  const char* what;
  Factory make;
  Shape in;
  int64_t n;
};

std::vector<Case> cases() {
  return {
      {"Conv2D relu", [] { return std::make_unique<Conv2D>(32, 3, Activation::relu); }, {12, 11, 3}, 3},
      {"Conv2D linear", [] { return std::make_unique<Conv2D>(5, 3, Activation::linear); }, {7, 6, 4}, 2},
      {"Conv2D relu stride 2 SAME",
       [] { return std::make_unique<Conv2D>(7, 3, Activation::relu, 2, AXON_PADDING_SAME); }, {9, 8, 6}, 1},
      {"Conv2D relu K=576", [] { return std::make_unique<Conv2D>(64, 3, Activation::relu); }, {5, 5, 64}, 4},
      {"Dense relu", [] { return std::make_unique<Dense>(64, Activation::relu); }, {576}, 5},
      {"Dense linear", [] { return std::make_unique<Dense>(10); }, {33}, 3},
  };
}

}  // namespace

TEST_CASE("fused and separate-op layer paths agree on each device", "[layers][fused]") {
  Runtime& rt = test::test_runtime();
  for (const char* name : {"cpu:0", "ref:0"}) {
    Device* dev = rt.find_device(name);
    INFO(name << ": the build tree's CPU and reference plugins must both be there");
    REQUIRE(dev != nullptr);
    for (const char* op : {"_FusedConv2D", "_FusedMatMul", "_FusedReluGradBiasAddGrad"}) {
      INFO(name << " " << op);
      CHECK(dev->has_kernel(op, AXON_FLOAT32));  // else this test would compare the separate path with itself
    }
    for (const Case& c : cases()) {
      INFO(name << ": " << c.what);
      auto fused = c.make(), separate = c.make();
      const auto a = run_layer(*dev, *fused, c.in, c.n, true);
      const auto b = run_layer(*dev, *separate, c.in, c.n, false);
      check_close(a, b, 0.0);  // bit-identical
    }
  }
}

TEST_CASE("the CPU's fused layers match the reference's separate ops", "[layers][fused]") {
  Runtime& rt = test::test_runtime();
  Device* cpu = rt.find_device("cpu:0");
  Device* ref = rt.find_device("ref:0");
  REQUIRE(cpu != nullptr);
  REQUIRE(ref != nullptr);  // the superbuild always builds the reference plugin
  for (const Case& c : cases()) {
    INFO(c.what);
    auto fused = c.make(), separate = c.make();
    const auto a = run_layer(*cpu, *fused, c.in, c.n, true);
    const auto b = run_layer(*ref, *separate, c.in, c.n, false);
    check_close(a, b, 1e-5);
  }
}

namespace {

// One compute_gradients of a built and compiled model with its layers'
// fused ops on or off, on random images (a seeded batch, one per label):
// the loss per sample, every parameter's gradient (the value of one that is
// not trained: the moving statistics), and how often each op ran.
struct Step {
  std::vector<std::vector<float>> values;
  std::map<std::string, int64_t> calls;
  int64_t calls_of(std::initializer_list<const char*> ops) const {
    int64_t n = 0;
    for (const char* op : ops)
      if (auto it = calls.find(op); it != calls.end()) n += it->second;
    return n;
  }
};

Step run_step(Model& model, bool fused, uint64_t seed, int64_t pixels, const std::vector<int32_t>& labels) {
  for (Layer* l : model.layers()) l->set_fused_ops(fused);
  Rng rng(seed);
  data::HostBatch batch;
  batch.size = static_cast<int64_t>(labels.size());
  for (int64_t i = 0; i < batch.size * pixels; ++i) batch.images.push_back(static_cast<uint8_t>(rng.below(256)));
  batch.labels = labels;
  const bool profiling = op_profiling();
  set_op_profiling(true);
  reset_op_times();
  model.compute_gradients(batch);
  Step s;
  for (const OpTime& t : op_times()) s.calls[t.op] += t.calls;
  set_op_profiling(profiling);
  s.values.push_back(model.per_sample_loss(batch.size).to_vector<float>());
  for (Parameter* p : model.parameters()) s.values.push_back((p->trainable ? p->grad : p->value).to_vector<float>());
  return s;
}

// The trainer's CNN on `dev`, the same weights and batch for every call:
// five images, an odd count, so no chunk boundary lines up by luck.
Step cnn_step(Device& dev, bool fused) {
  auto model = make_cnn(10);
  model->build({28, 28, 1}, dev, 5);
  model->compile();
  return run_step(*model, fused, 6, 784, {1, 0, 9, 3, 3});
}

// A model's step on the CPU with its fused ops and without, and on the
// reference device without; the CPU's two must agree bit for bit (its fused
// kernels round exactly like its separate ones), the reference within 1e-5
// (1 + |value|).
struct Paths {
  Step fused, separate, reference;
};
Paths three_paths(Step (*step)(Device&, bool)) {
  Runtime& rt = test::test_runtime();
  Device* cpu = rt.find_device("cpu:0");
  Device* ref = rt.find_device("ref:0");
  REQUIRE(cpu != nullptr);
  REQUIRE(ref != nullptr);
  Paths p{step(*cpu, true), step(*cpu, false), step(*ref, false)};
  INFO("CPU fused vs CPU separate ops (loss, gradients, moving statistics)");
  check_close(p.fused.values, p.separate.values, 0.0);
  INFO("CPU fused vs reference separate ops");
  check_close(p.fused.values, p.reference.values, 1e-5);
  return p;
}

}  // namespace

// A model runs each Conv2D + MaxPooling2D pair as _FusedConv2DMaxPool /
// _FusedConv2DMaxPoolGrad where the device has them. The CPU plugin's pair
// rounds exactly like its separate ops, so fusion never changes a training
// run there; the reference device's separate ops agree within 1e-5.
TEST_CASE("the CNN's fused conv+pool pairs match the separate ops", "[layers][fused][pool]") {
  const Paths p = three_paths(cnn_step);
  CHECK(p.fused.calls_of({"_FusedConv2DMaxPool", "_FusedConv2DMaxPoolGrad"}) == 4);  // two pairs, forward and backward
  CHECK(p.separate.calls_of({"_FusedConv2DMaxPool", "_FusedConv2DMaxPoolGrad"}) == 0);
}

namespace {

// tests/data/keras_resnet.json on `dev`, the same weights and batch for every call.
Step resnet_step(Device& dev, bool fused) {
  KerasModel k = model_from_keras_json(
      io::read_regular_file(std::string(AXON_TEST_DATA_DIR) + "/keras_resnet.json", 1 << 20, "model"), "resnet");
  k.model->build(k.input_shape, dev, 5);
  k.model->compile();
  return run_step(*k.model, fused, 7, 784, {1, 0, 9, 3, 3, 7});
}

}  // namespace

// The fusion pass runs each BatchNormalization whose output only a ReLU
// reads as _FusedBatchNormEx / _FusedBatchNormGradEx (four pairs in the
// ResNet), and each whose output only an Add reads, the sum only a ReLU, as
// _FusedBatchNormAddEx / _FusedBatchNormAddGradEx (three residual block
// ends: two with an identity shortcut, one with a projection). The three
// tensors two layers read (each block's input) get their gradient summed by
// _Conv2DBackpropInputAccumulate instead of AddN. The CPU plugin's fused
// ops round exactly like its separate ones, so fusion never changes a
// training run there; the reference device's separate ops agree within 1e-5
// (1 + |value|).
TEST_CASE("the ResNet's fused batch normalization + relu pairs match the separate ops", "[layers][fused]") {
  const Paths p = three_paths(resnet_step);
  const std::initializer_list<const char*> pairs = {"_FusedBatchNormEx", "_FusedBatchNormGradEx"},
                                           ends = {"_FusedBatchNormAddEx", "_FusedBatchNormAddGradEx"},
                                           accumulate = {"_Conv2DBackpropInputAccumulate"};
  CHECK(p.fused.calls_of(pairs) == 8);  // four pairs, forward and backward
  CHECK(p.fused.calls_of(ends) == 6);   // three block ends
  CHECK(p.fused.calls_of(accumulate) == 3);
  CHECK(p.separate.calls_of(pairs) + p.separate.calls_of(ends) + p.separate.calls_of(accumulate) == 0);
  CHECK(p.fused.calls_of({"AddN"}) == 1);  // the step's metric sums: no gradient is summed by AddN
}

namespace {

// A model whose tensors two layers read: a = conv(input); b = conv(a), of
// 16 channels and no activation (Winograd reads its dy while writing its
// input gradient); c = Add(a, b), so a's gradient is the sum of b's input
// gradient and the Add's, which hands one dy to both its inputs: b's dy
// is that sum so far. d = conv(c), 1x1 at stride 2, and e = conv(c), 3x3 at
// stride 2, summed by an Add, so c's gradient is the sum of two
// convolutions' input gradients, neither shared: e's backward runs first,
// and d's adds only at the pixels its taps reach.
Step shared_readers_step(Device& dev, bool fused) {
  Model model("readers");
  auto conv = [](int filters, int kernel, int stride, const char* name, Activation act = Activation::relu) {
    return std::make_unique<Conv2D>(filters, Size2(kernel), act, Size2(stride), AXON_PADDING_SAME, name);
  };
  const int a = model.add_node(conv(16, 3, 1, "a"), {kModelInput});
  const int b = model.add_node(conv(16, 3, 1, "b", Activation::linear), {a});
  const int c = model.add_node(std::make_unique<Merge>(Merge::Kind::add, "c"), {a, b});
  const int d = model.add_node(conv(6, 1, 2, "d"), {c});
  const int e = model.add_node(conv(6, 3, 2, "e"), {c});
  const int f = model.add_node(std::make_unique<Merge>(Merge::Kind::add, "f"), {d, e});
  const int g = model.add_node(std::make_unique<Flatten>("g"), {f});
  model.add_node(std::make_unique<Dense>(10, Activation::linear, "h"), {g});
  model.build({9, 9, 1}, dev, 3);
  model.compile();
  return run_step(model, fused, 5, 81, {2, 7, 0, 9});
}

}  // namespace

// A gradient sum goes to the next reader's backward to add into only where
// no other tensor shares it: c's sum (e's input gradient) takes d's, while
// a's (the Add's dy, which is also b's dy) is summed by AddN. The CPU gives
// the separate ops' bits either way; the reference agrees within 1e-5.
TEST_CASE("a convolution adds its input gradient into a sum only where nothing shares it", "[layers][fused]") {
  const Paths p = three_paths(shared_readers_step);
  CHECK(p.fused.calls_of({"_Conv2DBackpropInputAccumulate"}) == 1);
  CHECK(p.separate.calls_of({"_Conv2DBackpropInputAccumulate"}) == 0);
}

namespace {

// A batch normalization whose Add broadcasts its other term (a [1, 1, C]
// gate: global average pooling with keepdims) and a ReLU after them.
Step broadcast_add_step(Device& dev, bool fused) {
  Model model("broadcast");
  const int a = model.add_node(
      std::make_unique<Conv2D>(8, Size2(3), Activation::linear, Size2(1), AXON_PADDING_SAME, "a"), {kModelInput});
  const int g = model.add_node(std::make_unique<GlobalPooling2D>(false, true, "g"), {a});
  const int b = model.add_node(std::make_unique<BatchNormalization>(0.9, 1e-3, true, true, "b"), {a});
  const int c = model.add_node(std::make_unique<Merge>(Merge::Kind::add, "c"), {b, g});
  const int r = model.add_node(std::make_unique<ReLU>("r"), {c});
  const int f = model.add_node(std::make_unique<Flatten>("f"), {r});
  model.add_node(std::make_unique<Dense>(10, Activation::linear, "h"), {f});
  model.build({6, 6, 1}, dev, 3);
  model.compile();
  return run_step(model, fused, 7, 36, {3, 1, 8});
}

}  // namespace

// The fused batch normalization + Add + ReLU adds tensors of one shape: with
// a broadcast term the three layers run apart, the term repeated by ConcatV2
// (along the rows, then the columns) and its gradient summed by ReduceSum.
TEST_CASE("a broadcasting Add after a batch normalization is not fused", "[layers][fused]") {
  const Paths p = three_paths(broadcast_add_step);
  CHECK(p.fused.calls_of({"_FusedBatchNormAddEx", "_FusedBatchNormAddGradEx"}) == 0);
  CHECK(p.fused.calls_of({"ConcatV2"}) == 2);
  CHECK(p.fused.calls_of({"ReduceSum"}) == 1);
}

// The plan runs the layers that read one tensor back to back, the fewest
// forward FLOPs first: the ResNet's 1x1 stride-2 projections before their
// blocks' 3x3 stride-2 convolutions (which the JSON lists first), each pair
// adjacent; everything else in the JSON's order.
TEST_CASE("the plan runs the readers of one tensor together and the cheapest first", "[layers][fused]") {
  Runtime& rt = test::test_runtime();
  Device* cpu = rt.find_device("cpu:0");
  REQUIRE(cpu != nullptr);
  KerasModel k = model_from_keras_json(
      io::read_regular_file(std::string(AXON_TEST_DATA_DIR) + "/keras_resnet.json", 1 << 20, "model"), "resnet");
  k.model->build(k.input_shape, *cpu, 5);
  std::vector<std::string> order;
  for (const PlanStep& s : k.model->replica(0).plan()) order.push_back(s.layer->name());
  auto at = [&](const char* name) { return std::find(order.begin(), order.end(), name) - order.begin(); };
  CHECK(at("conv2d_5") + 1 == at("conv2d_3"));
  CHECK(at("conv2d_8") + 1 == at("conv2d_6"));
  // The JSON's order where no layer moved: conv2d_3's block follows it.
  CHECK(at("conv2d_3") + 1 == at("batch_normalization_3"));
  CHECK(at("batch_normalization_3") + 1 == at("conv2d_4"));
  // Each step reads only what a step before it wrote.
  const std::vector<PlanStep>& plan = k.model->replica(0).plan();
  std::vector<size_t> written_by(k.model->replica(0).layers().size(), plan.size());
  for (size_t i = 0; i < plan.size(); ++i)
    for (int node = plan[i].first; node <= plan[i].output; ++node) written_by.at(static_cast<size_t>(node)) = i;
  for (size_t i = 0; i < plan.size(); ++i)
    for (int j : plan[i].inputs)
      if (j >= 0) CHECK(written_by.at(static_cast<size_t>(j)) < i);
}
