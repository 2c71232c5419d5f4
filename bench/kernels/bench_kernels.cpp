// Kernel benchmarks of the CPU plugin through the C ABI, at the exact shapes
// of the guide's CNN with batch 64:
//   Conv2D 3x3x1->32 VALID on 28x28, MaxPool 2x2, Conv2D 3x3x32->64 on 13x13,
//   MaxPool 2x2, Conv2D 3x3x64->64 on 5x5, Flatten 576, Dense 64 relu, Dense 10.
// Each op reports GFLOP/s (where it does arithmetic) and the share of the
// machine's large-sgemm rate; BM_TrainStep runs every kernel of one training
// step (forward, backward, Adam) and reports the epoch time that implies for
// 60000 samples. Plugin threads: AXON_TEST_THREADS (default: all CPUs).
#include "bench_device.hpp"
#include "sgemm_rate.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace axon::test;

namespace {

constexpr int64_t kBatch = 64;
constexpr double kSamplesPerEpoch = 60000;

struct Env : BenchDevice {
  Env() : BenchDevice(42) {}
  double sgemm = 0;  // GFLOP/s, measured once

  // A device tensor filled with uniform values in [-scale, scale].
  DeviceTensor* f32(std::vector<int64_t> dims, float scale = 1.0f) { return uniform(std::move(dims), -scale, scale); }
  DeviceTensor* labels(int64_t n, int classes) {
    keep.push_back(std::make_unique<DeviceTensor>(dev, AXON_INT32, std::vector<int64_t>{n}));
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<int32_t>(rng() % static_cast<unsigned>(classes));
    keep.back()->upload(v);
    return keep.back().get();
  }
  // A 2x2 pool's argmax (_FusedConv2DMaxPool): taps 0-3, a quarter of them
  // AXON_ARGMAX_NONE (ReLU stopped the gradient).
  DeviceTensor* argmax(std::vector<int64_t> dims) {
    keep.push_back(std::make_unique<DeviceTensor>(dev, AXON_UINT8, std::move(dims)));
    std::vector<uint8_t> v(static_cast<size_t>(keep.back()->numel()));
    for (auto& x : v) x = rng() % 4 == 0 ? uint8_t{AXON_ARGMAX_NONE} : static_cast<uint8_t>(rng() % 4);
    keep.back()->upload(v);
    return keep.back().get();
  }
  DeviceTensor* images(std::vector<int64_t> dims) {
    keep.push_back(std::make_unique<DeviceTensor>(dev, AXON_UINT8, std::move(dims)));
    std::vector<uint8_t> v(static_cast<size_t>(keep.back()->numel()));
    for (auto& x : v) x = static_cast<uint8_t>(rng());
    keep.back()->upload(v);
    return keep.back().get();
  }
};

Env& env() {
  static Env e;
  return e;
}

const axon_conv2d_attrs kValid{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
const axon_pool_attrs kPool2{sizeof(axon_pool_attrs), 2, 2, 2, 2, AXON_PADDING_VALID};
const axon_matmul_attrs kNN{sizeof(axon_matmul_attrs), 0, 0}, kTN{sizeof(axon_matmul_attrs), 1, 0},
    kNT{sizeof(axon_matmul_attrs), 0, 1};

void report(benchmark::State& state, double flops) {
  state.SetItemsProcessed(state.iterations() * kBatch);
  if (flops <= 0) return;
  state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  // Share of the large-sgemm rate: GFLOP/s over sgemm GFLOP/s, per iteration.
  state.counters["of_sgemm"] = benchmark::Counter(flops / 1e9 / env().sgemm, benchmark::Counter::kIsIterationInvariantRate);
}

// ------------------------------------------------------------------ single ops

enum class Kind { f32, labels, argmax };
struct Shape {
  std::vector<int64_t> dims;
  Kind kind = Kind::f32;
};

void op_bench(benchmark::State& state, const char* op, std::vector<Shape> ins, std::vector<Shape> outs, const void* attrs,
              double flops) {
  Env& e = env();
  std::vector<const DeviceTensor*> in;
  std::vector<DeviceTensor*> out;
  auto make = [&](const Shape& s) {
    return s.kind == Kind::labels ? e.labels(s.dims[0], 10) : s.kind == Kind::argmax ? e.argmax(s.dims) : e.f32(s.dims);
  };
  for (auto& s : ins) in.push_back(make(s));
  for (auto& s : outs) out.push_back(make(s));
  for (auto _ : state) run_op(e.dev, op, in, out, attrs);
  report(state, flops);
}

double conv_flops(int64_t oh, int64_t ow, int64_t k, int64_t oc) { return 2.0 * kBatch * oh * ow * k * oc; }

void register_ops() {
  auto add = [](const std::string& name, const char* op, std::vector<Shape> ins, std::vector<Shape> outs, const void* attrs,
                double flops) {
    benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { op_bench(s, op, ins, outs, attrs, flops); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };
  const int64_t n = kBatch;
  // conv1: 28x28x1 -> 26x26x32
  add("Conv2D/conv1", "Conv2D", {{{n, 28, 28, 1}}, {{3, 3, 1, 32}}}, {{{n, 26, 26, 32}}}, &kValid, conv_flops(26, 26, 9, 32));
  add("Conv2DBackpropFilter/conv1", "Conv2DBackpropFilter", {{{n, 28, 28, 1}}, {{n, 26, 26, 32}}}, {{{3, 3, 1, 32}}}, &kValid,
      conv_flops(26, 26, 9, 32));
  add("Conv2DBackpropInput/conv1", "Conv2DBackpropInput", {{{n, 26, 26, 32}}, {{3, 3, 1, 32}}}, {{{n, 28, 28, 1}}}, &kValid,
      conv_flops(26, 26, 9, 32));
  // conv2: 13x13x32 -> 11x11x64 (the dominant layer)
  add("Conv2D/conv2", "Conv2D", {{{n, 13, 13, 32}}, {{3, 3, 32, 64}}}, {{{n, 11, 11, 64}}}, &kValid, conv_flops(11, 11, 288, 64));
  add("Conv2DBackpropFilter/conv2", "Conv2DBackpropFilter", {{{n, 13, 13, 32}}, {{n, 11, 11, 64}}}, {{{3, 3, 32, 64}}}, &kValid,
      conv_flops(11, 11, 288, 64));
  add("Conv2DBackpropInput/conv2", "Conv2DBackpropInput", {{{n, 11, 11, 64}}, {{3, 3, 32, 64}}}, {{{n, 13, 13, 32}}}, &kValid,
      conv_flops(11, 11, 288, 64));
  // conv3: 5x5x64 -> 3x3x64
  add("Conv2D/conv3", "Conv2D", {{{n, 5, 5, 64}}, {{3, 3, 64, 64}}}, {{{n, 3, 3, 64}}}, &kValid, conv_flops(3, 3, 576, 64));
  add("Conv2DBackpropFilter/conv3", "Conv2DBackpropFilter", {{{n, 5, 5, 64}}, {{n, 3, 3, 64}}}, {{{3, 3, 64, 64}}}, &kValid,
      conv_flops(3, 3, 576, 64));
  add("Conv2DBackpropInput/conv3", "Conv2DBackpropInput", {{{n, 3, 3, 64}}, {{3, 3, 64, 64}}}, {{{n, 5, 5, 64}}}, &kValid,
      conv_flops(3, 3, 576, 64));
  // each conv layer and the pool after it as one op pair (conv1 is the first
  // layer: no input gradient)
  static const axon_fused_conv2d_max_pool_attrs conv_pool{sizeof(axon_fused_conv2d_max_pool_attrs), kValid,
                                                           AXON_ACTIVATION_RELU, kPool2};
  add("_FusedConv2DMaxPool/conv1", "_FusedConv2DMaxPool", {{{n, 28, 28, 1}}, {{3, 3, 1, 32}}, {{32}}},
      {{{n, 13, 13, 32}}, {{n, 13, 13, 32}, Kind::argmax}}, &conv_pool, conv_flops(26, 26, 9, 32));
  add("_FusedConv2DMaxPoolGrad/conv1", "_FusedConv2DMaxPoolGrad",
      {{{n, 28, 28, 1}}, {{3, 3, 1, 32}}, {{n, 13, 13, 32}}, {{n, 13, 13, 32}, Kind::argmax}}, {{{3, 3, 1, 32}}, {{32}}},
      &conv_pool, conv_flops(26, 26, 9, 32));
  add("_FusedConv2DMaxPool/conv2", "_FusedConv2DMaxPool", {{{n, 13, 13, 32}}, {{3, 3, 32, 64}}, {{64}}},
      {{{n, 5, 5, 64}}, {{n, 5, 5, 64}, Kind::argmax}}, &conv_pool, conv_flops(11, 11, 288, 64));
  add("_FusedConv2DMaxPoolGrad/conv2", "_FusedConv2DMaxPoolGrad",
      {{{n, 13, 13, 32}}, {{3, 3, 32, 64}}, {{n, 5, 5, 64}}, {{n, 5, 5, 64}, Kind::argmax}},
      {{{3, 3, 32, 64}}, {{64}}, {{n, 13, 13, 32}}}, &conv_pool, 2 * conv_flops(11, 11, 288, 64));
  // dense layers
  add("MatMul/dense1", "MatMul", {{{n, 576}}, {{576, 64}}}, {{{n, 64}}}, &kNN, 2.0 * n * 576 * 64);
  add("MatMul/dense1_dW", "MatMul", {{{n, 576}}, {{n, 64}}}, {{{576, 64}}}, &kTN, 2.0 * n * 576 * 64);
  add("MatMul/dense1_dX", "MatMul", {{{n, 64}}, {{576, 64}}}, {{{n, 576}}}, &kNT, 2.0 * n * 576 * 64);
  add("MatMul/dense2", "MatMul", {{{n, 64}}, {{64, 10}}}, {{{n, 10}}}, &kNN, 2.0 * n * 64 * 10);
  add("MatMul/dense2_dX", "MatMul", {{{n, 10}}, {{64, 10}}}, {{{n, 64}}}, &kNT, 2.0 * n * 64 * 10);
  // the Inception cell's Dense(10) over 13x13x24 features: a short inner dimension
  add("MatMul/inception_dense", "MatMul", {{{n, 4056}}, {{4056, 10}}}, {{{n, 10}}}, &kNN, 2.0 * n * 4056 * 10);
  add("MatMul/inception_dense_dW", "MatMul", {{{n, 4056}}, {{n, 10}}}, {{{4056, 10}}}, &kTN, 2.0 * n * 4056 * 10);
  add("MatMul/inception_dense_dX", "MatMul", {{{n, 10}}, {{4056, 10}}}, {{{n, 4056}}}, &kNT, 2.0 * n * 4056 * 10);
  // memory-bound ops at conv1's output, the largest activation
  add("MaxPool/pool1", "MaxPool", {{{n, 26, 26, 32}}}, {{{n, 13, 13, 32}}}, &kPool2, 0);
  add("MaxPoolGrad/pool1", "MaxPoolGrad", {{{n, 26, 26, 32}}, {{n, 13, 13, 32}}, {{n, 13, 13, 32}}}, {{{n, 26, 26, 32}}}, &kPool2, 0);
  add("MaxPool/pool2", "MaxPool", {{{n, 11, 11, 64}}}, {{{n, 5, 5, 64}}}, &kPool2, 0);
  add("MaxPoolGrad/pool2", "MaxPoolGrad", {{{n, 11, 11, 64}}, {{n, 5, 5, 64}}, {{n, 5, 5, 64}}}, {{{n, 11, 11, 64}}}, &kPool2, 0);
  add("Relu/conv1", "Relu", {{{n, 26, 26, 32}}}, {{{n, 26, 26, 32}}}, nullptr, 0);
  add("ReluGrad/conv1", "ReluGrad", {{{n, 26, 26, 32}}, {{n, 26, 26, 32}}}, {{{n, 26, 26, 32}}}, nullptr, 0);
  add("BiasAdd/conv1", "BiasAdd", {{{n, 26, 26, 32}}, {{32}}}, {{{n, 26, 26, 32}}}, nullptr, 0);
  add("BiasAddGrad/conv1", "BiasAddGrad", {{{n, 26, 26, 32}}}, {{{32}}}, nullptr, 0);
  add("SparseSoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", {{{n, 10}}, {{n}, Kind::labels}},
      {{{n}}, {{n, 10}}}, nullptr, 0);
  static const axon_adam_attrs adam{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, 1};
  add("ApplyAdam/dense1", "ApplyAdam", {{{576, 64}}, {{576, 64}}, {{576, 64}}, {{576, 64}}}, {}, &adam, 0);
  // The trainer's one call over all of the CNN's 93,322 parameters, flat.
  add("ApplyAdam/cnn", "ApplyAdam", {{{93322}}, {{93322}}, {{93322}}, {{93322}}}, {}, &adam, 0);
}

// ------------------------------------------------------------------ one training step

// Every kernel of one step of the CNN, laid out as a trainer would call them.
struct Net {
  Env& e = env();
  const int64_t n = kBatch;
  DeviceTensor *img = e.images({n, 28, 28, 1}), *labels = e.labels(n, 10), *x = e.f32({n, 28, 28, 1});
  // parameters (Glorot-like scale) and their Adam state
  DeviceTensor *w1 = e.f32({3, 3, 1, 32}, 0.3f), *b1 = e.f32({32}, 0.0f), *w2 = e.f32({3, 3, 32, 64}, 0.1f),
               *b2 = e.f32({64}, 0.0f), *w3 = e.f32({3, 3, 64, 64}, 0.07f), *b3 = e.f32({64}, 0.0f),
               *wd1 = e.f32({576, 64}, 0.1f), *bd1 = e.f32({64}, 0.0f), *wd2 = e.f32({64, 10}, 0.3f), *bd2 = e.f32({10}, 0.0f);
  std::vector<DeviceTensor*> params{w1, b1, w2, b2, w3, b3, wd1, bd1, wd2, bd2};
  std::vector<DeviceTensor*> grads, m, v;
  // activations
  DeviceTensor *a1 = e.f32({n, 26, 26, 32}), *p1 = e.f32({n, 13, 13, 32}), *a2 = e.f32({n, 11, 11, 64}),
               *p2 = e.f32({n, 5, 5, 64}), *a3 = e.f32({n, 3, 3, 64}), *h = e.f32({n, 64}), *logits = e.f32({n, 10}),
               *loss = e.f32({n}), *dlogits = e.f32({n, 10}), *total = e.f32({1}), *correct = e.f32({n});
  // gradients of activations
  DeviceTensor *dh = e.f32({n, 64}), *da3 = e.f32({n, 576}), *dp2 = e.f32({n, 5, 5, 64}), *da2 = e.f32({n, 11, 11, 64}),
               *dp1 = e.f32({n, 13, 13, 32}), *da1 = e.f32({n, 26, 26, 32});
  int64_t step = 0;

  Net() {
    for (auto* p : params) {
      std::vector<int64_t> d(p->t.dims, p->t.dims + p->t.rank);
      grads.push_back(e.f32(d));
      m.push_back(e.f32(d, 0.0f));
      v.push_back(e.f32(d, 0.0f));
    }
  }

  // The flatten between conv3 and dense1 is a reshape: same memory, 2-D view.
  DeviceTensor& flat(DeviceTensor* t, DeviceTensor& view) {
    view.t = t->t;
    view.t.rank = 2;
    view.t.dims[0] = n;
    view.t.dims[1] = 576;
    return view;
  }

  void run() {
    TestDevice& d = e.dev;
    run_op(d, "NormalizeImage", {img}, {x});
    // forward
    run_op(d, "Conv2D", {x, w1}, {a1}, &kValid);
    run_op(d, "BiasAdd", {a1, b1}, {a1});
    run_op(d, "Relu", {a1}, {a1});
    run_op(d, "MaxPool", {a1}, {p1}, &kPool2);
    run_op(d, "Conv2D", {p1, w2}, {a2}, &kValid);
    run_op(d, "BiasAdd", {a2, b2}, {a2});
    run_op(d, "Relu", {a2}, {a2});
    run_op(d, "MaxPool", {a2}, {p2}, &kPool2);
    run_op(d, "Conv2D", {p2, w3}, {a3}, &kValid);
    run_op(d, "BiasAdd", {a3, b3}, {a3});
    run_op(d, "Relu", {a3}, {a3});
    DeviceTensor& a3f = *flat_view;
    flat(a3, a3f);
    run_op(d, "MatMul", {&a3f, wd1}, {h}, &kNN);
    run_op(d, "BiasAdd", {h, bd1}, {h});
    run_op(d, "Relu", {h}, {h});
    run_op(d, "MatMul", {h, wd2}, {logits}, &kNN);
    run_op(d, "BiasAdd", {logits, bd2}, {logits});
    run_op(d, "SparseSoftmaxCrossEntropyWithLogits", {logits, labels}, {loss, dlogits});
    run_op(d, "Sum", {loss}, {total});
    run_op(d, "_SparseCategoricalAccuracy", {logits, labels}, {correct});
    axon_scale_attrs mean{sizeof(axon_scale_attrs), 1.0f / static_cast<float>(n)};
    run_op(d, "Scale", {dlogits}, {dlogits}, &mean);
    // backward
    run_op(d, "MatMul", {h, dlogits}, {grads[8]}, &kTN);
    run_op(d, "BiasAddGrad", {dlogits}, {grads[9]});
    run_op(d, "MatMul", {dlogits, wd2}, {dh}, &kNT);
    run_op(d, "ReluGrad", {dh, h}, {dh});
    run_op(d, "MatMul", {&a3f, dh}, {grads[6]}, &kTN);
    run_op(d, "BiasAddGrad", {dh}, {grads[7]});
    run_op(d, "MatMul", {dh, wd1}, {da3}, &kNT);
    DeviceTensor& dy3 = *flat_view2;
    dy3.t = da3->t;
    dy3.t.rank = 4;
    dy3.t.dims[0] = n, dy3.t.dims[1] = 3, dy3.t.dims[2] = 3, dy3.t.dims[3] = 64;
    run_op(d, "ReluGrad", {&dy3, a3}, {&dy3});
    run_op(d, "Conv2DBackpropFilter", {p2, &dy3}, {grads[4]}, &kValid);
    run_op(d, "BiasAddGrad", {&dy3}, {grads[5]});
    run_op(d, "Conv2DBackpropInput", {&dy3, w3}, {dp2}, &kValid);
    run_op(d, "MaxPoolGrad", {a2, p2, dp2}, {da2}, &kPool2);
    run_op(d, "ReluGrad", {da2, a2}, {da2});
    run_op(d, "Conv2DBackpropFilter", {p1, da2}, {grads[2]}, &kValid);
    run_op(d, "BiasAddGrad", {da2}, {grads[3]});
    run_op(d, "Conv2DBackpropInput", {da2, w2}, {dp1}, &kValid);
    run_op(d, "MaxPoolGrad", {a1, p1, dp1}, {da1}, &kPool2);
    run_op(d, "ReluGrad", {da1, a1}, {da1});
    run_op(d, "Conv2DBackpropFilter", {x, da1}, {grads[0]}, &kValid);
    run_op(d, "BiasAddGrad", {da1}, {grads[1]});
    // update
    ++step;
    axon_adam_attrs adam{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, step};
    for (size_t i = 0; i < params.size(); ++i) run_op(d, "ApplyAdam", {params[i], m[i], v[i], grads[i]}, {}, &adam);
  }

  // Views that alias other tensors' memory: never freed through these.
  struct View : DeviceTensor {
    explicit View(TestDevice& dv) : DeviceTensor(dv, AXON_FLOAT32, {0}) {}
    ~View() { t.data = nullptr; }
  };
  std::unique_ptr<View> flat_view = std::make_unique<View>(e.dev), flat_view2 = std::make_unique<View>(e.dev);
};

void BM_TrainStep(benchmark::State& state) {
  static Net net;
  net.run();  // warm-up: scratch buffers grow to size once
  for (auto _ : state) net.run();
  const double flops = 16.4e6 * kBatch;  // the CNN's forward+backward cost per sample
  report(state, flops);
  // Seconds per step times steps per epoch (an inverted per-iteration rate).
  state.counters["epoch_s"] = benchmark::Counter(kBatch / kSamplesPerEpoch, benchmark::Counter::kIsIterationInvariantRate |
                                                                                benchmark::Counter::kInvert);
}

void BM_SgemmLarge(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  double rate = 0;
  for (auto _ : state) rate = axon::bench::sgemm_gflops(n, 0, 0.5);
  state.counters["GFLOPS"] = rate;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  env().sgemm = axon::bench::sgemm_gflops(2048, 0, 1.0);
  std::printf("sgemm_gflops %.1f (2048^3, %d threads; %s)\n", env().sgemm, axon::bench::sgemm_all_cpus(),
              axon::bench::sgemm_library().c_str());
  register_ops();
  benchmark::RegisterBenchmark("TrainStep/batch64", BM_TrainStep)->UseRealTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("SgemmLarge", BM_SgemmLarge)->Arg(2048)->Arg(4096)->Iterations(1)->Unit(benchmark::kSecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
