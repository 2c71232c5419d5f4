// Softmax and SoftmaxGrad over the last dimension: the CPU plugin against the
// reference plugin within axon/function_bounds.hpp's bound (16 u B + u |ref|,
// B = y (2 + log2 C + |x - max|) for Softmax, y (|dy| + sum |dy y|) for
// SoftmaxGrad), and the reference's SoftmaxGrad against finite differences
// of its Softmax (|fd - grad| <= 1e-3 (1 + |grad|)).
#include "kernel_test_util.hpp"

#include <axon/function_bounds.hpp>

#include <algorithm>

using namespace axon::test;

namespace {

Comparison compare_function(const char* op, const std::vector<HostTensor>& in, const std::vector<float>& got,
                            const std::vector<float>& want) {
  std::vector<double> b(want.size());
  axon::tol::function_magnitudes(axon::find_op(op)->id, in[0].values.data(),
                                 in.size() > 1 ? in[1].values.data() : nullptr, static_cast<int64_t>(want.size()),
                                 in[0].dims.back(), false, b.data());
  return compare(got, want, [&](size_t i) { return tol::sum_allowed(want[i], b[i]); });
}

// Logits: uniform in [-scale, scale], some rows with masked (-inf) entries,
// one row with a huge spread.
std::vector<float> logits(std::mt19937& rng, const std::vector<int64_t>& d, float scale) {
  std::vector<float> v = random_floats(rng, numel(d), -scale, scale);
  const int64_t c = d.back();
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i) / c;
    if (row % 3 == 1 && i % 4 == 0 && static_cast<int64_t>(i) % c != 0) v[i] = -INFINITY;  // never the whole row
    if (row == 2 && i % 5 == 0) v[i] = (i % 2 ? 1e30f : -1e30f);
  }
  return v;
}

}  // namespace

TEST_CASE("Softmax and SoftmaxGrad match the reference within the function bound", "[softmax][cpu]") {
  std::mt19937 rng(1420);
  const std::vector<std::vector<int64_t>> shapes = {{1, 1}, {4, 10}, {64, 10}, {3, 5, 7}, {7, 1000}, {2, 4099},
                                                    {3000, 37}, {5}, {0, 10}, {2, 0, 3}};
  for (const auto& d : shapes)
    for (float scale : {1.0f, 30.0f}) {
      INFO("shape " << shape_str(d) << " logits in +-" << scale);
      const HostTensor x{d, logits(rng, d, scale)};
      const auto want = run_host(ref(), "Softmax", {x}, {d})[0];
      const auto got = run_host(cpu(), "Softmax", {x}, {d})[0];
      const auto r = compare_function("Softmax", {x}, got, want);
      INFO("Softmax " << r.report);
      CHECK(r.ok);
      const HostTensor y{d, want}, dy{d, random_floats(rng, numel(d), -1.0f, 1.0f)};
      const auto gwant = run_host(ref(), "SoftmaxGrad", {dy, y}, {d})[0];
      const auto rg = compare_function("SoftmaxGrad", {dy, y}, run_host(cpu(), "SoftmaxGrad", {dy, y}, {d})[0], gwant);
      INFO("SoftmaxGrad " << rg.report);
      CHECK(rg.ok);
    }
}

TEST_CASE("Softmax rows sum to 1 and a row of one class is 1", "[softmax][ref][cpu]") {
  std::mt19937 rng(1421);
  const std::vector<int64_t> d{9, 333};
  const HostTensor x{d, logits(rng, d, 20.0f)};
  for (TestDevice* dev : {&cpu(), &ref()}) {
    const auto y = run_host(*dev, "Softmax", {x}, {d})[0];
    for (int64_t r = 0; r < d[0]; ++r) {
      double s = 0;
      for (int64_t j = 0; j < d[1]; ++j) s += y[static_cast<size_t>(r * d[1] + j)];
      CHECK(std::fabs(s - 1.0) < 1e-5);
    }
    const HostTensor one_class{{3, 1}, {-5.0f, 0.0f, 1e30f}};
    CHECK(run_host(*dev, "Softmax", {one_class}, {{3, 1}})[0] == std::vector<float>{1, 1, 1});
  }
}

TEST_CASE("the reference's SoftmaxGrad agrees with finite differences of its Softmax", "[softmax][gradcheck][ref]") {
  // L(x) = sum(softmax(x) * r); dL/dx = SoftmaxGrad(r, softmax(x)).
  std::mt19937 rng(1422);
  const std::vector<int64_t> d{4, 9};
  std::vector<float> x = random_floats(rng, numel(d), -3.0f, 3.0f);
  const std::vector<float> r = random_floats(rng, numel(d));
  auto loss = [&] {
    const auto y = run_host(ref(), "Softmax", {HostTensor{d, x}}, {d})[0];
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += double(y[i]) * r[i];
    return s;
  };
  const auto y = run_host(ref(), "Softmax", {HostTensor{d, x}}, {d})[0];
  const auto grad = run_host(ref(), "SoftmaxGrad", {HostTensor{d, r}, HostTensor{d, y}}, {d})[0];
  const float h = 1e-2f;
  for (size_t i = 0; i < x.size(); ++i) {
    const float x0 = x[i];
    x[i] = x0 + h;
    const float up = x[i];
    const double lp = loss();
    x[i] = x0 - h;
    const float down = x[i];
    const double lm = loss();
    x[i] = x0;
    const double fd = (lp - lm) / (double(up) - down);
    INFO("element " << i << ": finite difference " << fd << ", SoftmaxGrad " << grad[i]);
    CHECK(std::fabs(fd - grad[i]) <= 1e-3 * (1.0 + std::fabs(grad[i])));
  }
}

TEST_CASE("Softmax results do not depend on the CPU device's thread count", "[softmax][determinism][cpu]") {
  std::mt19937 rng(1423);
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  for (const std::vector<int64_t>& d : {std::vector<int64_t>{4096, 37}, {3, 100003}}) {
    const HostTensor x{d, logits(rng, d, 10.0f)}, dy{d, random_floats(rng, numel(d))};
    const auto y = run_host(one, "Softmax", {x}, {d})[0];
    CHECK(compare_exact(run_host(three, "Softmax", {x}, {d})[0], y).ok);
    const HostTensor yt{d, y};
    const auto g1 = run_host(one, "SoftmaxGrad", {dy, yt}, {d})[0];
    CHECK(compare_exact(run_host(three, "SoftmaxGrad", {dy, yt}, {d})[0], g1).ok);
  }
}
