// The per-element arithmetic of the CUDA plugin's activations, their
// gradients and the elementwise ops of two tensors
// (plugins/cuda/kernels/activation_math.hpp), which its kernels run, checked
// on the host against TensorFlow's own outputs (tf_values.inc, from
// tf_values.py): x over every branch of each formula, from -100 to 100.
// Bound: |got - tf| <= 1e-6 |tf| + 1e-7 * scale, scale = 1 + |x| for the
// forward ops and (1 + |x|) |dy| for the gradients: a few ulps (TensorFlow's
// Eigen tanh, exp and erf round differently from the C library's); all
// agree within 4e-7 |tf| + 1e-7 * scale here.
#include "activation_math.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

#include "tf_values.inc"

using axon::cuda::Activation;
using axon::cuda::ActivationParams;

bool close(float got, float want, double scale) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(double(got) - want) <= 1e-6 * std::fabs(want) + 1e-7 * scale;
}

// Checks op's forward against y and its gradient against dx; the gradient
// takes y (from TensorFlow) for Sigmoid, Tanh, Elu and Selu, else x.
void check(Activation op, const ActivationParams& p, const std::vector<float>& y, const std::vector<float>& dx,
           const std::string& name) {
  const bool takes_y =
      op == Activation::Sigmoid || op == Activation::Tanh || op == Activation::Elu || op == Activation::Selu;
  for (size_t i = 0; i < kX.size(); ++i) {
    INFO(name << " at x = " << kX[i] << ", dy = " << kDy[i]);
    const float got_y = axon::cuda::activate(op, kX[i], p);
    INFO("y " << got_y << ", TensorFlow " << y[i]);
    CHECK(close(got_y, y[i], 1 + std::fabs(kX[i])));
    const float got_dx = axon::cuda::activation_grad(op, kDy[i], takes_y ? y[i] : kX[i], p);
    // ClippedRelu is axon's own op: at its kinks the op table's rule holds
    // (negative_slope * dy at the threshold, 0 at max_value), not the
    // subgradient TensorFlow's differentiation of Keras' relu happens to take.
    float want_dx = dx[i];
    if (op == Activation::ClippedRelu && (kX[i] == p.threshold || kX[i] == p.max_value))
      want_dx = kX[i] == p.threshold ? p.negative_slope * kDy[i] : 0.f;
    INFO("dx " << got_dx << ", TensorFlow " << dx[i] << ", expected " << want_dx);
    CHECK(close(got_dx, want_dx, (1 + std::fabs(kX[i])) * std::fabs(kDy[i])));
  }
}

}  // namespace

TEST_CASE("activations and their gradients agree with TensorFlow on every branch") {
  const ActivationParams none;
  check(Activation::Sigmoid, none, kSigmoidY, kSigmoidDx, "Sigmoid");
  check(Activation::Tanh, none, kTanhY, kTanhDx, "Tanh");
  check(Activation::Elu, none, kEluY, kEluDx, "Elu");
  check(Activation::Selu, none, kSeluY, kSeluDx, "Selu");
  check(Activation::Relu6, none, kRelu6Y, kRelu6Dx, "Relu6");
  ActivationParams leaky;
  leaky.alpha = 0.2f;
  check(Activation::LeakyRelu, leaky, kLeakyReluY, kLeakyReluDx, "LeakyRelu");
  check(Activation::Softplus, none, kSoftplusY, kSoftplusDx, "Softplus");
  check(Activation::GeluErf, none, kGeluErfY, kGeluErfDx, "Gelu (erf)");
  check(Activation::GeluTanh, none, kGeluTanhY, kGeluTanhDx, "Gelu (tanh)");
  check(Activation::Silu, none, kSiluY, kSiluDx, "Silu");
}

TEST_CASE("ClippedRelu is Keras' relu(x, negative_slope, max_value, threshold)") {
  struct Args {
    float slope, max_value, threshold;
    const std::vector<float>& y;
    const std::vector<float>& dx;
  };
  const Args cases[] = {{0.f, INFINITY, 0.f, kClippedRelu0Y, kClippedRelu0Dx},
                        {0.1f, 6.f, 0.5f, kClippedRelu1Y, kClippedRelu1Dx},
                        {0.3f, INFINITY, 0.f, kClippedRelu2Y, kClippedRelu2Dx},
                        {0.f, 4.f, 1.f, kClippedRelu3Y, kClippedRelu3Dx}};
  for (const Args& a : cases) {
    ActivationParams p;
    p.negative_slope = a.slope;
    p.max_value = a.max_value;
    p.threshold = a.threshold;
    check(Activation::ClippedRelu, p, a.y, a.dx,
          "ClippedRelu(" + std::to_string(a.slope) + ", " + std::to_string(a.max_value) + ", " +
              std::to_string(a.threshold) + ")");
  }
}

TEST_CASE("Sub, Mul and Maximum agree with TensorFlow exactly, NaN included") {
  using axon::cuda::Binary;
  for (size_t i = 0; i < kA.size(); ++i) {
    INFO("a = " << kA[i] << ", b = " << kB[i]);
    for (auto [op, want] : {std::pair{Binary::Sub, kSub[i]}, {Binary::Mul, kMul[i]}, {Binary::Maximum, kMaximum[i]}}) {
      const float got = axon::cuda::binary(op, kA[i], kB[i]);
      CHECK((got == want || (std::isnan(got) && std::isnan(want))));
    }
  }
}
