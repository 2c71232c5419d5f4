// LayerNorm and LayerNormGrad (ABI 2.3) on the CPU plugin against the
// reference plugin, judged by the magnitudes of axon/tolerance_layer_norm.hpp
// with t = 1 (both sum a row in double): rows of a ConvNeXt layer (many rows:
// both threads), one value, a long row, odd widths and rows far from 0;
// results independent of the thread count; the reference's gradients against
// finite differences of its forward; the validator's messages for bad calls.
#include "kernel_test_util.hpp"

#include <axon/tolerance_layer_norm.hpp>

#include <cmath>

using namespace axon::test;

namespace {

struct LnCase {
  int64_t rows, k;
  float epsilon;
  float centre;  // x drawn around it: rows far from 0 test the variance's cancellation
};

const std::vector<LnCase>& ln_cases() {
  static const std::vector<LnCase> cases{{64 * 8 * 8, 96, 1e-6f, 0.0f}, {37, 5, 1e-3f, 0.0f}, {3, 1, 1e-3f, 0.0f},
                                         {2, 4099, 1e-5f, 0.0f},        {50, 17, 1e-3f, 1000.0f}};
  return cases;
}

axon_layer_norm_attrs ln_attrs(const LnCase& c) { return {sizeof(axon_layer_norm_attrs), c.epsilon}; }

struct LnInputs {
  HostTensor x, scale, offset;
};

LnInputs ln_inputs(std::mt19937& rng, const LnCase& c) {
  LnInputs in{{{c.rows, c.k}, random_floats(rng, static_cast<size_t>(c.rows * c.k), c.centre - 2, c.centre + 2)},
              {{c.k}, random_floats(rng, static_cast<size_t>(c.k), 0.5f, 1.5f)},
              {{c.k}, random_floats(rng, static_cast<size_t>(c.k), -0.5f, 0.5f)}};
  return in;
}

std::vector<std::vector<int64_t>> forward_dims(const LnCase& c) { return {{c.rows, c.k}, {c.rows}, {c.rows}}; }
std::vector<std::vector<int64_t>> grad_dims(const LnCase& c) { return {{c.rows, c.k}, {c.k}, {c.k}}; }

axon::tol::LayerNormInputs ln_magnitude_inputs(const LnCase& c, const LnInputs& in) {
  axon::tol::LayerNormInputs m{};
  m.x = in.x.values.data(), m.rows = c.rows, m.k = c.k;
  m.scale = in.scale.values.data(), m.offset = in.offset.values.data(), m.epsilon = c.epsilon;
  return m;
}

double ln_dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

Comparison compare_magnitudes(const std::vector<float>& got, const std::vector<float>& want,
                              const std::vector<double>& b) {
  return compare(got, want, [&](size_t i) { return axon::tol::sum_allowed(want[i], b[i]); });
}

}  // namespace

TEST_CASE("LayerNorm and LayerNormGrad: CPU matches the reference", "[layers][layer_norm][cpu]") {
  std::mt19937 rng(431);
  for (const LnCase& c : ln_cases()) {
    INFO("x [" << c.rows << ", " << c.k << "], epsilon " << c.epsilon << ", centred at " << c.centre);
    const axon_layer_norm_attrs a = ln_attrs(c);
    const LnInputs in = ln_inputs(rng, c);
    const auto want = run_host(ref(), "LayerNorm", {in.x, in.scale, in.offset}, forward_dims(c), &a);
    const auto got = run_host(cpu(), "LayerNorm", {in.x, in.scale, in.offset}, forward_dims(c), &a);
    const auto b = axon::tol::layer_norm_magnitudes(ln_magnitude_inputs(c, in));
    for (size_t k = 0; k < 3; ++k) {
      const Comparison r = compare_magnitudes(got[k], want[k], b[k]);
      INFO("output " << k << ": " << r.report);
      CHECK(r.ok);
    }
    // The gradient from the reference's mean and inv_std.
    const HostTensor dy{{c.rows, c.k}, random_floats(rng, static_cast<size_t>(c.rows * c.k))};
    const std::vector<HostTensor> grad_in{dy, in.x, in.scale, HostTensor{{c.rows}, want[1]},
                                          HostTensor{{c.rows}, want[2]}};
    const auto gwant = run_host(ref(), "LayerNormGrad", grad_in, grad_dims(c), &a);
    const auto ggot = run_host(cpu(), "LayerNormGrad", grad_in, grad_dims(c), &a);
    const auto gb = axon::tol::layer_norm_grad_magnitudes(ln_magnitude_inputs(c, in), dy.values.data());
    for (size_t k = 0; k < 3; ++k) {
      const Comparison r = compare_magnitudes(ggot[k], gwant[k], gb[k]);
      INFO("gradient output " << k << ": " << r.report);
      CHECK(r.ok);
    }
  }
}

TEST_CASE("LayerNorm of a row of one value or of equal values is the offset", "[layers][layer_norm][cpu]") {
  for (TestDevice* dev : {&ref(), &cpu()}) {
    const axon_layer_norm_attrs a{sizeof(axon_layer_norm_attrs), 1e-3f};
    const HostTensor x{{2, 3}, {5, 5, 5, -2, -2, -2}}, scale{{3}, {2, 3, 4}}, offset{{3}, {0.25f, -1, 7}};
    const auto out = run_host(*dev, "LayerNorm", {x, scale, offset}, {{2, 3}, {2}, {2}}, &a);
    CHECK(out[0] == std::vector<float>{0.25f, -1, 7, 0.25f, -1, 7});
    CHECK(out[1] == std::vector<float>{5, -2});
    CHECK(std::fabs(out[2][0] * std::sqrt(1e-3) - 1) < 1e-6);
  }
}

TEST_CASE("the CPU plugin's LayerNorm and its gradient do not depend on the thread count",
          "[layers][layer_norm][determinism][cpu]") {
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  const LnCase& c = ln_cases()[0];
  auto run_all = [&](TestDevice& dev) {
    std::mt19937 rng(432);
    const axon_layer_norm_attrs a = ln_attrs(c);
    const LnInputs in = ln_inputs(rng, c);
    auto r = run_host(dev, "LayerNorm", {in.x, in.scale, in.offset}, forward_dims(c), &a);
    const HostTensor dy{{c.rows, c.k}, random_floats(rng, static_cast<size_t>(c.rows * c.k))};
    for (auto& o : run_host(dev, "LayerNormGrad",
                            {dy, in.x, in.scale, HostTensor{{c.rows}, r[1]}, HostTensor{{c.rows}, r[2]}}, grad_dims(c),
                            &a))
      r.push_back(o);
    return r;
  };
  const auto a = run_all(one), b = run_all(three);
  REQUIRE(a.size() == 6);
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("output " << i);
    CHECK(compare_exact(b[i], a[i]).ok);
  }
}

// Layer normalization is smooth: eps 1e-2 on values of order 1, 2e-3 (1 + |grad|)
// as batch normalization's check (test_layers.cpp).
TEST_CASE("reference LayerNormGrad agrees with finite differences of LayerNorm", "[layers][layer_norm][gradcheck][ref]") {
  std::mt19937 rng(433);
  for (const LnCase& c : {LnCase{4, 6, 1e-3f, 0.0f}, LnCase{3, 2, 1e-3f, 0.0f}}) {
    INFO("x [" << c.rows << ", " << c.k << "]");
    const axon_layer_norm_attrs a = ln_attrs(c);
    LnInputs in = ln_inputs(rng, c);
    const HostTensor r{{c.rows, c.k}, random_floats(rng, static_cast<size_t>(c.rows * c.k))};
    auto loss = [&] { return ln_dot(run_host(ref(), "LayerNorm", {in.x, in.scale, in.offset}, forward_dims(c), &a)[0], r.values); };
    const auto fwd = run_host(ref(), "LayerNorm", {in.x, in.scale, in.offset}, forward_dims(c), &a);
    const auto g = run_host(ref(), "LayerNormGrad",
                            {r, in.x, in.scale, HostTensor{{c.rows}, fwd[1]}, HostTensor{{c.rows}, fwd[2]}}, grad_dims(c),
                            &a);
    auto check = [&](const char* what, std::vector<float>& x, const std::vector<float>& grad) {
      size_t bad = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const float x0 = x[i];
        x[i] = x0 + 1e-2f;
        const float up = x[i];
        const double lp = loss();
        x[i] = x0 - 1e-2f;
        const float down = x[i];
        const double lm = loss();
        x[i] = x0;
        const double fd = (lp - lm) / (double(up) - double(down));
        if (std::fabs(fd - grad[i]) > 2e-3 * (1.0 + std::fabs(grad[i])) && bad++ < 5)
          UNSCOPED_INFO(what << "[" << i << "]: finite difference " << fd << ", gradient op " << grad[i]);
      }
      CHECK(bad == 0);
    };
    check("dx", in.x.values, g[0]);
    check("scale_backprop", in.scale.values, g[1]);
    check("offset_backprop", in.offset.values, g[2]);
  }
}

TEST_CASE("bad calls of LayerNorm and LayerNormGrad are refused with the validator's message", "[layers][layer_norm][errors]") {
  const axon_layer_norm_attrs ok{sizeof(axon_layer_norm_attrs), 1e-3f}, eps0{sizeof(axon_layer_norm_attrs), 0.0f};
  const std::vector<BadCall> bad{
      {"LayerNorm", {{4, 0}, {0}, {0}}, {{4, 0}, {4}, {4}}, &ok, "LayerNorm: x [4,0] has no values per row to normalise"},
      {"LayerNorm", {{4, 3}, {3}, {3}}, {{4, 3}, {3}, {4}}, &ok, "LayerNorm: mean has shape [3], expected [4]"},
      {"LayerNorm", {{4, 3}, {3}, {3}}, {{4, 3}, {4}, {4}}, &eps0, "LayerNorm: epsilon must be a positive number, got 0"},
      {"LayerNorm", {{2, 4, 3}, {3}, {3}}, {{2, 4, 3}, {8}, {8}}, &ok, "LayerNorm: x must have rank 2"},
      {"LayerNormGrad", {{4, 3}, {4, 3}, {2}, {4}, {4}}, {{4, 3}, {3}, {3}}, &ok,
       "LayerNormGrad: scale has shape [2], expected [3]"},
  };
  check_refused(bad, {&ref(), &cpu()});
}
