// The ABI 1.4 activations and their gradients: the CPU plugin against the
// reference plugin, and the reference's gradients against finite differences
// of its own forward ops. Tolerances:
//  - the exp-based functions (Sigmoid, Tanh, Elu, Selu, Softplus, Gelu both
//    forms, Silu and their gradients): axon/function_bounds.hpp's bound,
//    |cpu - ref| <= 16 u B + u |ref|, B the magnitude of the terms the result
//    is made of (the same bound as TensorFlow's goldens; the CPU plugin
//    keeps within 0.4 of it here, see docs/testing.md);
//  - Relu6, LeakyRelu, ClippedRelu and their gradients: exact (the same
//    float expressions);
//  - finite differences: |fd - grad| <= 2e-3 (1 + |grad|), inputs at least
//    4 steps from a kink.
#include "kernel_test_util.hpp"

#include <axon/function_bounds.hpp>

#include <algorithm>
#include <cstring>

using namespace axon::test;

namespace {

constexpr float kInf = INFINITY;

// Values an activation must get right besides random ones: signed zeros, the
// polynomial ranges' edges, Softplus' thresholds, where e^x under- and
// overflows, huge magnitudes.
const std::vector<float> kEdges = {0.0f,    -0.0f,   1e-30f,  -1e-30f, 1e-8f,    -1e-8f,   1e-3f,    -1e-3f,
                                   0.625f,  -0.625f, 0.7f,    -0.7f,   1.0f,     -1.0f,    6.0f,     -6.0f,
                                   9.0f,    -9.0f,   13.942385f, -13.942385f, 13.942386f, -13.942386f, 15.0f, -15.0f,
                                   20.0f,   -20.0f,  44.5f,   -44.5f,  87.0f,    -87.0f,   88.5f,    -88.5f,
                                   88.8f,   -88.8f,  103.0f,  -103.0f, 200.0f,   -200.0f,  1e4f,     -1e4f,
                                   1e30f,   -1e30f};

// n inputs: half in [-4, 4), a quarter in [-30, 30), the rest the edge values in turn.
std::vector<float> activation_inputs(std::mt19937& rng, size_t n) {
  std::vector<float> v = random_floats(rng, n, -4.0f, 4.0f);
  std::uniform_real_distribution<float> wide(-30.0f, 30.0f);
  for (size_t i = 0; i < n; ++i) {
    if (i % 4 == 1) v[i] = wide(rng);
    if (i % 4 == 3) v[i] = kEdges[(i / 4) % kEdges.size()];
  }
  return v;
}

struct Case {
  const char* op;
  bool takes_y;         // a gradient whose first input is the forward's output y (TensorFlow's order: y, dy)
  bool dy_first;        // a gradient with inputs (dy, x) or (dy, y)
  const char* forward;  // the forward op, for the gradients
};

const std::vector<Case> kSmooth = {
    {"Sigmoid", false, false, nullptr},  {"SigmoidGrad", true, false, "Sigmoid"},
    {"Tanh", false, false, nullptr},     {"TanhGrad", true, false, "Tanh"},
    {"Elu", false, false, nullptr},      {"EluGrad", true, true, "Elu"},
    {"Selu", false, false, nullptr},     {"SeluGrad", true, true, "Selu"},
    {"Softplus", false, false, nullptr}, {"SoftplusGrad", false, true, "Softplus"},
    {"Gelu", false, false, nullptr},     {"GeluGrad", false, true, "Gelu"},
    {"Silu", false, false, nullptr},     {"SiluGrad", false, true, "Silu"},
};

const std::vector<std::vector<int64_t>> kShapes = {{}, {1}, {7}, {3, 5, 7}, {0, 4}, {17, 4099}, {3, 33333}, {1000001}};

// The inputs of `c` for x (and dy): gradients that take y get the reference's forward of x.
std::vector<HostTensor> inputs_of(const Case& c, const std::vector<int64_t>& d, const std::vector<float>& x,
                                  const std::vector<float>& dy, const void* attrs) {
  if (c.forward == nullptr) return {HostTensor{d, x}};
  std::vector<float> second = x;
  if (c.takes_y) second = run_host(ref(), c.forward, {HostTensor{d, x}}, {d}, attrs)[0];
  if (c.dy_first) return {HostTensor{d, dy}, HostTensor{d, second}};
  return {HostTensor{d, second}, HostTensor{d, dy}};
}

axon::OpId op_id(const char* name) { return axon::find_op(name)->id; }

}  // namespace

TEST_CASE("the exp-based activations and their gradients match the reference within the function bound",
          "[activations][cpu]") {
  std::mt19937 rng(1401);
  for (const Case& c : kSmooth)
    for (int tanh_form = 0; tanh_form < (std::strstr(c.op, "Gelu") ? 2 : 1); ++tanh_form) {
      const axon_gelu_attrs gelu{sizeof(axon_gelu_attrs), tanh_form};
      const void* attrs = std::strstr(c.op, "Gelu") ? &gelu : nullptr;
      double worst = 0;
      for (const auto& d : kShapes) {
        INFO(c.op << (tanh_form ? " (tanh form)" : "") << " shape " << shape_str(d));
        const std::vector<float> x = activation_inputs(rng, numel(d)), dy = random_floats(rng, numel(d), -2.0f, 2.0f);
        const std::vector<HostTensor> in = inputs_of(c, d, x, dy, attrs);
        const auto want = run_host(ref(), c.op, in, {d}, attrs)[0];
        const auto got = run_host(cpu(), c.op, in, {d}, attrs)[0];
        std::vector<double> b(want.size());
        axon::tol::function_magnitudes(op_id(c.op), in[0].values.data(), in.size() > 1 ? in[1].values.data() : nullptr,
                                       static_cast<int64_t>(want.size()), d.empty() ? 1 : d.back(), tanh_form != 0,
                                       b.data());
        const auto r = compare(got, want, [&](size_t i) { return tol::sum_allowed(want[i], b[i]); });
        INFO(r.report);
        CHECK(r.ok);
        worst = std::max(worst, r.worst_excess);
      }
      UNSCOPED_INFO(c.op << (tanh_form ? " (tanh form)" : "") << ": worst " << worst << " of the bound");
    }
}

TEST_CASE("the exp-based activations give finite results at huge and infinite inputs", "[activations][cpu]") {
  // e^x overflowing or underflowing inside a function must not turn into NaN
  // or infinity where the function itself is finite. (At x = -inf, x *
  // sigmoid(x) and x Phi(x) are NaN, in TensorFlow too: left out for Silu and Gelu.)
  const std::vector<float> huge = {1e30f, -1e30f, 3e38f, -3e38f, 1e6f, -1e6f, 89.0f, -89.0f, 104.0f, -104.0f};
  std::vector<float> with_inf = huge;
  with_inf.insert(with_inf.end(), {kInf, -kInf});
  for (const char* op : {"Sigmoid", "Tanh", "Elu", "Selu", "Softplus", "Silu", "Gelu"})
    for (int tanh_form = 0; tanh_form < (std::string(op) == "Gelu" ? 2 : 1); ++tanh_form) {
      const axon_gelu_attrs gelu{sizeof(axon_gelu_attrs), tanh_form};
      const bool zero_times_inf = std::string(op) == "Silu" || std::string(op) == "Gelu";
      const std::vector<float>& x = zero_times_inf ? huge : with_inf;
      const std::vector<int64_t> d{static_cast<int64_t>(x.size())};
      for (TestDevice* dev : {&cpu(), &ref()}) {
        const auto y = run_host(*dev, op, {HostTensor{d, x}}, {d}, &gelu)[0];
        for (size_t i = 0; i < x.size(); ++i) {
          INFO(op << " tanh_form " << tanh_form << " x = " << x[i] << ": y = " << y[i]);
          CHECK_FALSE(std::isnan(y[i]));
          if (!std::isinf(x[i])) CHECK(std::isfinite(y[i]));
        }
      }
    }
  // Their derivatives' limits are 0 and dy; |d/dx| <= 1.13 everywhere.
  const std::vector<int64_t> d{static_cast<int64_t>(huge.size())};
  const std::vector<float> dy(huge.size(), 0.5f);
  for (const char* op : {"SoftplusGrad", "SiluGrad", "GeluGrad"})
    for (int tanh_form = 0; tanh_form < (std::string(op) == "GeluGrad" ? 2 : 1); ++tanh_form) {
      const axon_gelu_attrs gelu{sizeof(axon_gelu_attrs), tanh_form};
      for (TestDevice* dev : {&cpu(), &ref()}) {
        const auto dx = run_host(*dev, op, {HostTensor{d, dy}, HostTensor{d, huge}}, {d}, &gelu)[0];
        for (size_t i = 0; i < huge.size(); ++i) {
          INFO(op << " tanh_form " << tanh_form << " x = " << huge[i] << ": dx = " << dx[i]);
          CHECK(std::isfinite(dx[i]));
          CHECK(std::fabs(dx[i]) <= 0.5f * 1.13f);
        }
      }
    }
}

TEST_CASE("Relu6, LeakyRelu, ClippedRelu and their gradients equal the reference, ties included",
          "[activations][cpu]") {
  std::mt19937 rng(1402);
  const axon_leaky_relu_attrs leaky{sizeof(axon_leaky_relu_attrs), 0.2f};
  const axon_leaky_relu_attrs leaky_steep{sizeof(axon_leaky_relu_attrs), -1.5f};
  const std::vector<axon_clipped_relu_attrs> clipped = {
      {sizeof(axon_clipped_relu_attrs), 0.0f, kInf, 0.0f},  {sizeof(axon_clipped_relu_attrs), 0.1f, 6.0f, 0.0f},
      {sizeof(axon_clipped_relu_attrs), 0.3f, 2.0f, 1.0f},  {sizeof(axon_clipped_relu_attrs), 0.1f, kInf, -1.0f},
      {sizeof(axon_clipped_relu_attrs), 0.0f, 0.0f, 0.5f},  {sizeof(axon_clipped_relu_attrs), -0.2f, 3.5f, 0.25f}};
  for (const auto& d : kShapes) {
    INFO("shape " << shape_str(d));
    // Halves in [-8, 8]: many values exactly at 0, 6, the thresholds and the maxima.
    std::vector<float> x = random_floats(rng, numel(d), -8.0f, 8.0f);
    for (size_t i = 0; i < x.size(); i += 2) x[i] = std::round(x[i] * 4.0f) / 4.0f;
    const HostTensor xt{d, x}, dy{d, random_floats(rng, numel(d))};
    auto same = [&](const char* op, std::vector<HostTensor> in, const void* attrs) {
      INFO(op);
      const auto r = compare_exact(run_host(cpu(), op, in, {d}, attrs)[0], run_host(ref(), op, in, {d}, attrs)[0]);
      INFO(r.report);
      CHECK(r.ok);
    };
    same("Relu6", {xt}, nullptr);
    same("Relu6Grad", {dy, xt}, nullptr);
    for (const auto* a : {&leaky, &leaky_steep}) {
      same("LeakyRelu", {xt}, a);
      same("LeakyReluGrad", {dy, xt}, a);
    }
    for (const auto& a : clipped) {
      INFO("slope " << a.negative_slope << " max " << a.max_value << " threshold " << a.threshold);
      same("ClippedRelu", {xt}, &a);
      same("ClippedReluGrad", {dy, xt}, &a);
    }
  }
}

TEST_CASE("the piecewise-linear activations follow the op table at their kinks", "[activations][ref][cpu]") {
  // Hand-worked: Relu6 and its gradient at 0 and 6, LeakyRelu's gradient at 0
  // (alpha, as TensorFlow's), ClippedRelu at its threshold and maximum.
  const std::vector<int64_t> d{6};
  const HostTensor x{d, {-1.0f, 0.0f, 3.0f, 6.0f, 7.0f, NAN}}, dy{d, {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f}};
  const axon_leaky_relu_attrs leaky{sizeof(axon_leaky_relu_attrs), 0.25f};
  const axon_clipped_relu_attrs clip{sizeof(axon_clipped_relu_attrs), 0.5f, 6.0f, 3.0f};
  for (TestDevice* dev : {&cpu(), &ref()}) {
    const auto r6 = run_host(*dev, "Relu6", {x}, {d})[0];
    CHECK(std::vector<float>(r6.begin(), r6.end() - 1) == std::vector<float>{0.0f, 0.0f, 3.0f, 6.0f, 6.0f});
    CHECK(std::isnan(r6.back()));
    CHECK(run_host(*dev, "Relu6Grad", {dy, x}, {d})[0] == std::vector<float>{0, 0, 1, 0, 0, 0});
    CHECK(run_host(*dev, "LeakyReluGrad", {dy, x}, {d}, &leaky)[0] ==
          std::vector<float>{0.25f, 0.25f, 1.0f, 1.0f, 1.0f, 0.25f});
    const auto cr = run_host(*dev, "ClippedRelu", {x}, {d}, &clip)[0];
    CHECK(std::vector<float>(cr.begin(), cr.end() - 1) == std::vector<float>{-2.0f, -1.5f, 0.0f, 6.0f, 6.0f});
    CHECK(run_host(*dev, "ClippedReluGrad", {dy, x}, {d}, &clip)[0] ==
          std::vector<float>{0.5f, 0.5f, 0.5f, 0.0f, 0.0f, 0.5f});
  }
}

TEST_CASE("the reference's activation gradients agree with finite differences of its forward ops",
          "[activations][gradcheck][ref]") {
  // d/dx f at x by central differences of the reference's own forward op (in
  // float, step h), against the gradient op with dy = 1.
  std::mt19937 rng(1403);
  const float h = 1e-2f;
  std::vector<float> x = random_floats(rng, 4000, -6.0f, 6.0f);
  for (auto& v : x)
    if (std::fabs(v) < 4 * h) v += 8 * h;  // Selu's kink at 0
  const std::vector<int64_t> d{static_cast<int64_t>(x.size())};
  std::vector<float> up(x), down(x);
  for (size_t i = 0; i < x.size(); ++i) up[i] = x[i] + h, down[i] = x[i] - h;
  const std::vector<float> ones(x.size(), 1.0f);
  for (const Case& c : kSmooth) {
    if (c.forward == nullptr) continue;
    for (int tanh_form = 0; tanh_form < (std::strstr(c.op, "Gelu") ? 2 : 1); ++tanh_form) {
      const axon_gelu_attrs gelu{sizeof(axon_gelu_attrs), tanh_form};
      INFO(c.op << (tanh_form ? " (tanh form)" : ""));
      const auto fu = run_host(ref(), c.forward, {HostTensor{d, up}}, {d}, &gelu)[0];
      const auto fdn = run_host(ref(), c.forward, {HostTensor{d, down}}, {d}, &gelu)[0];
      const auto grad = run_host(ref(), c.op, inputs_of(c, d, x, ones, &gelu), {d}, &gelu)[0];
      size_t bad = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double fd = (double(fu[i]) - fdn[i]) / (double(up[i]) - down[i]);
        if (std::fabs(fd - grad[i]) > 2e-3 * (1.0 + std::fabs(grad[i])) && bad++ < 5)
          UNSCOPED_INFO("x = " << x[i] << ": finite difference " << fd << ", gradient op " << grad[i]);
      }
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("activation results do not depend on the CPU device's thread count", "[activations][determinism][cpu]") {
  std::mt19937 rng(1404);
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  const std::vector<int64_t> d{5, 70001};
  const HostTensor x{d, activation_inputs(rng, numel(d))}, dy{d, random_floats(rng, numel(d))};
  const axon_gelu_attrs gelu{sizeof(axon_gelu_attrs), 0};
  for (const Case& c : kSmooth) {
    INFO(c.op);
    const std::vector<HostTensor> in =
        c.forward == nullptr ? std::vector<HostTensor>{x} : std::vector<HostTensor>{dy, x};
    CHECK(compare_exact(run_host(three, c.op, in, {d}, &gelu)[0], run_host(one, c.op, in, {d}, &gelu)[0]).ok);
  }
}

TEST_CASE("NaN passes through every activation", "[activations][ref][cpu]") {
  const std::vector<int64_t> d{3};
  const HostTensor x{d, {NAN, 1.0f, -1.0f}};
  const axon_leaky_relu_attrs leaky{sizeof(axon_leaky_relu_attrs), 0.2f};
  const axon_clipped_relu_attrs clip{sizeof(axon_clipped_relu_attrs), 0.0f, 6.0f, 0.5f};
  const axon_gelu_attrs erf_form{sizeof(axon_gelu_attrs), 0}, tanh_form{sizeof(axon_gelu_attrs), 1};
  const std::vector<std::pair<const char*, const void*>> ops = {
      {"Sigmoid", nullptr}, {"Tanh", nullptr},  {"Elu", nullptr},     {"Selu", nullptr},       {"Softplus", nullptr},
      {"Silu", nullptr},    {"Gelu", &erf_form}, {"Gelu", &tanh_form}, {"Relu6", nullptr},      {"LeakyRelu", &leaky},
      {"ClippedRelu", &clip}};
  for (TestDevice* dev : {&cpu(), &ref()})
    for (const auto& [op, attrs] : ops) {
      INFO(op);
      const auto y = run_host(*dev, op, {x}, {d}, attrs)[0];
      CHECK(std::isnan(y[0]));
      CHECK_FALSE(std::isnan(y[1]));
    }
}
