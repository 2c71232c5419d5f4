// The CPU plugin's memory-bound ABI 1.4 kernels (activations, softmax,
// elementwise arithmetic, shape ops) through the C ABI. Each row reports
// GB_s, the bytes it reads and writes per second, and of_copy, that rate
// over copy_GB_s, the rate of the plugin's own copy (Identity, a threaded
// memmove) of the same number of bytes, timed just before and just after
// the row: 1.0 is as fast as moving the data can be. Sizes: the guide CNN's largest activation (64 x 26
// x 26 x 32 floats, 5.5 MB) and 16 Mi floats (64 MB, beyond the caches).
// Plugin threads: AXON_TEST_THREADS (default: all CPUs).
#include "bench_device.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace axon::test;

namespace {

// GB/s of the plugin's Identity moving `bytes` (reading and writing bytes / 2
// each), timed over 0.1 s.
double copy_rate(TestDevice& dev, int64_t bytes) {
  DeviceTensor src(dev, AXON_FLOAT32, {bytes / 8}), dst(dev, AXON_FLOAT32, {bytes / 8});
  src.upload(std::vector<float>(static_cast<size_t>(bytes / 8), 1.0f));
  run_op(dev, "Identity", {&src}, {&dst});
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  double s = 0;
  do {
    run_op(dev, "Identity", {&src}, {&dst});
    ++calls;
    s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } while (s < 0.1);
  return double(calls) * double(bytes) / s / 1e9;
}

BenchDevice& env() {
  static BenchDevice e(7);
  return e;
}

struct Shape {
  std::vector<int64_t> dims;
  float lo = -4.0f, hi = 4.0f;  // the values drawn
};

int64_t floats(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

// op on fresh tensors; bytes = everything it reads and writes (in-place inputs twice).
void op_bench(benchmark::State& state, const char* op, const std::vector<Shape>& ins, const std::vector<Shape>& outs,
              const void* attrs, int in_place) {
  BenchDevice& e = env();
  std::vector<const DeviceTensor*> in;
  std::vector<DeviceTensor*> out;
  int64_t bytes = 0;
  for (const Shape& s : ins) in.push_back(e.uniform(s.dims, s.lo, s.hi)), bytes += 4 * floats(s.dims);
  for (const Shape& s : outs) out.push_back(e.uniform(s.dims, -4.0f, 4.0f)), bytes += 4 * floats(s.dims);
  for (int i = 0; i < in_place; ++i) bytes += 4 * floats(ins[static_cast<size_t>(i)].dims);
  const double before = copy_rate(e.dev, bytes);
  for (auto _ : state) run_op(e.dev, op, in, out, attrs);
  const double copy = (before + copy_rate(e.dev, bytes)) / 2;  // the copy just before and just after
  state.counters["GB_s"] = benchmark::Counter(double(bytes) / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_copy"] =
      benchmark::Counter(double(bytes) / 1e9 / copy, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["copy_GB_s"] = copy;
}

void register_all() {
  auto add = [](const std::string& name, const char* op, std::vector<Shape> ins, std::vector<Shape> outs,
                const void* attrs = nullptr, int in_place = 0) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [=](benchmark::State& s) { op_bench(s, op, ins, outs, attrs, in_place); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  };
  static const axon_gelu_attrs erf{sizeof(axon_gelu_attrs), 0}, tanh_form{sizeof(axon_gelu_attrs), 1};
  static const axon_leaky_relu_attrs leaky{sizeof(axon_leaky_relu_attrs), 0.2f};
  static const axon_clipped_relu_attrs clipped{sizeof(axon_clipped_relu_attrs), 0.1f, 6.0f, 0.5f};
  static const axon_moving_average_attrs average{sizeof(axon_moving_average_attrs), 0.99f, 0.01f};
  static const axon_concat_attrs channels{sizeof(axon_concat_attrs), 3};
  static const axon_slice_attrs crop{sizeof(axon_slice_attrs), {0, 1, 1, 0}};
  static const axon_slice_attrs fourth_channels{sizeof(axon_slice_attrs), {0, 0, 0, 4}};
  for (const auto& [label, d] : {std::pair<std::string, std::vector<int64_t>>{"conv1", {64, 26, 26, 32}},
                                 {"16Mi", {16, 1024, 1024}}}) {
    const Shape x{d}, unit{d, 0.0f, 1.0f};
    add("Copy(Identity)/" + label, "Identity", {x}, {x});
    add("Sigmoid/" + label, "Sigmoid", {x}, {x});
    add("Tanh/" + label, "Tanh", {x}, {x});
    add("Elu/" + label, "Elu", {x}, {x});
    add("Softplus/" + label, "Softplus", {x}, {x});
    add("Gelu(erf)/" + label, "Gelu", {x}, {x}, &erf);
    add("Gelu(tanh)/" + label, "Gelu", {x}, {x}, &tanh_form);
    add("Silu/" + label, "Silu", {x}, {x});
    add("Relu6/" + label, "Relu6", {x}, {x});
    add("LeakyRelu/" + label, "LeakyRelu", {x}, {x}, &leaky);
    add("ClippedRelu/" + label, "ClippedRelu", {x}, {x}, &clipped);
    add("SigmoidGrad/" + label, "SigmoidGrad", {unit, x}, {x});
    add("GeluGrad(erf)/" + label, "GeluGrad", {x, x}, {x}, &erf);
    add("SiluGrad/" + label, "SiluGrad", {x, x}, {x});
    add("Sub/" + label, "Sub", {x, x}, {x});
    add("Mul/" + label, "Mul", {x, x}, {x});
    add("Maximum/" + label, "Maximum", {x, x}, {x});
    add("MaximumGrad/" + label, "MaximumGrad", {x, x, x}, {x, x});
    add("MovingAverage/" + label, "MovingAverage", {x, x}, {}, &average, 1);
  }
  // Softmax over 1000 classes (an ImageNet classifier's logits), 1384 and 16384 rows.
  for (int64_t rows : {1384, 16384}) {
    const Shape logits{{rows, 1000}, -8.0f, 8.0f}, probs{{rows, 1000}, 0.0f, 0.002f};
    add("Softmax/" + std::to_string(rows) + "x1000", "Softmax", {logits}, {logits});
    add("SoftmaxGrad/" + std::to_string(rows) + "x1000", "SoftmaxGrad", {logits, probs}, {logits});
  }
  // Shapes at the CNN's conv1 size: two halves joined on channels, the Inception cell's four branches (8, 8, 4
  // and 4 channels) joined, a 1-pixel crop and its padding back, and 4 of 28 channels cut out (a Concatenate's
  // gradient into a 4-channel branch).
  add("ConcatV2/channels_conv1", "ConcatV2", {{{64, 26, 26, 16}}, {{64, 26, 26, 16}}}, {{{64, 26, 26, 32}}}, &channels);
  add("ConcatV2/inception_branches", "ConcatV2",
      {{{64, 26, 26, 8}}, {{64, 26, 26, 8}}, {{64, 26, 26, 4}}, {{64, 26, 26, 4}}}, {{{64, 26, 26, 24}}}, &channels);
  add("Slice/crop_conv1", "Slice", {{{64, 26, 26, 32}}}, {{{64, 24, 24, 32}}}, &crop);
  add("Pad/conv1", "Pad", {{{64, 24, 24, 32}}}, {{{64, 26, 26, 32}}}, &crop);
  add("Slice/4_of_28_channels_conv1", "Slice", {{{64, 26, 26, 28}}}, {{{64, 26, 26, 4}}}, &fourth_channels);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  axon_device_props p{};
  p.struct_size = sizeof p;
  axon_error err{};
  env().plugin.api.get_device_props(env().plugin.api.plugin_ctx, 0, &p, &err);
  std::printf("%s; GB_s: bytes read and written per second; of_copy: GB_s over copy_GB_s, the plugin's Identity "
              "moving the same bytes\n",
              p.name);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
