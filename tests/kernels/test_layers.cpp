// The layers of ABI 1.4 on the CPU plugin against the reference plugin:
// AvgPool, FusedBatchNormV3, DepthwiseConv2dNative and their gradients, and
// ABI 1.5's batch normalization with relu (also against the CPU's own
// separate ops, bit for bit), at
// shapes that use several threads (a small ResNet's on 28x28 images at batch
// 64 among them) and odd ones; the reference's gradients against finite
// differences of its forward ops; results independent of the thread count
// and, where the plugin promises it, of the instruction set; the validator's
// messages for bad calls.
//
// Tolerances: sums (pooling, depthwise convolution) with compare_sum,
// 16 u S + u |want| (S the op on |inputs|, by the reference); batch
// normalization with the same rule on the magnitudes B of
// axon/tolerance_batch_norm.hpp, with t = 1 (statistics summed in double). AvgPool is the reference's double sums
// exactly, so it is compared bit for bit.
#include "kernel_test_util.hpp"

#include <axon/tolerance_batch_norm.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <unistd.h>

using namespace axon::test;

namespace {

constexpr axon_padding kSame = AXON_PADDING_SAME, kValid = AXON_PADDING_VALID;

std::vector<float> abs_values(const std::vector<float>& v) { return abs_of(v); }

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

// ------------------------------------------------------------------ pooling

struct PoolCase {
  std::vector<int64_t> x;
  axon_pool_attrs a;
};

std::vector<int64_t> pooled(const PoolCase& c) {
  return {c.x[0], out_size(c.x[1], c.a.window_h, c.a.stride_h, 1, c.a.padding),
          out_size(c.x[2], c.a.window_w, c.a.stride_w, 1, c.a.padding), c.x[3]};
}

const std::vector<PoolCase>& pool_cases() {
  static const std::vector<PoolCase> cases{
      {{64, 28, 28, 16}, {sizeof(axon_pool_attrs), 2, 2, 2, 2, kValid}},  // the ResNet's downsampling
      {{8, 28, 28, 16}, {sizeof(axon_pool_attrs), 3, 3, 1, 1, kSame}},
      {{64, 7, 7, 64}, {sizeof(axon_pool_attrs), 7, 7, 7, 7, kValid}},  // global average pooling
      {{4, 13, 11, 21}, {sizeof(axon_pool_attrs), 3, 2, 2, 3, kSame}},
      {{3, 5, 6, 3}, {sizeof(axon_pool_attrs), 6, 6, 1, 1, kSame}},  // windows over the whole image
      // 29 channels: a vector, a half and a quarter vector and a single float on AVX-512
      {{2, 9, 10, 29}, {sizeof(axon_pool_attrs), 3, 3, 1, 1, kSame}},
      {{2, 8, 8, 29}, {sizeof(axon_pool_attrs), 2, 2, 2, 2, kValid}},
  };
  return cases;
}

// ------------------------------------------------------------------ depthwise

struct DepthwiseCase {
  std::vector<int64_t> x, f;  // f [KH, KW, C, M]
  axon_conv2d_attrs a;
  std::vector<int64_t> y() const {
    return {x[0], out_size(x[1], f[0], a.stride_h, a.dilation_h, a.padding),
            out_size(x[2], f[1], a.stride_w, a.dilation_w, a.padding), f[2] * f[3]};
  }
};

const std::vector<DepthwiseCase>& depthwise_cases() {
  static const std::vector<DepthwiseCase> cases{
      {{64, 28, 28, 16}, {3, 3, 16, 1}, {sizeof(axon_conv2d_attrs), 1, 1, 1, 1, kSame}},
      {{64, 14, 14, 32}, {3, 3, 32, 1}, {sizeof(axon_conv2d_attrs), 2, 2, 1, 1, kSame}},
      {{4, 15, 13, 6}, {3, 3, 6, 2}, {sizeof(axon_conv2d_attrs), 2, 2, 1, 1, kSame}},
      {{3, 17, 16, 5}, {3, 2, 5, 3}, {sizeof(axon_conv2d_attrs), 1, 1, 2, 3, kValid}},
      {{2, 9, 9, 21}, {5, 5, 21, 1}, {sizeof(axon_conv2d_attrs), 1, 2, 1, 1, kSame}},
  };
  return cases;
}

// ------------------------------------------------------------------ batch normalization

struct BnCase {
  std::vector<int64_t> x;
  int training;
  float factor;
  bool constant_channel;
  float low = -1.0f, high = 3.0f;  // x's values
  int outputs() const { return training ? 5 : 1; }
};

const std::vector<BnCase>& bn_cases() {
  static const std::vector<BnCase> cases{
      {{64, 28, 28, 16}, 1, 1.0f, false},  // the ResNet's first block
      {{64, 14, 14, 32}, 1, 0.01f, false},
      {{64, 7, 7, 64}, 0, 1.0f, false},
      {{64, 100}, 1, 1.0f, false},  // after a Dense layer
      {{3, 5, 7, 33}, 1, 0.3f, true},  // odd channels (vector remainders), a constant one
      {{1, 5}, 1, 1.0f, false},  // one value per channel
      {{5, 9, 3}, 0, 1.0f, false},
      {{64, 14, 14, 32}, 1, 1.0f, false, 100.0f, 104.0f},  // a mean far from 0 against a spread of about 1
  };
  return cases;
}

axon_batch_norm_attrs bn_attrs(const BnCase& c) {
  return {sizeof(axon_batch_norm_attrs), 1e-3f, c.factor, c.training};
}

struct BnInputs {
  HostTensor x, scale, offset, mean, var;
};

BnInputs bn_inputs(std::mt19937& rng, const BnCase& c) {
  const int64_t ch = c.x.back();
  BnInputs in{{c.x, random_floats(rng, numel(c.x), c.low, c.high)}, {{ch}, random_floats(rng, ch, 0.5f, 1.5f)},
              {{ch}, random_floats(rng, ch, -0.5f, 0.5f)},     {{ch}, random_floats(rng, ch, -0.2f, 0.2f)},
              {{ch}, random_floats(rng, ch, 0.5f, 2.0f)}};
  if (c.constant_channel)
    for (size_t i = 1; i < in.x.values.size(); i += static_cast<size_t>(ch)) in.x.values[i] = 0.75f;
  return in;
}

axon::tol::BatchNormInputs magnitude_inputs(const HostTensor& x, const HostTensor& scale, const HostTensor* offset,
                                            const HostTensor& mean, const HostTensor& var,
                                            const axon_batch_norm_attrs& a) {
  const int64_t ch = x.dims.back();
  axon::tol::BatchNormInputs in{};
  in.x = x.values.data(), in.rows = static_cast<int64_t>(x.values.size()) / ch, in.ch = ch;
  in.scale = scale.values.data(), in.offset = offset ? offset->values.data() : nullptr;
  in.mean = mean.values.data(), in.variance = var.values.data();
  in.epsilon = a.epsilon, in.exponential_avg_factor = a.exponential_avg_factor, in.training = a.is_training != 0;
  in.float32_statistics = false;  // the reference sums in double, the CPU float blocks of 4 rows in double
  return in;
}

Comparison compare_with(const std::vector<float>& got, const std::vector<float>& want, const std::vector<double>& b) {
  return compare(got, want, [&](size_t i) { return axon::tol::sum_allowed(want[i], b[i]); });
}

std::vector<std::vector<int64_t>> bn_output_dims(const BnCase& c) {
  std::vector<std::vector<int64_t>> d{c.x};
  for (int k = 1; k < c.outputs(); ++k) d.push_back({c.x.back()});
  return d;
}

axon_fused_batch_norm_attrs bn_relu_attrs(const BnCase& c) {
  return {sizeof(axon_fused_batch_norm_attrs), bn_attrs(c), AXON_ACTIVATION_RELU};
}

// dy where y > 0, else 0 (ReluGrad), for the gradient's magnitudes.
std::vector<float> relu_masked(const std::vector<float>& dy, const std::vector<float>& y) {
  std::vector<float> m(dy.size());
  for (size_t i = 0; i < dy.size(); ++i) m[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  return m;
}

}  // namespace

TEST_CASE("AvgPool and AvgPoolGrad: CPU matches the reference", "[layers][cpu]") {
  std::mt19937 rng(401);
  for (const PoolCase& c : pool_cases()) {
    const auto y = pooled(c);
    INFO("x " << shape_str(c.x) << " window " << c.a.window_h << "x" << c.a.window_w << " stride " << c.a.stride_h
              << "x" << c.a.stride_w << (c.a.padding == kSame ? " SAME" : " VALID"));
    HostTensor x{c.x, random_floats(rng, numel(c.x))}, dy{y, random_floats(rng, numel(y))};
    const auto want = run_host(ref(), "AvgPool", {x}, {y}, &c.a)[0];
    const auto got = run_host(cpu(), "AvgPool", {x}, {y}, &c.a)[0];
    const Comparison fwd = compare_exact(got, want);
    INFO("AvgPool " << fwd.report);
    CHECK(fwd.ok);
    const auto dwant = run_host(ref(), "AvgPoolGrad", {dy}, {c.x}, &c.a)[0];
    const auto dabs = run_host(ref(), "AvgPoolGrad", {HostTensor{y, abs_values(dy.values)}}, {c.x}, &c.a)[0];
    const Comparison bwd = compare_sum(run_host(cpu(), "AvgPoolGrad", {dy}, {c.x}, &c.a)[0], dwant, dabs);
    INFO("AvgPoolGrad " << bwd.report);
    CHECK(bwd.ok);
  }
}

TEST_CASE("DepthwiseConv2dNative and its gradients: CPU matches the reference", "[layers][cpu]") {
  std::mt19937 rng(402);
  for (const DepthwiseCase& c : depthwise_cases()) {
    const auto y = c.y();
    INFO("x " << shape_str(c.x) << " filter " << shape_str(c.f) << " stride " << c.a.stride_h << "x" << c.a.stride_w
              << " dilation " << c.a.dilation_h << "x" << c.a.dilation_w);
    HostTensor x{c.x, random_floats(rng, numel(c.x))}, f{c.f, random_floats(rng, numel(c.f))},
        dy{y, random_floats(rng, numel(y))};
    const HostTensor ax{c.x, abs_values(x.values)}, af{c.f, abs_values(f.values)}, ady{y, abs_values(dy.values)};
    struct Op {
      const char* name;
      HostTensor a, b, abs_a, abs_b;
      std::vector<int64_t> out;
    };
    for (const Op& op : {Op{"DepthwiseConv2dNative", x, f, ax, af, y},
                         Op{"DepthwiseConv2dNativeBackpropInput", dy, f, ady, af, c.x},
                         Op{"DepthwiseConv2dNativeBackpropFilter", x, dy, ax, ady, c.f}}) {
      const auto want = run_host(ref(), op.name, {op.a, op.b}, {op.out}, &c.a)[0];
      const auto s = run_host(ref(), op.name, {op.abs_a, op.abs_b}, {op.out}, &c.a)[0];
      const Comparison r = compare_sum(run_host(cpu(), op.name, {op.a, op.b}, {op.out}, &c.a)[0], want, s);
      INFO(op.name << ": " << r.report);
      CHECK(r.ok);
    }
  }
}

TEST_CASE("FusedBatchNormV3 and FusedBatchNormGradV3: CPU matches the reference", "[layers][cpu]") {
  std::mt19937 rng(403);
  for (const BnCase& c : bn_cases()) {
    INFO("x " << shape_str(c.x) << (c.training ? " training" : " inference") << ", exponential_avg_factor "
              << c.factor);
    const axon_batch_norm_attrs a = bn_attrs(c);
    const BnInputs in = bn_inputs(rng, c);
    const std::vector<HostTensor> inputs{in.x, in.scale, in.offset, in.mean, in.var};
    const auto want = run_host(ref(), "FusedBatchNormV3", inputs, bn_output_dims(c), &a);
    const auto got = run_host(cpu(), "FusedBatchNormV3", inputs, bn_output_dims(c), &a);
    const auto b = axon::tol::batch_norm_magnitudes(magnitude_inputs(in.x, in.scale, &in.offset, in.mean, in.var, a),
                                                    c.outputs());
    for (int k = 0; k < c.outputs(); ++k) {
      const size_t i = static_cast<size_t>(k);
      const Comparison r = compare_with(got[i], want[i], b[i]);
      INFO("output " << k << ": " << r.report);
      CHECK(r.ok);
    }
    // The gradient, from the reserve spaces (training) or the given statistics.
    const HostTensor mean = c.training ? HostTensor{{c.x.back()}, want[3]} : in.mean;
    const HostTensor var = c.training ? HostTensor{{c.x.back()}, want[4]} : in.var;
    const HostTensor dy{c.x, random_floats(rng, numel(c.x))};
    const std::vector<HostTensor> grad_in{dy, in.x, in.scale, mean, var};
    const std::vector<std::vector<int64_t>> grad_out{c.x, {c.x.back()}, {c.x.back()}};
    const auto gwant = run_host(ref(), "FusedBatchNormGradV3", grad_in, grad_out, &a);
    const auto ggot = run_host(cpu(), "FusedBatchNormGradV3", grad_in, grad_out, &a);
    const auto gb = axon::tol::batch_norm_grad_magnitudes(magnitude_inputs(in.x, in.scale, nullptr, mean, var, a),
                                                          dy.values.data());
    for (size_t k = 0; k < 3; ++k) {
      const Comparison r = compare_with(ggot[k], gwant[k], gb[k]);
      INFO("gradient output " << k << ": " << r.report);
      CHECK(r.ok);
    }
  }
}

TEST_CASE("_FusedBatchNormEx and _FusedBatchNormGradEx (relu): CPU matches the reference and its own separate ops",
          "[layers][fused][cpu]") {
  std::mt19937 rng(407);
  for (const BnCase& c : bn_cases()) {
    INFO("x " << shape_str(c.x) << (c.training ? " training" : " inference") << ", exponential_avg_factor "
              << c.factor);
    const axon_batch_norm_attrs a = bn_attrs(c);
    const axon_fused_batch_norm_attrs fa = bn_relu_attrs(c);
    const BnInputs in = bn_inputs(rng, c);
    const std::vector<HostTensor> inputs{in.x, in.scale, in.offset, in.mean, in.var};
    const auto want = run_host(ref(), "_FusedBatchNormEx", inputs, bn_output_dims(c), &fa);
    const auto got = run_host(cpu(), "_FusedBatchNormEx", inputs, bn_output_dims(c), &fa);
    const auto b = axon::tol::batch_norm_magnitudes(magnitude_inputs(in.x, in.scale, &in.offset, in.mean, in.var, a),
                                                    c.outputs());
    size_t zeros = 0;
    for (float v : want[0]) zeros += v == 0.0f;
    INFO(zeros << " of " << want[0].size() << " values of y cut to 0 by relu");
    CHECK(zeros > want[0].size() / 10);  // the cases exercise the relu
    for (int k = 0; k < c.outputs(); ++k) {
      const size_t i = static_cast<size_t>(k);
      const Comparison r = compare_with(got[i], want[i], b[i]);
      INFO("output " << k << ": " << r.report);
      CHECK(r.ok);
    }
    // The CPU's FusedBatchNormV3 then Relu: the same bits.
    auto separate = run_host(cpu(), "FusedBatchNormV3", inputs, bn_output_dims(c), &a);
    separate[0] = run_host(cpu(), "Relu", {HostTensor{c.x, separate[0]}}, {c.x})[0];
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("forward output " << k << " against FusedBatchNormV3 + Relu");
      CHECK(compare_exact(got[k], separate[k]).ok);
    }

    const HostTensor mean = c.training ? HostTensor{{c.x.back()}, want[3]} : in.mean;
    const HostTensor var = c.training ? HostTensor{{c.x.back()}, want[4]} : in.var;
    const HostTensor dy{c.x, random_floats(rng, numel(c.x))}, y{c.x, got[0]};
    const std::vector<HostTensor> grad_in{dy, in.x, in.scale, mean, var, y};
    const std::vector<std::vector<int64_t>> grad_out{c.x, {c.x.back()}, {c.x.back()}};
    const auto gwant = run_host(ref(), "_FusedBatchNormGradEx", grad_in, grad_out, &fa);
    const auto ggot = run_host(cpu(), "_FusedBatchNormGradEx", grad_in, grad_out, &fa);
    const std::vector<float> masked = relu_masked(dy.values, y.values);
    const auto gb = axon::tol::batch_norm_grad_magnitudes(magnitude_inputs(in.x, in.scale, nullptr, mean, var, a),
                                                          masked.data());
    for (size_t k = 0; k < 3; ++k) {
      const Comparison r = compare_with(ggot[k], gwant[k], gb[k]);
      INFO("gradient output " << k << ": " << r.report);
      CHECK(r.ok);
    }
    // The CPU's ReluGrad then FusedBatchNormGradV3: the same bits.
    const auto d = run_host(cpu(), "ReluGrad", {dy, y}, {c.x})[0];
    const auto gseparate = run_host(cpu(), "FusedBatchNormGradV3", {HostTensor{c.x, d}, in.x, in.scale, mean, var},
                                    grad_out, &a);
    for (size_t k = 0; k < 3; ++k) {
      INFO("gradient output " << k << " against ReluGrad + FusedBatchNormGradV3");
      CHECK(compare_exact(ggot[k], gseparate[k]).ok);
    }
  }
}

TEST_CASE("_FusedBatchNormAddEx and _FusedBatchNormAddGradEx: CPU matches the reference and its own separate ops",
          "[layers][fused][cpu]") {
  std::mt19937 rng(408);
  for (const int32_t activation : {AXON_ACTIVATION_RELU, AXON_ACTIVATION_NONE}) {
    for (const BnCase& c : bn_cases()) {
      INFO("x " << shape_str(c.x) << (c.training ? " training" : " inference") << ", exponential_avg_factor "
                << c.factor << ", activation " << activation);
      const axon_batch_norm_attrs a = bn_attrs(c);
      const axon_fused_batch_norm_attrs fa{sizeof(axon_fused_batch_norm_attrs), a, activation};
      const BnInputs in = bn_inputs(rng, c);
      const HostTensor side{c.x, random_floats(rng, numel(c.x))};
      const std::vector<HostTensor> inputs{in.x, in.scale, in.offset, in.mean, in.var, side};
      const auto want = run_host(ref(), "_FusedBatchNormAddEx", inputs, bn_output_dims(c), &fa);
      const auto got = run_host(cpu(), "_FusedBatchNormAddEx", inputs, bn_output_dims(c), &fa);
      auto b = axon::tol::batch_norm_magnitudes(magnitude_inputs(in.x, in.scale, &in.offset, in.mean, in.var, a),
                                                c.outputs());
      for (size_t i = 0; i < b[0].size(); ++i) b[0][i] += std::fabs(side.values[i]);  // the side input's term
      for (int k = 0; k < c.outputs(); ++k) {
        const size_t i = static_cast<size_t>(k);
        const Comparison r = compare_with(got[i], want[i], b[i]);
        INFO("output " << k << ": " << r.report);
        CHECK(r.ok);
      }
      // The CPU's FusedBatchNormV3, AddN (side input second, as the ResNet's
      // Add has it) and Relu: the same bits.
      auto separate = run_host(cpu(), "FusedBatchNormV3", {in.x, in.scale, in.offset, in.mean, in.var},
                               bn_output_dims(c), &a);
      separate[0] = run_host(cpu(), "AddN", {HostTensor{c.x, separate[0]}, side}, {c.x})[0];
      if (activation == AXON_ACTIVATION_RELU)
        separate[0] = run_host(cpu(), "Relu", {HostTensor{c.x, separate[0]}}, {c.x})[0];
      for (size_t k = 0; k < got.size(); ++k) {
        INFO("forward output " << k << " against FusedBatchNormV3 + AddN + Relu");
        CHECK(compare_exact(got[k], separate[k]).ok);
      }

      const HostTensor mean = c.training ? HostTensor{{c.x.back()}, want[3]} : in.mean;
      const HostTensor var = c.training ? HostTensor{{c.x.back()}, want[4]} : in.var;
      const HostTensor dy{c.x, random_floats(rng, numel(c.x))}, y{c.x, got[0]};
      const std::vector<HostTensor> grad_in{dy, in.x, in.scale, mean, var, y};
      const std::vector<std::vector<int64_t>> grad_out{c.x, {c.x.back()}, {c.x.back()}, c.x};
      const auto gwant = run_host(ref(), "_FusedBatchNormAddGradEx", grad_in, grad_out, &fa);
      const auto ggot = run_host(cpu(), "_FusedBatchNormAddGradEx", grad_in, grad_out, &fa);
      const std::vector<float> masked = activation == AXON_ACTIVATION_RELU ? relu_masked(dy.values, y.values)
                                                                           : dy.values;
      INFO("side_input_backprop: dy where y > 0 (relu), else 0; dy itself without an activation");
      CHECK(compare_exact(ggot[3], masked).ok);
      CHECK(compare_exact(gwant[3], masked).ok);
      const auto gb = axon::tol::batch_norm_grad_magnitudes(magnitude_inputs(in.x, in.scale, nullptr, mean, var, a),
                                                            masked.data());
      for (size_t k = 0; k < 3; ++k) {
        const Comparison r = compare_with(ggot[k], gwant[k], gb[k]);
        INFO("gradient output " << k << ": " << r.report);
        CHECK(r.ok);
      }
      // The CPU's FusedBatchNormGradV3 of the masked dy: the same bits.
      const auto gseparate = run_host(cpu(), "FusedBatchNormGradV3",
                                      {HostTensor{c.x, masked}, in.x, in.scale, mean, var},
                                      {c.x, {c.x.back()}, {c.x.back()}}, &a);
      for (size_t k = 0; k < 3; ++k) {
        INFO("gradient output " << k << " against ReluGrad + FusedBatchNormGradV3");
        CHECK(compare_exact(ggot[k], gseparate[k]).ok);
      }
    }
  }
}

TEST_CASE("batch normalization of an empty batch gives NaN statistics and zero reserve spaces and gradients",
          "[layers][cpu]") {
  const axon_batch_norm_attrs train{sizeof(axon_batch_norm_attrs), 1e-3f, 1.0f, 1};
  const std::vector<int64_t> xd{0, 4, 4, 3};
  const HostTensor x{xd, {}}, v{{3}, {1.0f, 2.0f, 3.0f}};
  for (TestDevice* dev : {&ref(), &cpu()}) {
    const auto out = run_host(*dev, "FusedBatchNormV3", {x, v, v, v, v}, {xd, {3}, {3}, {3}, {3}}, &train);
    for (int k = 1; k < 5; ++k)
      for (float value : out[static_cast<size_t>(k)]) CHECK((k < 3 ? std::isnan(value) : value == 0.0f));
    const auto grad = run_host(*dev, "FusedBatchNormGradV3", {x, x, v, v, v}, {xd, {3}, {3}}, &train);
    CHECK(grad[1] == std::vector<float>(3, 0.0f));
    CHECK(grad[2] == std::vector<float>(3, 0.0f));
  }
}

TEST_CASE("the CPU plugin's layer kernels do not depend on the thread count", "[layers][determinism][cpu]") {
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  auto run_all = [](TestDevice& dev) {
    std::mt19937 rng(404);
    std::vector<std::vector<float>> r;
    const PoolCase& p = pool_cases()[1];
    HostTensor x{p.x, random_floats(rng, numel(p.x))}, dy{pooled(p), random_floats(rng, numel(pooled(p)))};
    r.push_back(run_host(dev, "AvgPool", {x}, {pooled(p)}, &p.a)[0]);
    r.push_back(run_host(dev, "AvgPoolGrad", {dy}, {p.x}, &p.a)[0]);
    const DepthwiseCase& c = depthwise_cases()[0];
    HostTensor dx{c.x, random_floats(rng, numel(c.x))}, f{c.f, random_floats(rng, numel(c.f))},
        g{c.y(), random_floats(rng, numel(c.y()))};
    r.push_back(run_host(dev, "DepthwiseConv2dNative", {dx, f}, {c.y()}, &c.a)[0]);
    r.push_back(run_host(dev, "DepthwiseConv2dNativeBackpropInput", {g, f}, {c.x}, &c.a)[0]);
    r.push_back(run_host(dev, "DepthwiseConv2dNativeBackpropFilter", {dx, g}, {c.f}, &c.a)[0]);
    const BnCase& b = bn_cases()[0];
    const BnInputs in = bn_inputs(rng, b);
    const axon_batch_norm_attrs a = bn_attrs(b);
    const std::vector<HostTensor> inputs{in.x, in.scale, in.offset, in.mean, in.var};
    for (auto& o : run_host(dev, "FusedBatchNormV3", inputs, bn_output_dims(b), &a)) r.push_back(o);
    // The gradient with dy = that y and the reserve spaces.
    const HostTensor m{{b.x.back()}, r[8]}, v{{b.x.back()}, r[9]};
    for (auto& o : run_host(dev, "FusedBatchNormGradV3", {HostTensor{b.x, r[5]}, in.x, in.scale, m, v},
                            {b.x, {b.x.back()}, {b.x.back()}}, &a))
      r.push_back(o);
    // With relu: y, then the gradient with dy = the inputs x and y that relu's output.
    const axon_fused_batch_norm_attrs fa = bn_relu_attrs(b);
    const std::vector<float> y = run_host(dev, "_FusedBatchNormEx", inputs, bn_output_dims(b), &fa)[0];
    r.push_back(y);
    for (auto& o : run_host(dev, "_FusedBatchNormGradEx", {in.x, in.x, in.scale, m, v, HostTensor{b.x, y}},
                            {b.x, {b.x.back()}, {b.x.back()}}, &fa))
      r.push_back(o);
    // With a side input (the input x again) and its gradient.
    const auto sum = run_host(dev, "_FusedBatchNormAddEx", {in.x, in.scale, in.offset, in.mean, in.var, in.x},
                              bn_output_dims(b), &fa)[0];
    r.push_back(sum);
    for (auto& o : run_host(dev, "_FusedBatchNormAddGradEx", {in.x, in.x, in.scale, m, v, HostTensor{b.x, sum}},
                            {b.x, {b.x.back()}, {b.x.back()}, b.x}, &fa))
      r.push_back(o);
    return r;
  };
  const auto a = run_all(one), b = run_all(three);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("output " << i);
    CHECK(compare_exact(b[i], a[i]).ok);
  }
}

// ------------------------------------------------------------------ instruction sets

namespace {

uint64_t digest(const std::vector<float>& v) {  // FNV-1a over the bytes
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// One line per output: "<op> <digest>".
std::string layer_digests() {
  std::mt19937 rng(405);
  std::string out;
  auto add = [&](const char* op, const std::vector<float>& v) {
    out += std::string(op) + " " + std::to_string(digest(v)) + "\n";
  };
  for (const PoolCase& p : pool_cases()) {
    HostTensor x{p.x, random_floats(rng, numel(p.x))}, dy{pooled(p), random_floats(rng, numel(pooled(p)))};
    add("AvgPool", run_host(cpu(), "AvgPool", {x}, {pooled(p)}, &p.a)[0]);
    add("AvgPoolGrad", run_host(cpu(), "AvgPoolGrad", {dy}, {p.x}, &p.a)[0]);
    const HostTensor y{pooled(p), run_host(cpu(), "MaxPool", {x}, {pooled(p)}, &p.a)[0]};
    add("MaxPool", y.values);
    add("MaxPoolGrad", run_host(cpu(), "MaxPoolGrad", {x, y, dy}, {p.x}, &p.a)[0]);
  }
  for (const BnCase& b : bn_cases()) {
    const BnInputs in = bn_inputs(rng, b);
    const axon_batch_norm_attrs a = bn_attrs(b);
    const std::vector<HostTensor> inputs{in.x, in.scale, in.offset, in.mean, in.var};
    for (const auto& o : run_host(cpu(), "FusedBatchNormV3", inputs, bn_output_dims(b), &a)) add("FusedBatchNormV3", o);
    const HostTensor dy{b.x, random_floats(rng, numel(b.x))};
    for (const auto& o : run_host(cpu(), "FusedBatchNormGradV3", {dy, in.x, in.scale, in.mean, in.var},
                                  {b.x, {b.x.back()}, {b.x.back()}}, &a))
      add("FusedBatchNormGradV3", o);
    const axon_fused_batch_norm_attrs fa = bn_relu_attrs(b);
    const auto ex = run_host(cpu(), "_FusedBatchNormEx", inputs, bn_output_dims(b), &fa);
    for (const auto& o : ex) add("_FusedBatchNormEx", o);
    for (const auto& o : run_host(cpu(), "_FusedBatchNormGradEx",
                                  {dy, in.x, in.scale, in.mean, in.var, HostTensor{b.x, ex[0]}},
                                  {b.x, {b.x.back()}, {b.x.back()}}, &fa))
      add("_FusedBatchNormGradEx", o);
    const auto add_ex = run_host(cpu(), "_FusedBatchNormAddEx", {in.x, in.scale, in.offset, in.mean, in.var, dy},
                                 bn_output_dims(b), &fa);
    for (const auto& o : add_ex) add("_FusedBatchNormAddEx", o);
    for (const auto& o : run_host(cpu(), "_FusedBatchNormAddGradEx",
                                  {dy, in.x, in.scale, in.mean, in.var, HostTensor{b.x, add_ex[0]}},
                                  {b.x, {b.x.back()}, {b.x.back()}, b.x}, &fa))
      add("_FusedBatchNormAddGradEx", o);
  }
  // Layer normalization (ABI 2.3): rows of a vector's width and odd ones.
  for (const std::vector<int64_t>& m : {std::vector<int64_t>{512, 96}, std::vector<int64_t>{37, 21}}) {
    const int64_t rows = m[0], k = m[1];
    const axon_layer_norm_attrs a{sizeof(axon_layer_norm_attrs), 1e-6f};
    const HostTensor x{m, random_floats(rng, numel(m))}, scale{{k}, random_floats(rng, size_t(k))},
        offset{{k}, random_floats(rng, size_t(k))}, dy{m, random_floats(rng, numel(m))};
    const auto normed = run_host(cpu(), "LayerNorm", {x, scale, offset}, {m, {rows}, {rows}}, &a);
    for (const auto& o : normed) add("LayerNorm", o);
    for (const auto& o : run_host(cpu(), "LayerNormGrad",
                                  {dy, x, scale, HostTensor{{rows}, normed[1]}, HostTensor{{rows}, normed[2]}},
                                  {m, {k}, {k}}, &a))
      add("LayerNormGrad", o);
  }
  for (const DepthwiseCase& c : depthwise_cases()) {
    HostTensor x{c.x, random_floats(rng, numel(c.x))}, f{c.f, random_floats(rng, numel(c.f))},
        g{c.y(), random_floats(rng, numel(c.y()))};
    add("Depthwise", run_host(cpu(), "DepthwiseConv2dNative", {x, f}, {c.y()}, &c.a)[0]);
    add("Depthwise", run_host(cpu(), "DepthwiseConv2dNativeBackpropInput", {g, f}, {c.x}, &c.a)[0]);
    add("Depthwise", run_host(cpu(), "DepthwiseConv2dNativeBackpropFilter", {x, g}, {c.f}, &c.a)[0]);
  }
  return out;
}

// This test program run again with AXON_CPU_ISA=isa ("" for the CPU's best),
// writing the digests to a file; the file's text.
std::string digests_at(const char* isa) {
  const std::string path = "/tmp/axon-layer-digests-" + std::to_string(getpid()) + "-" + (*isa ? isa : "best");
  const std::string cmd = std::string(*isa ? "AXON_CPU_ISA=" + std::string(isa) : "env -u AXON_CPU_ISA") +
                          " AXON_TEST_LAYER_DIGESTS=" + path + " /proc/" + std::to_string(getpid()) +
                          "/exe '[layer_digests]' > /dev/null 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  INFO(cmd << " exited " << rc);
  REQUIRE(rc == 0);
  REQUIRE(!text.empty());
  return text;
}

}  // namespace

TEST_CASE("layer digests, for the instruction-set test", "[.layer_digests]") {
  const char* path = std::getenv("AXON_TEST_LAYER_DIGESTS");
  REQUIRE(path != nullptr);
  std::ofstream(path) << layer_digests();
}

TEST_CASE(
    "AvgPool, max pooling, batch and layer normalization give the same bits on every instruction set and depthwise "
    "convolution on AVX2 and AVX-512",
    "[layers][isa][cpu]") {
  const std::string best = digests_at(""), avx2 = digests_at("avx2"), base = digests_at("base");
  auto lines = [](const std::string& text, bool with_depthwise) {
    std::string kept, line;
    for (char ch : text) {
      if (ch != '\n') {
        line += ch;
        continue;
      }
      if (with_depthwise || line.rfind("Depthwise", 0) != 0) kept += line + "\n";
      line.clear();
    }
    return kept;
  };
  CHECK(avx2 == best);  // everything, depthwise included
  CHECK(lines(base, false) == lines(best, false));
  CHECK(lines(base, false).find("FusedBatchNormGradV3") != std::string::npos);
  CHECK(lines(base, false).find("_FusedBatchNormGradEx") != std::string::npos);
  CHECK(lines(base, false).find("MaxPoolGrad") != std::string::npos);
  CHECK(lines(base, false).find("LayerNormGrad") != std::string::npos);
}

// ------------------------------------------------------------------ finite differences of the reference

namespace {

// Central differences of loss() in every element of x against grad:
// |fd - grad| <= rel (1 + |grad|).
void fd_check(const char* what, std::vector<float>& x, const std::vector<float>& grad,
              const std::function<double()>& loss, float eps, double rel) {
  REQUIRE(x.size() == grad.size());
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float x0 = x[i];
    x[i] = x0 + eps;
    const float up = x[i];
    const double lp = loss();
    x[i] = x0 - eps;
    const float down = x[i];
    const double lm = loss();
    x[i] = x0;
    const double fd = (lp - lm) / (double(up) - double(down));
    const double err = std::fabs(fd - grad[i]) / (rel * (1.0 + std::fabs(grad[i])));
    worst = std::max(worst, err);
    if (err > 1.0 && bad++ < 5)
      UNSCOPED_INFO(what << "[" << i << "]: finite difference " << fd << ", gradient op " << grad[i]);
  }
  INFO(what << ": worst error " << worst << " of the tolerance");
  CHECK(bad == 0);
}

}  // namespace

// AvgPool and depthwise convolution are linear: any step is exact up to
// rounding (eps 0.5, 1e-4 (1 + |grad|)). Batch normalization is smooth: eps
// 1e-2 on values of order 1, truncation O(eps^2) relative plus the float
// rounding of y summed into the loss over eps; 2e-3 (1 + |grad|).
TEST_CASE("reference AvgPoolGrad agrees with finite differences of AvgPool", "[layers][gradcheck][ref]") {
  std::mt19937 rng(406);
  for (const PoolCase& c : {PoolCase{{2, 7, 6, 3}, {sizeof(axon_pool_attrs), 3, 3, 2, 2, kSame}},
                            PoolCase{{1, 6, 7, 2}, {sizeof(axon_pool_attrs), 2, 3, 1, 2, kValid}},
                            PoolCase{{2, 4, 4, 2}, {sizeof(axon_pool_attrs), 4, 4, 4, 4, kValid}}}) {
    const auto y = pooled(c);
    HostTensor x{c.x, random_floats(rng, numel(c.x))}, r{y, random_floats(rng, numel(y))};
    const auto dx = run_host(ref(), "AvgPoolGrad", {r}, {c.x}, &c.a)[0];
    fd_check("AvgPoolGrad", x.values, dx, [&] { return dot(run_host(ref(), "AvgPool", {x}, {y}, &c.a)[0], r.values); },
             0.5f, 1e-4);
  }
}

TEST_CASE("reference depthwise gradients agree with finite differences", "[layers][gradcheck][ref]") {
  std::mt19937 rng(407);
  for (const DepthwiseCase& c :
       {DepthwiseCase{{2, 6, 7, 3}, {3, 3, 3, 2}, {sizeof(axon_conv2d_attrs), 2, 1, 1, 1, kSame}},
        DepthwiseCase{{1, 7, 6, 2}, {2, 3, 2, 1}, {sizeof(axon_conv2d_attrs), 1, 2, 2, 1, kValid}}}) {
    const auto y = c.y();
    HostTensor x{c.x, random_floats(rng, numel(c.x))}, f{c.f, random_floats(rng, numel(c.f))},
        r{y, random_floats(rng, numel(y))};
    auto loss = [&] { return dot(run_host(ref(), "DepthwiseConv2dNative", {x, f}, {y}, &c.a)[0], r.values); };
    fd_check("DepthwiseConv2dNativeBackpropInput", x.values,
             run_host(ref(), "DepthwiseConv2dNativeBackpropInput", {r, f}, {c.x}, &c.a)[0], loss, 0.5f, 1e-4);
    fd_check("DepthwiseConv2dNativeBackpropFilter", f.values,
             run_host(ref(), "DepthwiseConv2dNativeBackpropFilter", {x, r}, {c.f}, &c.a)[0], loss, 0.5f, 1e-4);
  }
}

TEST_CASE("reference FusedBatchNormGradV3 agrees with finite differences of FusedBatchNormV3",
          "[layers][gradcheck][ref]") {
  std::mt19937 rng(408);
  for (const BnCase& c : {BnCase{{3, 2, 2, 3}, 1, 1.0f, false}, BnCase{{6, 4}, 1, 1.0f, false},
                          BnCase{{2, 3, 2, 3}, 0, 1.0f, false}}) {
    INFO("x " << shape_str(c.x) << (c.training ? " training" : " inference"));
    const axon_batch_norm_attrs a = bn_attrs(c);
    BnInputs in = bn_inputs(rng, c);
    const HostTensor r{c.x, random_floats(rng, numel(c.x))};
    const std::vector<std::vector<int64_t>> dims = bn_output_dims(c);
    auto loss = [&] {
      const std::vector<HostTensor> inputs{in.x, in.scale, in.offset, in.mean, in.var};
      return dot(run_host(ref(), "FusedBatchNormV3", inputs, dims, &a)[0], r.values);
    };
    const auto fwd = run_host(ref(), "FusedBatchNormV3", {in.x, in.scale, in.offset, in.mean, in.var},
                              {c.x, {c.x.back()}, {c.x.back()}, {c.x.back()}, {c.x.back()}},
                              &a);  // all five: the reserve spaces
    const HostTensor mean = c.training ? HostTensor{{c.x.back()}, fwd[3]} : in.mean;
    const HostTensor var = c.training ? HostTensor{{c.x.back()}, fwd[4]} : in.var;
    const auto g = run_host(ref(), "FusedBatchNormGradV3", {r, in.x, in.scale, mean, var},
                            {c.x, {c.x.back()}, {c.x.back()}}, &a);
    fd_check("dx", in.x.values, g[0], loss, 1e-2f, 2e-3);
    fd_check("scale_backprop", in.scale.values, g[1], loss, 1e-2f, 2e-3);
    fd_check("offset_backprop", in.offset.values, g[2], loss, 1e-2f, 2e-3);
  }
}

// ------------------------------------------------------------------ bad calls

TEST_CASE("bad calls of the layer ops are refused with the validator's message naming the op", "[layers][errors]") {
  const axon_batch_norm_attrs train{sizeof(axon_batch_norm_attrs), 1e-3f, 1.0f, 1};
  const axon_batch_norm_attrs eps0{sizeof(axon_batch_norm_attrs), 0.0f, 1.0f, 0};
  const axon_conv2d_attrs conv{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, kValid};
  const axon_pool_attrs pool{sizeof(axon_pool_attrs), 2, 2, 2, 2, kValid};
  const axon_fused_batch_norm_attrs relu{sizeof(axon_fused_batch_norm_attrs), train, AXON_ACTIVATION_RELU};
  const axon_fused_batch_norm_attrs act7{sizeof(axon_fused_batch_norm_attrs), train, 7};
  axon_fused_batch_norm_attrs small_bn = relu;
  small_bn.batch_norm.struct_size = 8;
  const std::vector<BadCall> bad{
      {"FusedBatchNormV3", {{2, 3, 3, 4}, {4}, {4}, {4}, {4}}, {{2, 3, 3, 4}}, &train,
       "FusedBatchNormV3: training needs all 5 outputs, got 1"},
      {"FusedBatchNormV3", {{2, 3, 3, 4}, {4}, {3}, {4}, {4}}, {{2, 3, 3, 4}}, &eps0,
       "FusedBatchNormV3: epsilon must be a positive number, got 0"},
      {"FusedBatchNormGradV3", {{2, 4}, {2, 4}, {4}, {4}, {5}}, {{2, 4}, {4}, {4}}, &train,
       "FusedBatchNormGradV3: reserve_space_2 has shape [5], expected [4]"},
      {"DepthwiseConv2dNative", {{1, 5, 5, 3}, {3, 3, 3, 2}}, {{1, 3, 3, 3}}, &conv,
       "DepthwiseConv2dNative: y has shape [1,3,3,3], expected [1,3,3,6]"},
      {"DepthwiseConv2dNativeBackpropFilter", {{1, 5, 5, 3}, {1, 3, 3, 3}}, {{3, 3, 2, 1}}, &conv,
       "DepthwiseConv2dNativeBackpropFilter: dfilter [3,3,2,1] has 2 input channels, x [1,5,5,3] has 3"},
      {"AvgPoolGrad", {{1, 2, 3, 2}}, {{1, 4, 4, 2}}, &pool, "AvgPoolGrad: dy has shape [1,2,3,2], expected [1,2,2,2]"},
      {"_FusedBatchNormEx", {{2, 3, 3, 4}, {4}, {4}, {4}, {4}}, {{2, 3, 3, 4}, {4}, {4}, {4}, {4}}, &act7,
       "_FusedBatchNormEx: unknown activation 7"},
      {"_FusedBatchNormEx", {{2, 3, 3, 4}, {4}, {4}, {4}, {4}}, {{2, 3, 3, 4}, {4}, {4}, {4}, {4}}, &small_bn,
       "_FusedBatchNormEx: batch_norm attribute struct too small (8 < "},
      {"_FusedBatchNormGradEx", {{2, 4}, {2, 4}, {4}, {4}, {4}, {2, 5}}, {{2, 4}, {4}, {4}}, &relu,
       "_FusedBatchNormGradEx: y has shape [2,5], expected x's [2,4]"},
  };
  check_refused(bad, {&ref(), &cpu()});
}
