// Each layer's backward against central finite differences of its forward,
// on the CPU device and on the reference device (when its plugin is built).
//
// Method: for a layer y = f(x; w) and a fixed random r, the scalar
// L = sum(r * y) (in double on the host) has dL/dy = r, so backward(x, r)
// must return dL/dx and fill dL/dw. Conv2D, Dense and MaxPool are piecewise
// linear, so central differences are exact up to float32 rounding as long as
// no ReLU or max switches between x - h and x + h. That is made impossible,
// not merely unlikely: for ReLU layers r is zero wherever the pre-activation
// (read from a linear twin with the same weights) is within 0.1 of zero, and
// h = 0.05 moves any pre-activation by less than 0.1 (|x|, |w| <= 1); MaxPool
// inputs are distinct values 0.3 apart. Every coordinate is checked.
// Tolerance: |fd - analytic| <= 1e-4 + 1e-3 * |analytic| (observed: <= 2e-5).
// The loss is smooth: h = 1e-2, tolerance 1e-4 + 1e-3 * |analytic|. The whole model (loss of a
// 3-image batch, 12 random coordinates per parameter tensor): h = 1e-3, and
// the gradient must match the central, forward or backward difference within
// 2e-3 + 5e-2 * |analytic| (a ReLU or max switch near a coordinate spoils at
// most the differences that cross it).
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/sequential.hpp>

#include <catch2/catch.hpp>

#include <cmath>

using namespace axon;
using namespace axon::nn;

namespace {

std::vector<Device*> devices_under_test() {
  Runtime& rt = test::test_runtime();
  std::vector<Device*> out;
  for (const char* name : {"cpu:0", "ref:0"})
    if (Device* d = rt.find_device(name)) out.push_back(d);
  return out;
}

std::vector<float> random_vector(size_t n, Rng& rng, float lo = -1, float hi = 1) {
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(lo, hi);
  return v;
}

double dot(const Tensor& y, const std::vector<float>& r) {
  const std::vector<float> v = y.to_vector<float>();
  double s = 0;
  for (size_t i = 0; i < v.size(); ++i) s += static_cast<double>(v[i]) * r[i];
  return s;
}

struct Stats {
  int checked = 0, skipped = 0;
  double max_abs_err = 0;
};

bool close(double fd, double an, double atol, double rtol) { return std::fabs(fd - an) <= atol + rtol * std::fabs(an); }

// Finite differences of L(values) = sum(r * layer.forward(x)) with respect to
// each element of `target` (x itself or a parameter), compared to `analytic`.
void check_against_fd(Layer& layer, Tensor& x, Tensor& target, const std::vector<float>& analytic,
                      const std::vector<float>& r, const std::string& what) {
  constexpr double h = 5e-2, atol = 1e-4, rtol = 1e-3;
  std::vector<float> values = target.to_vector<float>();
  double max_err = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    const float keep = values[i];
    auto loss_at = [&](double delta) {
      values[i] = static_cast<float>(keep + delta);
      target.copy_from_host(values.data(), values.size() * sizeof(float));
      return dot(layer.forward(x), r);
    };
    const double fd = (loss_at(h) - loss_at(-h)) / (2 * h);
    values[i] = keep;
    max_err = std::max(max_err, std::fabs(fd - analytic[i]));
    INFO(what << "[" << i << "]: finite difference " << fd << ", backward " << analytic[i]);
    REQUIRE(close(fd, analytic[i], atol, rtol));
  }
  target.copy_from_host(values.data(), values.size() * sizeof(float));
  layer.forward(x);
  SUCCEED(what << ": " << values.size() << " coordinates, max |error| " << max_err);
}

// Builds `layer` for per-sample shape `in` and checks dx and every parameter.
// `linear_twin`, for a ReLU layer: the same layer without activation, built
// from the same seed (so with the same weights), to read pre-activations.
void gradcheck_layer(Device& dev, Layer& layer, const Shape& in, int64_t n, uint64_t seed, bool distinct_inputs = false,
                     Layer* linear_twin = nullptr) {
  DeviceScope scope(dev);
  Rng rng(seed);
  layer.build(in, dev, rng);
  if (linear_twin != nullptr) {
    Rng twin_rng(seed);
    linear_twin->build(in, dev, twin_rng);
  }
  Shape xs{n};
  xs.insert(xs.end(), in.begin(), in.end());
  std::vector<float> xv = random_vector(static_cast<size_t>(numel(xs)), rng);
  if (distinct_inputs) {
    // Values 0.3 apart in random order: no max flips under +-h.
    std::vector<uint32_t> perm(xv.size());
    for (uint32_t i = 0; i < perm.size(); ++i) perm[i] = i;
    rng.shuffle(perm);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.3f * static_cast<float>(perm[i]) - 10.0f;
  }
  Tensor x = make_tensor(dev, xs, xv);
  const Tensor& y = layer.forward(x);
  std::vector<float> r = random_vector(static_cast<size_t>(y.numel()), rng);
  if (linear_twin != nullptr) {
    auto lp = layer.parameters(), tp = linear_twin->parameters();
    for (size_t i = 0; i < lp.size(); ++i) REQUIRE(lp[i]->value.to_vector<float>() == tp[i]->value.to_vector<float>());
    const std::vector<float> z = linear_twin->forward(x).to_vector<float>();
    int zeroed = 0;
    for (size_t k = 0; k < z.size(); ++k)
      if (std::fabs(z[k]) < 0.1f) r[k] = 0, ++zeroed;
    REQUIRE(zeroed * 4 < static_cast<int>(z.size()));  // most outputs still take part
  }
  Tensor dy = make_tensor(dev, y.shape(), r);
  const Tensor& dx = layer.backward(x, dy, true);
  const std::vector<float> dx_host = dx.to_vector<float>();
  std::vector<std::vector<float>> grads;
  for (Parameter* p : layer.parameters()) grads.push_back(p->grad.to_vector<float>());

  check_against_fd(layer, x, x, dx_host, r, layer.name() + " dx");
  auto params = layer.parameters();
  for (size_t i = 0; i < params.size(); ++i) check_against_fd(layer, x, params[i]->value, grads[i], r, params[i]->name);
  // Without need_dx the parameter gradients are the same and no dx is made.
  layer.forward(x);
  CHECK_FALSE(layer.backward(x, dy, false).defined());
  for (size_t i = 0; i < params.size(); ++i) CHECK(params[i]->grad.to_vector<float>() == grads[i]);
}

}  // namespace

TEST_CASE("gradcheck: Conv2D", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    Conv2D linear(4, 3, Activation::linear);
    gradcheck_layer(*d, linear, {6, 5, 3}, 2, 1);
    Conv2D relu(5, 3, Activation::relu), twin(5, 3, Activation::linear);
    gradcheck_layer(*d, relu, {7, 7, 2}, 2, 2, false, &twin);
    Conv2D strided_same(3, 3, Activation::linear, 2, AXON_PADDING_SAME);
    gradcheck_layer(*d, strided_same, {7, 6, 2}, 2, 3);
  }
}

TEST_CASE("gradcheck: Dense", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    Dense linear(4);
    gradcheck_layer(*d, linear, {7}, 3, 4);
    Dense relu(6, Activation::relu), twin(6, Activation::linear);
    gradcheck_layer(*d, relu, {9}, 4, 5, false, &twin);
  }
}

TEST_CASE("gradcheck: MaxPooling2D", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    MaxPooling2D even(2);
    gradcheck_layer(*d, even, {4, 6, 3}, 2, 6, true);
    MaxPooling2D odd(2);  // the ragged last row and column get no gradient
    gradcheck_layer(*d, odd, {5, 5, 2}, 2, 7, true);
  }
}

TEST_CASE("gradcheck: Flatten is a view in NHWC order", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    DeviceScope scope(*d);
    Rng rng(8);
    Flatten f;
    CHECK(f.build({2, 3, 4}, *d, rng) == Shape{24});
    std::vector<float> xv = random_vector(48, rng);
    Tensor x = make_tensor(*d, {2, 2, 3, 4}, xv);
    const Tensor& y = f.forward(x);
    CHECK(y.shape() == Shape{2, 24});
    CHECK(y.data() == x.data());
    CHECK(y.to_vector<float>() == xv);
    const Tensor& dx = f.backward(x, y, true);
    CHECK(dx.shape() == x.shape());
  }
}

TEST_CASE("gradcheck: SparseCategoricalCrossentropy(from_logits)", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    DeviceScope scope(*d);
    Rng rng(9);
    const int64_t n = 5, c = 7;
    std::vector<float> lv = random_vector(n * c, rng, -3, 3);
    std::vector<int32_t> labels{0, 6, 3, 3, 1};
    Tensor logits = make_tensor(*d, {n, c}, lv);
    Tensor lab = Tensor::from_vector<int32_t>(*d, AXON_INT32, {n}, labels);
    SparseCategoricalCrossentropy loss;
    loss.forward_backward(logits, lab);
    const std::vector<float> g = loss.gradient(n).to_vector<float>();
    // Reference value of the mean loss in double.
    auto mean_loss = [&](const std::vector<float>& l) {
      double s = 0;
      for (int64_t i = 0; i < n; ++i) {
        double mx = -1e300;
        for (int64_t j = 0; j < c; ++j) mx = std::max(mx, double{l[i * c + j]});
        double z = 0;
        for (int64_t j = 0; j < c; ++j) z += std::exp(l[i * c + j] - mx);
        s += std::log(z) + mx - l[i * c + labels[i]];
      }
      return s / n;
    };
    const std::vector<float> per = loss.per_sample_loss(n).to_vector<float>();
    double dev_mean = 0;
    for (float v : per) dev_mean += v;
    CHECK(dev_mean / n == Approx(mean_loss(lv)).epsilon(1e-5));
    constexpr double h = 1e-2;
    for (size_t i = 0; i < lv.size(); ++i) {
      const float keep = lv[i];
      lv[i] = static_cast<float>(keep + h);
      logits.copy_from_host(lv.data(), lv.size() * 4);
      loss.forward_backward(logits, lab);
      double lp = 0;
      for (float v : loss.per_sample_loss(n).to_vector<float>()) lp += v;
      lv[i] = static_cast<float>(keep - h);
      logits.copy_from_host(lv.data(), lv.size() * 4);
      loss.forward_backward(logits, lab);
      double lm = 0;
      for (float v : loss.per_sample_loss(n).to_vector<float>()) lm += v;
      lv[i] = keep;
      const double fd = (lp - lm) / n / (2 * h);
      INFO("dlogits[" << i << "]: finite difference " << fd << ", gradient " << g[i]);
      CHECK(close(fd, g[i], 1e-4, 1e-3));
    }
  }
}

TEST_CASE("gradcheck: the whole CNN chains its layers correctly", "[gradcheck]") {
  Device* d = test::test_runtime().find_device("cpu:0");
  REQUIRE(d != nullptr);
  auto model = make_cnn(10);
  model->build({28, 28, 1}, *d, 11);
  model->compile();
  Rng rng(12);
  data::HostBatch batch;
  batch.size = 3;
  for (int i = 0; i < 3 * 784; ++i) batch.images.push_back(static_cast<uint8_t>(rng.below(256)));
  batch.labels = {2, 7, 4};
  model->compute_gradients(batch);
  auto mean_loss = [&] {
    model->compute_gradients(batch);  // refreshes per_sample_loss for these weights
    double s = 0;
    for (float v : model->per_sample_loss(3).to_vector<float>()) s += v;
    return s / 3;
  };
  constexpr double h = 1e-3;
  int checked = 0, central = 0;
  double max_err = 0;
  for (Parameter* p : model->parameters()) {
    model->compute_gradients(batch);
    const std::vector<float> g = p->grad.to_vector<float>();
    std::vector<float> v = p->value.to_vector<float>();
    for (int s = 0; s < 12; ++s) {
      const size_t i = static_cast<size_t>(rng.below(v.size()));
      const float keep = v[i];
      auto at = [&](double delta) {
        v[i] = static_cast<float>(keep + delta);
        p->value.copy_from_host(v.data(), v.size() * 4);
        return mean_loss();
      };
      const double lp = at(h), l0 = at(0), lm = at(-h);
      v[i] = keep;
      p->value.copy_from_host(v.data(), v.size() * 4);
      const double c = (lp - lm) / (2 * h), f = (lp - l0) / h, b = (l0 - lm) / h;
      ++checked;
      central += close(c, g[i], 2e-3, 5e-2);
      max_err = std::max(max_err, std::min({std::fabs(c - g[i]), std::fabs(f - g[i]), std::fabs(b - g[i])}));
      INFO(p->name << "[" << i << "]: backward " << g[i] << "; differences central " << c << ", forward " << f
                   << ", backward " << b);
      CHECK((close(c, g[i], 2e-3, 5e-2) || close(f, g[i], 2e-3, 5e-2) || close(b, g[i], 2e-3, 5e-2)));
    }
  }
  INFO(central << " of " << checked << " matched the central difference; max |error| " << max_err);
  CHECK(central * 10 >= checked * 9);
}
