// Benchmarks of the CPU plugin's layer kernels (ABI 1.4, 1.5 and 2.3) through the C ABI,
// at the shapes of a small ResNet on 28x28 images at batch 64: stages of
// [64,28,28,16], [64,14,14,32] and [64,7,7,64]. Batch normalization and
// average pooling report GB/s: the bytes of their tensors, each read or
// written once (the least any kernel moves; the forward of batch
// normalization in training reads x twice, its gradient dy and x twice).
// Depthwise convolution reports GFLOP/s, 2 * KH * KW flops per output value;
// the ResNet's own convolutions (tests/data/keras_resnet.json: 3x3 SAME at
// stride 1 and 2, 1x1 stride-2 projections) GFLOP/s of the product.
// Plugin threads: AXON_TEST_THREADS (default: all CPUs). Figures, never verdicts.
#include "bench_device.hpp"

#include <benchmark/benchmark.h>

#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace axon::test;

namespace {

BenchDevice& env() {
  static BenchDevice e(7);
  return e;
}

int64_t numel(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// Runs op on fresh tensors of the given shapes; reports GB/s of `bytes` or
// GFLOP/s of `flops` per call.
void op_bench(benchmark::State& state, const char* op, const std::vector<std::vector<int64_t>>& ins,
              const std::vector<std::vector<int64_t>>& outs, const void* attrs, double bytes, double flops) {
  BenchDevice& e = env();
  std::vector<const DeviceTensor*> in;
  std::vector<DeviceTensor*> out;
  for (size_t i = 0; i < ins.size(); ++i)  // batch norm: the variances positive
    in.push_back(ins[i].size() == 1 && i >= 3 ? e.uniform(ins[i], 0.5f, 2.0f) : e.uniform(ins[i], -1.0f, 1.0f));
  for (const auto& d : outs) out.push_back(e.uniform(d, -1.0f, 1.0f));
  for (auto _ : state) run_op(e.dev, op, in, out, attrs);
  const auto rate = benchmark::Counter::kIsIterationInvariantRate;
  if (bytes > 0) state.counters["GB/s"] = benchmark::Counter(bytes / 1e9, rate);
  if (flops > 0) state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, rate);
}

void add(const std::string& name, const char* op, std::vector<std::vector<int64_t>> ins,
         std::vector<std::vector<int64_t>> outs, const void* attrs, double bytes, double flops) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& s) { op_bench(s, op, ins, outs, attrs, bytes, flops); })
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void register_layers() {
  static const axon_pool_attrs pool2{sizeof(axon_pool_attrs), 2, 2, 2, 2, AXON_PADDING_VALID};
  static const axon_pool_attrs global7{sizeof(axon_pool_attrs), 7, 7, 7, 7, AXON_PADDING_VALID};
  static const axon_batch_norm_attrs train{sizeof(axon_batch_norm_attrs), 1e-3f, 1.0f, 1};
  static const axon_batch_norm_attrs infer{sizeof(axon_batch_norm_attrs), 1e-3f, 1.0f, 0};
  static const axon_fused_batch_norm_attrs train_relu{sizeof(axon_fused_batch_norm_attrs), train, AXON_ACTIVATION_RELU};
  static const axon_conv2d_attrs same{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_SAME};
  const std::vector<std::vector<int64_t>> stages{{64, 28, 28, 16}, {64, 14, 14, 32}, {64, 7, 7, 64}};
  for (const auto& x : stages) {
    const std::string s = std::to_string(x[1]) + "x" + std::to_string(x[2]) + "x" + std::to_string(x[3]);
    const int64_t c = x[3];
    const double xb = 4.0 * numel(x);
    add("FusedBatchNormV3/training/" + s, "FusedBatchNormV3", {x, {c}, {c}, {c}, {c}}, {x, {c}, {c}, {c}, {c}}, &train,
        2 * xb, 0);
    add("FusedBatchNormV3/inference/" + s, "FusedBatchNormV3", {x, {c}, {c}, {c}, {c}}, {x}, &infer, 2 * xb, 0);
    add("FusedBatchNormGradV3/training/" + s, "FusedBatchNormGradV3", {x, x, {c}, {c}, {c}}, {x, {c}, {c}}, &train,
        3 * xb, 0);
    // With relu (ABI 1.5): against the two ops each stands for, Relu and ReluGrad timed alone.
    add("_FusedBatchNormEx/training/" + s, "_FusedBatchNormEx", {x, {c}, {c}, {c}, {c}}, {x, {c}, {c}, {c}, {c}},
        &train_relu, 2 * xb, 0);
    add("_FusedBatchNormGradEx/training/" + s, "_FusedBatchNormGradEx", {x, x, {c}, {c}, {c}, x}, {x, {c}, {c}},
        &train_relu, 4 * xb, 0);
    // With a residual branch too (ABI 2.1): against FusedBatchNormV3 + AddN + Relu and ReluGrad +
    // FusedBatchNormGradV3. Bytes: the tensors each reads and writes once.
    add("_FusedBatchNormAddEx/training/" + s, "_FusedBatchNormAddEx", {x, {c}, {c}, {c}, {c}, x},
        {x, {c}, {c}, {c}, {c}}, &train_relu, 3 * xb, 0);
    add("_FusedBatchNormAddGradEx/training/" + s, "_FusedBatchNormAddGradEx", {x, x, {c}, {c}, {c}, x},
        {x, {c}, {c}, x}, &train_relu, 5 * xb, 0);
    add("Relu/" + s, "Relu", {x}, {x}, nullptr, 2 * xb, 0);
    // A residual block's gradient: the two branches' gradients of one tensor summed.
    add("AddN/2/" + s, "AddN", {x, x}, {x}, nullptr, 3 * xb, 0);
    add("ReluGrad/" + s, "ReluGrad", {x, x}, {x}, nullptr, 3 * xb, 0);
    const std::vector<int64_t> w{3, 3, c, 1};
    const double flops = 2.0 * numel(x) * 9;
    add("DepthwiseConv2dNative/3x3/" + s, "DepthwiseConv2dNative", {x, w}, {x}, &same, 0, flops);
    add("DepthwiseConv2dNativeBackpropInput/3x3/" + s, "DepthwiseConv2dNativeBackpropInput", {x, w}, {x}, &same, 0,
        flops);
    add("DepthwiseConv2dNativeBackpropFilter/3x3/" + s, "DepthwiseConv2dNativeBackpropFilter", {x, x}, {w}, &same, 0,
        flops);
  }
  // Average pooling: 2x2 downsampling between the stages, and global average pooling at the end.
  for (const auto& x : {stages[0], stages[1]}) {
    const std::vector<int64_t> y{x[0], x[1] / 2, x[2] / 2, x[3]};
    const std::string s = std::to_string(x[1]) + "x" + std::to_string(x[2]) + "x" + std::to_string(x[3]);
    const double bytes = 4.0 * (numel(x) + numel(y));
    add("AvgPool/2x2/" + s, "AvgPool", {x}, {y}, &pool2, bytes, 0);
    add("AvgPoolGrad/2x2/" + s, "AvgPoolGrad", {y}, {x}, &pool2, bytes, 0);
  }
  const std::vector<int64_t> x = stages[2], y{64, 1, 1, 64};
  const double bytes = 4.0 * (numel(x) + numel(y));
  add("AvgPool/global/7x7x64", "AvgPool", {x}, {y}, &global7, bytes, 0);
  add("AvgPoolGrad/global/7x7x64", "AvgPoolGrad", {y}, {x}, &global7, bytes, 0);
  // Layer normalization (ABI 2.3) at ConvNeXtTiny's stages on 32x32 images
  // (batch 64: 8x8x96 to 1x1x768, as rows of K) and the golden model's 14x14x16.
  // Bytes: x and y once (the forward), dy, x and dx once (the gradient).
  static const axon_layer_norm_attrs layer_norm{sizeof(axon_layer_norm_attrs), 1e-6f};
  for (const auto& [rows, k] : std::vector<std::pair<int64_t, int64_t>>{
           {64 * 14 * 14, 16}, {64 * 8 * 8, 96}, {64 * 4 * 4, 192}, {64 * 2 * 2, 384}, {64, 768}}) {
    const std::string s = std::to_string(rows) + "x" + std::to_string(k);
    const std::vector<int64_t> m{rows, k};
    const double mb = 4.0 * rows * k;
    add("LayerNorm/" + s, "LayerNorm", {m, {k}, {k}}, {m, {rows}, {rows}}, &layer_norm, 2 * mb, 0);
    add("LayerNormGrad/" + s, "LayerNormGrad", {m, m, {k}, {rows}, {rows}}, {m, {k}, {k}}, &layer_norm, 3 * mb, 0);
  }
}

// The convolutions of tests/data/keras_resnet.json at batch 64, each forward
// and both gradients: {input [N, H, W, C], kernel size, stride, filters}.
void register_resnet_convolutions() {
  struct Conv {
    std::vector<int64_t> x;
    int64_t k, stride, filters;
  };
  const Conv convs[] = {{{64, 28, 28, 1}, 3, 1, 16},  {{64, 28, 28, 16}, 3, 1, 16}, {{64, 28, 28, 16}, 3, 2, 32},
                        {{64, 14, 14, 32}, 3, 1, 32}, {{64, 28, 28, 16}, 1, 2, 32}, {{64, 14, 14, 32}, 3, 2, 64},
                        {{64, 7, 7, 64}, 3, 1, 64},   {{64, 14, 14, 32}, 1, 2, 64}};
  static std::vector<axon_conv2d_attrs> attrs;
  attrs.reserve(std::size(convs));
  for (const Conv& c : convs) {
    attrs.push_back({sizeof(axon_conv2d_attrs), static_cast<int32_t>(c.stride), static_cast<int32_t>(c.stride), 1, 1,
                     c.k == 1 ? AXON_PADDING_VALID : AXON_PADDING_SAME});
    const int64_t oh = (c.x[1] + c.stride - 1) / c.stride, ow = (c.x[2] + c.stride - 1) / c.stride;
    const std::vector<int64_t> y{c.x[0], oh, ow, c.filters}, w{c.k, c.k, c.x[3], c.filters};
    const double flops = 2.0 * numel(y) * c.k * c.k * c.x[3];
    const std::string s = std::to_string(c.x[1]) + "x" + std::to_string(c.x[2]) + "x" + std::to_string(c.x[3]) + "/" +
                          std::to_string(c.k) + "x" + std::to_string(c.k) + "s" + std::to_string(c.stride) + "/" +
                          std::to_string(c.filters);
    add("Conv2D/" + s, "Conv2D", {c.x, w}, {y}, &attrs.back(), 0, flops);
    add("Conv2DBackpropFilter/" + s, "Conv2DBackpropFilter", {c.x, y}, {w}, &attrs.back(), 0, flops);
    if (c.x[3] > 1) add("Conv2DBackpropInput/" + s, "Conv2DBackpropInput", {y, w}, {c.x}, &attrs.back(), 0, flops);
    // The strided layers' input gradients meet another layer's in the sum
    // for their input: whichever runs second adds into it.
    if (c.stride > 1)
      add("_Conv2DBackpropInputAccumulate/" + s, "_Conv2DBackpropInputAccumulate", {c.x, y, w}, {}, &attrs.back(), 0,
          flops);
  }
}

// The Inception-style cell of tests/data/keras_inception.json at batch 64:
// its max poolings (3x3 stride 1 SAME on the branch, 2x2 stride 2 after the
// concatenation, GB/s of x and y) and its convolutions of few channels.
void register_inception() {
  static const axon_pool_attrs pool3{sizeof(axon_pool_attrs), 3, 3, 1, 1, AXON_PADDING_SAME};
  static const axon_pool_attrs pool2{sizeof(axon_pool_attrs), 2, 2, 2, 2, AXON_PADDING_VALID};
  const std::vector<int64_t> branch{64, 26, 26, 16}, joined{64, 26, 26, 24}, pooled{64, 13, 13, 24};
  const double branch_bytes = 8.0 * numel(branch), joined_bytes = 4.0 * (numel(joined) + numel(pooled));
  add("MaxPool/3x3s1/26x26x16", "MaxPool", {branch}, {branch}, &pool3, branch_bytes, 0);
  add("MaxPoolGrad/3x3s1/26x26x16", "MaxPoolGrad", {branch, branch, branch}, {branch}, &pool3, 1.5 * branch_bytes, 0);
  add("MaxPool/2x2s2/26x26x24", "MaxPool", {joined}, {pooled}, &pool2, joined_bytes, 0);
  add("MaxPoolGrad/2x2s2/26x26x24", "MaxPoolGrad", {joined, pooled, pooled}, {joined}, &pool2,
      joined_bytes + 4.0 * numel(pooled), 0);
  for (int64_t c : {4, 8, 16}) {  // a branch's relu and bias gradients
    const std::vector<int64_t> x{64, 26, 26, c};
    add("_FusedReluGradBiasAddGrad/26x26x" + std::to_string(c), "_FusedReluGradBiasAddGrad", {x, x}, {x, {c}}, nullptr,
        12.0 * numel(x), 0);
  }
  struct Conv {
    int64_t c, k, filters;
  };
  static const axon_conv2d_attrs same{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_SAME};
  for (const Conv& c : {Conv{16, 1, 8}, Conv{16, 1, 4}, Conv{8, 3, 8}, Conv{4, 5, 4}}) {
    const std::vector<int64_t> x{64, 26, 26, c.c}, y{64, 26, 26, c.filters}, w{c.k, c.k, c.c, c.filters};
    const double flops = 2.0 * numel(y) * c.k * c.k * c.c;
    const std::string s = "26x26x" + std::to_string(c.c) + "/" + std::to_string(c.k) + "x" + std::to_string(c.k) +
                          "s1/" + std::to_string(c.filters);
    add("Conv2D/" + s, "Conv2D", {x, w}, {y}, &same, 0, flops);
    add("Conv2DBackpropFilter/" + s, "Conv2DBackpropFilter", {x, y}, {w}, &same, 0, flops);
    add("Conv2DBackpropInput/" + s, "Conv2DBackpropInput", {y, w}, {x}, &same, 0, flops);
    if (c.k == 1)  // the 1x1 branches' input gradients add into the sum for the cell's input
      add("_Conv2DBackpropInputAccumulate/" + s, "_Conv2DBackpropInputAccumulate", {x, y, w}, {}, &same, 0, flops);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  register_layers();
  register_resnet_convolutions();
  register_inception();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
