// Finite-difference checks of the reference plugin's gradient ops (the
// oracle must itself be right). For an op f and a random r, L(x) = sum(f(x)*r)
// (in double, from the float outputs); its gradient is the backprop op fed
// with dy = r, compared with central differences (L(x+e) - L(x-e)) / (2e),
// the step taken as the actual float difference of the perturbed values.
//  - Conv2D (in x and in filter) and BiasAdd are linear: any step is exact up
//    to rounding; eps = 0.5, |fd - grad| <= 1e-4 (1 + |grad|).
//  - MaxPool and Relu are piecewise linear: inputs are kept at least 0.005
//    from any kink/tie and eps = 1e-3, so the differences are exact up to
//    rounding; |fd - grad| <= 1e-5 (1 + |grad|).
//  - Softmax cross-entropy is smooth: eps = 1e-2, truncation O(eps^2) plus
//    float rounding of the loss / eps; |fd - grad| <= 1e-3.
#include "kernel_test_util.hpp"

#include <algorithm>
#include <functional>
#include <numeric>

using namespace axon::test;

namespace {

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += double(a[i]) * b[i];
  return s;
}

// Central differences of loss() w.r.t. every element of `x`, against `grad`.
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
    if (err > 1.0) {
      if (bad++ < 5) UNSCOPED_INFO(what << "[" << i << "]: finite difference " << fd << ", gradient op " << grad[i]);
    }
  }
  INFO(what << ": worst error " << worst << " of the tolerance");
  CHECK(bad == 0);
}

// Distinct values 0.01 apart, shuffled: no ties, no value near 0 closer than 0.005.
std::vector<float> spaced_values(std::mt19937& rng, size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.005f + 0.01f * static_cast<float>(i) - 0.01f * static_cast<float>(n / 2);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

}  // namespace

TEST_CASE("reference Conv2D gradients agree with finite differences", "[gradcheck][ref]") {
  std::mt19937 rng(61);
  struct Case {
    std::vector<int64_t> x, w;
    axon_conv2d_attrs a;
  };
  const std::vector<Case> cases{
      {{2, 6, 7, 3}, {3, 2, 3, 4}, {sizeof(axon_conv2d_attrs), 2, 1, 1, 1, AXON_PADDING_SAME}},
      {{1, 7, 6, 2}, {2, 3, 2, 3}, {sizeof(axon_conv2d_attrs), 1, 2, 2, 1, AXON_PADDING_VALID}},
      {{1, 5, 5, 2}, {3, 3, 2, 2}, {sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_SAME}},
  };
  for (const auto& c : cases) {
    INFO("x " << shape_str(c.x) << " filter " << shape_str(c.w));
    auto out = [&](int64_t in, int64_t k, int s, int d) {
      int64_t eff = (k - 1) * d + 1;
      return c.a.padding == AXON_PADDING_SAME ? (in + s - 1) / s : (in - eff) / s + 1;
    };
    std::vector<int64_t> yd{c.x[0], out(c.x[1], c.w[0], c.a.stride_h, c.a.dilation_h), out(c.x[2], c.w[1], c.a.stride_w, c.a.dilation_w), c.w[3]};
    HostTensor x{c.x, random_floats(rng, numel(c.x))}, w{c.w, random_floats(rng, numel(c.w))};
    HostTensor r{yd, random_floats(rng, numel(yd))};
    auto loss = [&] { return dot(run_host(ref(), "Conv2D", {x, w}, {yd}, &c.a)[0], r.values); };
    auto dx = run_host(ref(), "Conv2DBackpropInput", {r, w}, {c.x}, &c.a)[0];
    auto dw = run_host(ref(), "Conv2DBackpropFilter", {x, r}, {c.w}, &c.a)[0];
    fd_check("Conv2DBackpropInput", x.values, dx, loss, 0.5f, 1e-4);
    fd_check("Conv2DBackpropFilter", w.values, dw, loss, 0.5f, 1e-4);
  }
}

TEST_CASE("reference MaxPoolGrad agrees with finite differences of MaxPool", "[gradcheck][ref]") {
  std::mt19937 rng(62);
  for (auto a : {axon_pool_attrs{sizeof(axon_pool_attrs), 2, 2, 2, 2, AXON_PADDING_VALID},
                 axon_pool_attrs{sizeof(axon_pool_attrs), 3, 3, 2, 2, AXON_PADDING_SAME},
                 axon_pool_attrs{sizeof(axon_pool_attrs), 3, 2, 1, 1, AXON_PADDING_VALID}}) {
    INFO("window " << a.window_h << "x" << a.window_w << " stride " << a.stride_h);
    std::vector<int64_t> xd{2, 7, 6, 3};
    auto out = [&](int64_t in, int k, int s) { return a.padding == AXON_PADDING_SAME ? (in + s - 1) / s : (in - k) / s + 1; };
    std::vector<int64_t> yd{2, out(7, a.window_h, a.stride_h), out(6, a.window_w, a.stride_w), 3};
    HostTensor x{xd, spaced_values(rng, numel(xd))}, r{yd, random_floats(rng, numel(yd))};
    HostTensor y{yd, run_host(ref(), "MaxPool", {x}, {yd}, &a)[0]};
    auto dx = run_host(ref(), "MaxPoolGrad", {x, y, r}, {xd}, &a)[0];
    auto loss = [&] { return dot(run_host(ref(), "MaxPool", {x}, {yd}, &a)[0], r.values); };
    fd_check("MaxPoolGrad", x.values, dx, loss, 1e-3f, 1e-5);
  }
}

TEST_CASE("reference ReluGrad and BiasAddGrad agree with finite differences", "[gradcheck][ref]") {
  std::mt19937 rng(63);
  std::vector<int64_t> d{3, 4, 5};
  HostTensor x{d, spaced_values(rng, numel(d))}, r{d, random_floats(rng, numel(d))};
  HostTensor y{d, run_host(ref(), "Relu", {x}, {d})[0]};
  auto dx = run_host(ref(), "ReluGrad", {r, y}, {d})[0];
  fd_check("ReluGrad", x.values, dx, [&] { return dot(run_host(ref(), "Relu", {x}, {d})[0], r.values); }, 1e-3f, 1e-5);

  HostTensor b{{5}, random_floats(rng, 5)};
  auto db = run_host(ref(), "BiasAddGrad", {r}, {{5}})[0];
  fd_check("BiasAddGrad", b.values, db, [&] { return dot(run_host(ref(), "BiasAdd", {x, b}, {d})[0], r.values); }, 0.5f, 1e-4);
}

TEST_CASE("reference softmax cross-entropy gradient agrees with finite differences", "[gradcheck][ref]") {
  std::mt19937 rng(64);
  const int64_t n = 4, k = 5;
  auto logits = random_floats(rng, static_cast<size_t>(n * k), -3.0f, 3.0f);
  std::vector<int32_t> labels{0, 4, 2, 2};
  DeviceTensor l(ref(), AXON_FLOAT32, {n, k}), lb(ref(), AXON_INT32, {n}), loss(ref(), AXON_FLOAT32, {n}),
      grad(ref(), AXON_FLOAT32, {n, k});
  lb.upload(labels);
  auto total = [&] {
    l.upload(logits);
    run_op(ref(), "SparseSoftmaxCrossEntropyWithLogits", {&l, &lb}, {&loss, &grad});
    auto v = loss.download<float>();
    return std::accumulate(v.begin(), v.end(), 0.0);
  };
  total();
  auto g = grad.download<float>();
  // softmax - onehot: each row sums to 0.
  for (int64_t i = 0; i < n; ++i) CHECK(std::fabs(std::accumulate(g.begin() + i * k, g.begin() + (i + 1) * k, 0.0)) < 1e-6);
  fd_check("SparseSoftmaxCrossEntropyWithLogits dlogits", logits, g, total, 1e-2f, 1e-3);
}
