// Each layer's backward against central finite differences of its forward,
// on the CPU device and on the reference device (both must be there).
//
// Method: for a layer y = f(x; w) and a fixed random r, the scalar
// L = sum(r * y) (in double on the host) has dL/dy = r, so backward(r)
// must return dL/dx and fill dL/dw. Conv2D, Dense and MaxPool are piecewise
// linear, so central differences are exact up to float32 rounding as long as
// no ReLU or max switches between x - h and x + h. That is made impossible,
// not merely unlikely: for ReLU layers r is zero wherever the pre-activation
// (read from a linear twin with the same weights) is within 0.1 of zero, and
// h = 0.05 moves any pre-activation by less than 0.1 (|x|, |w| <= 1); MaxPool
// inputs are distinct values 0.3 apart. Every coordinate is checked.
// Tolerance: |fd - analytic| <= 1e-4 + 1e-3 * |analytic| (observed: <= 2e-5).
// The loss is smooth: h = 1e-2, tolerance 1e-4 + 1e-3 * |analytic|. The
// whole model: see CnnFixture below (h = 2e-3, 2e-4 + 1e-2 * |analytic|
// where no switch lies within h); its power is tested: a zero gradient and
// one that ignores the batch's last image must fail. Both devices must be
// there: a missing one fails.
#include "train_test_util.hpp"

#include <axon/dispatch.hpp>
#include <axon/nn/initializers.hpp>
#include <axon/nn/layers.hpp>
#include <axon/nn/loss.hpp>
#include <axon/nn/model.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

using namespace axon;
using namespace axon::nn;

namespace {

std::vector<Device*> devices_under_test() {
  Runtime& rt = test::test_runtime();
  std::vector<Device*> out;
  for (const char* name : {"cpu:0", "ref:0"}) {
    Device* d = rt.find_device(name);
    INFO("device " << name << " (the build tree's CPU and reference plugins)");
    REQUIRE(d != nullptr);
    out.push_back(d);
  }
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
  layer.set_training(true);  // a training step: forward keeps what backward needs
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
  const Tensor dx = layer.backward(dy, true);
  const std::vector<float> dx_host = dx.to_vector<float>();
  std::vector<std::vector<float>> grads;
  for (Parameter* p : layer.parameters()) grads.push_back(p->grad.to_vector<float>());

  check_against_fd(layer, x, x, dx_host, r, layer.name() + " dx");
  auto params = layer.parameters();
  for (size_t i = 0; i < params.size(); ++i) check_against_fd(layer, x, params[i]->value, grads[i], r, params[i]->name);
  // Without need_dx the parameter gradients are the same and no dx is made.
  layer.forward(x);
  CHECK_FALSE(layer.backward(dy, false).defined());
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
    Conv2D no_bias(4, 3, Activation::relu, 2, AXON_PADDING_SAME, "conv2d", false),
        no_bias_twin(4, 3, Activation::linear, 2, AXON_PADDING_SAME, "conv2d", false);
    gradcheck_layer(*d, no_bias, {6, 7, 2}, 2, 9, false, &no_bias_twin);
    CHECK(no_bias.parameters().size() == 1);
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
    MaxPooling2D overlapping_same(3, 2, AXON_PADDING_SAME);  // windows overlap and are clipped
    gradcheck_layer(*d, overlapping_same, {5, 6, 2}, 2, 10, true);
    CHECK(overlapping_same.output_shape() == Shape{3, 3, 2});
  }
}

TEST_CASE("gradcheck: ReLU layer", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    ReLU relu;
    gradcheck_layer(*d, relu, {3, 4, 2}, 2, 11, true);  // inputs 0.3 apart, none within h of the kink
  }
}

TEST_CASE("gradcheck: Dropout drops while training, with the same mask forward and backward", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    DeviceScope scope(*d);
    Rng rng(12), same(12);
    Dropout drop(0.25f), twin(0.25f);
    drop.build({500}, *d, rng);
    twin.build({500}, *d, same);
    std::vector<float> xv(1000);
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 1.0f + static_cast<float>(i % 7);
    Tensor x = make_tensor(*d, {2, 500}, xv);
    CHECK(drop.forward(x).to_vector<float>() == xv);  // inference: the identity
    drop.set_training(true);
    twin.set_training(true);
    const std::vector<float> y = drop.forward(x).to_vector<float>();
    CHECK(twin.forward(x).to_vector<float>() == y);  // the mask follows the seed
    int dropped = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      INFO("value " << i);
      if (y[i] == 0.0f) ++dropped;
      else REQUIRE(y[i] == xv[i] * (1.0f / 0.75f));
    }
    CHECK(dropped > 200);  // 250 expected
    CHECK(dropped < 300);
    const std::vector<float> gv(1000, 3.0f);
    const std::vector<float> dx = drop.backward(make_tensor(*d, {2, 500}, gv), true).to_vector<float>();
    for (size_t i = 0; i < dx.size(); ++i) REQUIRE(dx[i] == (y[i] == 0.0f ? 0.0f : 3.0f * (1.0f / 0.75f)));
    CHECK(drop.forward(x).to_vector<float>() != y);  // a new mask each step
  }
}

// keras.ops.gelu's default, the tanh approximation, against its formula in
// double: 0.5 x (1 + tanh(c (x + 0.044715 x^3))), c = sqrt(2 / pi), and its
// derivative. The exact (erf) gelu differs from it by 1e-4 to 9e-4 at these
// points, far above the float rounding allowed here.
TEST_CASE("gradcheck: gelu's tanh approximation is its formula forward and backward", "[gradcheck]") {
  const std::vector<float> xv = {-3.0f, -2.0f, -1.5f, -1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f};
  auto formula = [](double x, double& dydx) {
    const double c = std::sqrt(2.0 / M_PI), u = c * (x + 0.044715 * x * x * x), t = std::tanh(u);
    dydx = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * x * x);
    return 0.5 * x * (1.0 + t);
  };
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    DeviceScope scope(*d);
    Rng rng(13);
    ActivationLayer gelu(Activation::gelu_tanh, "gelu");
    gelu.build({static_cast<int64_t>(xv.size())}, *d, rng);
    gelu.set_training(true);
    const Shape shape{1, static_cast<int64_t>(xv.size())};
    const std::vector<float> y = gelu.forward(make_tensor(*d, shape, xv)).to_vector<float>();
    const std::vector<float> ones(xv.size(), 1.0f);
    const std::vector<float> dx = gelu.backward(make_tensor(*d, shape, ones), true).to_vector<float>();
    for (size_t i = 0; i < xv.size(); ++i) {
      INFO("x = " << xv[i]);
      double dydx = 0.0;
      const double want = formula(xv[i], dydx);
      CHECK(std::fabs(y[i] - want) <= 2e-6 * std::max(1.0, std::fabs(want)));
      CHECK(std::fabs(dx[i] - dydx) <= 2e-6 * std::max(1.0, std::fabs(dydx)));
    }
  }
}

// Keras' noise_shape: one draw covers each axis of size 1 in it. Per sample
// ([1, 1, 1]: EfficientNet's drop of a residual branch) and per channel
// ([1, 1, C]: SpatialDropout2D), against what a mask of that shape gives.
TEST_CASE("gradcheck: Dropout's noise_shape shares one draw along its axes of size 1", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    DeviceScope scope(*d);
    const Shape shape{3, 4, 5};
    const int64_t n = 64, per_sample = numel(shape);
    std::vector<float> xv(static_cast<size_t>(n * per_sample));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 1.0f + static_cast<float>(i % 5);
    const Tensor x = make_tensor(*d, {n, 3, 4, 5}, xv);
    for (const Shape& noise : {Shape{1, 1, 1}, Shape{1, 1, -1}, Shape{-1, 1, 5}}) {
      INFO("noise_shape " << shape_string(noise));
      Rng rng(5);
      Dropout drop(0.5f, "drop", false, noise);
      drop.build(shape, *d, rng);
      drop.set_training(true);
      const std::vector<float> y = drop.forward(x).to_vector<float>();
      // The value at (s, h, w, c) is kept exactly when the one at its draw's
      // index (the axes of size 1 at 0) is.
      int kept_draws = 0, draws = 0;
      for (int64_t s = 0; s < n; ++s)
        for (int64_t h = 0; h < 3; ++h)
          for (int64_t w = 0; w < 4; ++w)
            for (int64_t c = 0; c < 5; ++c) {
              const auto at = static_cast<size_t>(((s * 3 + h) * 4 + w) * 5 + c);
              const auto drawn = static_cast<size_t>(
                  ((s * 3 + (noise[0] == 1 ? 0 : h)) * 4 + (noise[1] == 1 ? 0 : w)) * 5 + (noise[2] == 1 ? 0 : c));
              REQUIRE((y[at] == 0.0f) == (y[drawn] == 0.0f));
              if (y[at] != 0.0f) REQUIRE(y[at] == xv[at] * 2.0f);
              if (at == drawn) {
                ++draws;
                kept_draws += y[at] != 0.0f ? 1 : 0;
              }
            }
      // Half of the draws kept, within 5 standard deviations.
      CHECK(std::abs(kept_draws - draws / 2) < 5 * std::sqrt(draws / 4.0) + 1);
    }
    Dropout odd(0.5f, "drop", false, Shape{1, 2, 5});
    CHECK_THROWS_WITH(odd.output_shape(std::vector<Shape>{shape}), Catch::Contains("neither 1 nor the input's 4"));
  }
}

// ConvNeXt's StochasticDepth(0.25): while training each sample is kept
// whole (times 1 / 0.75) or dropped whole, about three in four kept, and
// its gradient follows the same mask; at inference the identity.
TEST_CASE("gradcheck: StochasticDepth keeps or drops whole samples", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    DeviceScope scope(*d);
    const int64_t n = 256, per_sample = 2 * 3 * 4;
    std::vector<float> xv(static_cast<size_t>(n * per_sample));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 1.0f + static_cast<float>(i % 7);
    const Tensor x = make_tensor(*d, {n, 2, 3, 4}, xv);
    Rng rng(11);
    StochasticDepth drop(0.25, "drop_path");
    drop.build({2, 3, 4}, *d, rng);
    CHECK(drop.forward(x).to_vector<float>() == xv);  // inference
    drop.set_training(true);
    const std::vector<float> y = drop.forward(x).to_vector<float>();
    const std::vector<float> dx = drop.backward(make_tensor(*d, {n, 2, 3, 4}, std::vector<float>(xv.size(), 3.0f)), true)
                                      .to_vector<float>();
    int kept = 0;
    for (int64_t s = 0; s < n; ++s) {
      const bool keep = y[static_cast<size_t>(s * per_sample)] != 0.0f;
      kept += keep ? 1 : 0;
      for (int64_t i = 0; i < per_sample; ++i) {
        const auto at = static_cast<size_t>(s * per_sample + i);
        REQUIRE(y[at] == (keep ? xv[at] * (1.0f / 0.75f) : 0.0f));
        REQUIRE(dx[at] == (keep ? 3.0f * (1.0f / 0.75f) : 0.0f));
      }
    }
    CHECK(std::abs(kept - 192) < 5 * std::sqrt(256 * 0.25 * 0.75));  // 5 standard deviations
  }
}

// GaussianNoise(0.3): y - x has mean 0 and standard deviation 0.3;
// GaussianDropout(0.2): y / x has mean 1 and standard deviation
// sqrt(0.2 / 0.8) = 0.5; each within 2% (the sample's own spread over 2^16
// values is 0.3% at one sigma), a new draw each step, the same for the same
// seed, and dy passed back as the forward's noise says.
TEST_CASE("gradcheck: GaussianNoise and GaussianDropout draw Keras' noise while training", "[gradcheck]") {
  for (Device* d : devices_under_test()) {
    INFO("device " << d->name());
    DeviceScope scope(*d);
    const int64_t n = 64, per_sample = 1024;
    std::vector<float> xv(static_cast<size_t>(n * per_sample));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = 1.0f + static_cast<float>(i % 3);
    const Tensor x = make_tensor(*d, {n, per_sample}, xv);
    for (const auto kind : {GaussianNoise::Kind::additive, GaussianNoise::Kind::multiplicative}) {
      const bool additive = kind == GaussianNoise::Kind::additive;
      INFO((additive ? "GaussianNoise" : "GaussianDropout"));
      Rng rng(9), same(9);
      GaussianNoise layer(kind, additive ? 0.3f : 0.2f), twin(kind, additive ? 0.3f : 0.2f);
      layer.build({per_sample}, *d, rng);
      twin.build({per_sample}, *d, same);
      CHECK(layer.forward(x).to_vector<float>() == xv);  // inference: the identity
      layer.set_training(true);
      twin.set_training(true);
      const std::vector<float> y = layer.forward(x).to_vector<float>();
      CHECK(twin.forward(x).to_vector<float>() == y);  // the noise follows the seed
      double sum = 0, sq = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        const double e = additive ? y[i] - xv[i] : y[i] / xv[i];
        sum += e;
        sq += e * e;
      }
      const double mean = sum / double(y.size()), sd = std::sqrt(sq / double(y.size()) - mean * mean);
      const double want_mean = additive ? 0.0 : 1.0, want_sd = additive ? 0.3 : 0.5;
      CHECK(std::abs(mean - want_mean) < 0.02 * want_sd);
      CHECK(std::abs(sd - want_sd) < 0.02 * want_sd);
      const std::vector<float> gv(y.size(), 2.0f);
      const std::vector<float> dx = layer.backward(make_tensor(*d, {n, per_sample}, gv), true).to_vector<float>();
      for (size_t i = 0; i < dx.size(); i += 97)
        REQUIRE(dx[i] == Approx(additive ? 2.0 : 2.0 * y[i] / xv[i]).epsilon(1e-6));
      CHECK(layer.forward(x).to_vector<float>() != y);  // a new draw each step
    }
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
    const Tensor y = f.forward(x);
    CHECK(y.shape() == Shape{2, 24});
    CHECK(y.data() == x.data());
    CHECK(y.to_vector<float>() == xv);
    const Tensor dx = f.backward(y, true);
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

namespace {

// The whole CNN, on a 3-image batch: coordinates drawn at random from each
// parameter tensor, the batch's mean loss at w - h, w - h/2, w, w + h/2,
// w + h. Where the forward and backward differences, or the central ones
// over h and h/2, disagree by more than kCnnKink, a ReLU or max switch lies
// within h and the coordinate is not judged; elsewhere the loss is linear
// there, and the gradient must be within kCnnAtol + kCnnRtol * |gradient| of
// the central difference (float32 losses of ~2.3 put ~5e-5 of noise on it).
// Draws go on until kCnnInformative coordinates per tensor have a central
// difference of at least kCnnSignal (many units of this untrained model are
// dead, their coordinates exactly 0), at most kCnnDraws.
// The draws depend on the loss alone, so every gradient checked against them
// (the model's own, or a planted wrong one) meets the same coordinates.
constexpr double kCnnH = 2e-3, kCnnKink = 5e-4, kCnnAtol = 2e-4, kCnnRtol = 1e-2, kCnnSignal = 1e-3;
constexpr int kCnnInformative = 12, kCnnDraws = 60;

struct Coordinate {
  size_t tensor, index;
  double central;
  bool informative;
};

struct CnnCheck {
  int judged = 0, informative = 0, mismatched = 0, informative_mismatched = 0;
  std::string first_mismatch;
};

struct CnnFixture {
  std::unique_ptr<Sequential> model = make_cnn(10);
  data::HostBatch batch;
  std::vector<Coordinate> coordinates;  // judged ones
  int kinked = 0, drawn = 0;

  CnnFixture() {
    Device* d = test::test_runtime().find_device("cpu:0");
    REQUIRE(d != nullptr);
    model->build({28, 28, 1}, *d, 11);
    model->compile();
    Rng rng(12);
    // Biases away from 0 and images that are 0 but for a 10x10 patch of
    // noise (as digits and clothes are mostly background): fewer units sit
    // near a ReLU's kink than with noise everywhere, so fewer switch within h.
    for (Parameter* p : model->parameters())
      if (p->value.rank() == 1) {
        std::vector<float> b(static_cast<size_t>(p->value.numel()));
        for (float& v : b) v = (rng.below(2) ? 1.0f : -1.0f) * rng.uniform(0.02f, 0.1f);
        p->value.copy_from_host(b.data(), b.size() * sizeof(float));
      }
    batch.size = 3;
    batch.images.assign(3 * 784, 0);
    for (int n = 0; n < 3; ++n) {
      const int top = static_cast<int>(rng.below(18)), left = static_cast<int>(rng.below(18));
      for (int r = top; r < top + 10; ++r)
        for (int c = left; c < left + 10; ++c) batch.images[static_cast<size_t>(n * 784 + r * 28 + c)] = static_cast<uint8_t>(rng.below(256));
    }
    batch.labels = {2, 7, 4};
    draw();
  }
  double mean_loss() {
    model->compute_gradients(batch);  // refreshes per_sample_loss for these weights
    double s = 0;
    for (float v : model->per_sample_loss(3).to_vector<float>()) s += v;
    return s / 3;
  }
  void draw() {
    Rng rng(13);
    auto params = model->parameters();
    for (size_t t = 0; t < params.size(); ++t) {
      Parameter* p = params[t];
      std::vector<float> v = p->value.to_vector<float>();
      int informative = 0;
      for (int n = 0; n < kCnnDraws && informative < kCnnInformative; ++n) {
        const size_t i = static_cast<size_t>(rng.below(v.size()));
        const float keep = v[i];
        auto at = [&](double delta) {
          v[i] = static_cast<float>(keep + delta);
          p->value.copy_from_host(v.data(), v.size() * 4);
          return mean_loss();
        };
        const double lp = at(kCnnH), l0 = at(0), lm = at(-kCnnH), lp2 = at(kCnnH / 2), lm2 = at(-kCnnH / 2);
        v[i] = keep;
        p->value.copy_from_host(v.data(), v.size() * 4);
        ++drawn;
        // Linear here: both one-sided differences, and the central ones over h and h/2, agree.
        const double c = (lp - lm) / (2 * kCnnH), c2 = (lp2 - lm2) / kCnnH;
        if (std::fabs((lp - l0) - (l0 - lm)) / kCnnH > kCnnKink || std::fabs(c - c2) > kCnnKink) {
          ++kinked;
          continue;
        }
        coordinates.push_back({t, i, c, std::fabs(c) >= kCnnSignal});
        informative += std::fabs(c) >= kCnnSignal;
      }
    }
  }
  // Every parameter's gradient of the batch's mean loss.
  std::vector<std::vector<float>> gradients() {
    model->compute_gradients(batch);
    std::vector<std::vector<float>> g;
    for (Parameter* p : model->parameters()) g.push_back(p->grad.to_vector<float>());
    return g;
  }
  CnnCheck check(const std::vector<std::vector<float>>& gradient) const {
    CnnCheck r;
    for (const Coordinate& c : coordinates) {
      const double g = gradient[c.tensor][c.index];
      ++r.judged;
      r.informative += c.informative;
      if (close(c.central, g, kCnnAtol, kCnnRtol)) continue;
      r.informative_mismatched += c.informative;
      if (r.mismatched++ == 0) {
        std::ostringstream m;
        m << "tensor " << c.tensor << " [" << c.index << "]: gradient " << g << ", central difference " << c.central;
        r.first_mismatch = m.str();
      }
    }
    return r;
  }
};

}  // namespace

TEST_CASE("gradcheck: the whole CNN chains its layers correctly", "[gradcheck]") {
  CnnFixture f;
  const CnnCheck r = f.check(f.gradients());
  INFO(r.judged << " coordinates judged (" << r.informative << " with a difference >= " << kCnnSignal << "), "
                << f.kinked << " of " << f.drawn << " drawn near a switch; first mismatch: " << r.first_mismatch);
  CHECK(r.mismatched == 0);
  CHECK(r.informative >= 10 * kCnnInformative * 8 / 10);  // most tensors gave their 12
  CHECK(f.kinked * 4 <= f.drawn);
}

// The check above must be able to fail: at the coordinates where the loss
// moves (a central difference >= kCnnSignal), a gradient of zero fails
// everywhere, and the gradient with the batch's last image left out at
// least at three in four (where that image moves the loss; 87% measured).
TEST_CASE("gradcheck: the whole-CNN check catches a zero gradient and an ignored image", "[gradcheck]") {
  CnnFixture f;
  const auto right = f.gradients();
  std::vector<std::vector<float>> zero = right;
  for (auto& t : zero) std::fill(t.begin(), t.end(), 0.0f);
  // Without the last image: the mean over the first two, times 2/3 (still
  // divided by the batch of three).
  data::HostBatch two = f.batch;
  two.size = 2;
  two.images.resize(2 * 784);
  two.labels.resize(2);
  f.model->compute_gradients(two);
  std::vector<std::vector<float>> without_last;
  for (Parameter* p : f.model->parameters()) {
    std::vector<float> g = p->grad.to_vector<float>();
    for (float& x : g) x *= 2.0f / 3.0f;
    without_last.push_back(g);
  }
  const CnnCheck z = f.check(zero), w = f.check(without_last);
  INFO("of " << z.informative << " coordinates: zero gradient caught at " << z.informative_mismatched
             << ", last image ignored at " << w.informative_mismatched);
  CHECK(z.informative_mismatched == z.informative);
  CHECK(w.informative_mismatched * 4 >= w.informative * 3);
}
