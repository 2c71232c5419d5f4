// The bound of the elementwise functions of ABI 1.4 (the activations and
// their gradients, Softmax and SoftmaxGrad), for comparing a float32 result
// with an oracle (the reference kernels, TensorFlow's goldens). They are
// judged like sums (tolerance.hpp):
//
//   |got - want| <= kSumUlps * u * B + u * |want|,   u = 2^-24,
//
// where B is the magnitude of the terms the result is made of, times what a
// float32 implementation must multiply the rounding of its own arguments by:
//
//   Sigmoid       |y|
//   SigmoidGrad   |dx|
//   Tanh          |y|
//   TanhGrad      |dy| (1 + y^2)
//   Elu           x > 0: |x|; else e^x + 1
//   EluGrad       |dy| (|y| + 1)
//   Selu          x > 0: s |x|; else sa (e^x + 1)
//   SeluGrad      y < 0: |dy| (|y| + sa); else s |dy|
//   Softplus      |y|
//   SoftplusGrad  |dx|
//   Gelu, erf     |x| (Phi(x) + Q (2 + x^2))
//   GeluGrad, erf |dy| (Phi(x) + (Q + |x| phi(x)) (2 + x^2))
//   Gelu, tanh    |x| (1 + |t|) / 2
//   GeluGrad, tanh  |dy| ((1 + |t|) / 2 + |x| (1 + t^2) c (1 + 3 a x^2) / 2)
//   Silu          |y|
//   SiluGrad      |dy| sigmoid(x) (1 + |x|)
//   Softmax       y_i (2 + log2 C + |x_i - max x|)
//   SoftmaxGrad   y_i (|dy_i| + sum_j |dy_j y_j|)
//
// with Phi the normal distribution function, phi its density, Q = min(Phi(x),
// 1 - Phi(x)) its tail, s and sa Selu's scale and scale * alpha, t = tanh(c
// (x + a x^3)), c = sqrt(2 / pi), a = 0.044715, C the last dimension. The
// reasons: e^x - 1 is made of e^x and 1 where TensorFlow computes it so (Elu,
// Selu); 1 - y^2, 1 + tanh and 1 - sigmoid cancel (TanhGrad, the tanh form,
// SiluGrad); erfc at a rounded argument x / sqrt 2 is off by about x^2 times
// that rounding (the tail in Gelu's erf form, and its gradient's
// exp(-x^2 / 2)); e^(x_i - max) at a rounded difference is off by
// |x_i - max| times it, and the row's sum by up to log2 C roundings
// (Softmax). tests/goldens/tf/README.md lists TensorFlow's own largest error
// in these units; docs/testing.md the power.
#pragma once

#include <axon/op_table.hpp>

#include <cmath>
#include <cstdint>

namespace axon::tol {

namespace function_detail {
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluScaleAlpha = 1.7580993408473768599402175208123;
constexpr double kGeluC = 0.7978845608028654, kGeluA = 0.044715, kSqrt2Pi = 2.5066282746310002;
}  // namespace function_detail

// Whether op's results are judged with function_magnitudes.
inline bool has_function_bound(OpId op) {
  switch (op) {
    case OpId::Sigmoid:
    case OpId::SigmoidGrad:
    case OpId::Tanh:
    case OpId::TanhGrad:
    case OpId::Elu:
    case OpId::EluGrad:
    case OpId::Selu:
    case OpId::SeluGrad:
    case OpId::Softplus:
    case OpId::SoftplusGrad:
    case OpId::Gelu:
    case OpId::GeluGrad:
    case OpId::Silu:
    case OpId::SiluGrad:
    case OpId::Softmax:
    case OpId::SoftmaxGrad: return true;
    default: return false;
  }
}

// B for one element of an elementwise op (not Softmax, SoftmaxGrad): a and b
// are the op's inputs at that element, in the op's order (b unused for one input).
inline double function_magnitude(OpId op, double a, double b, bool gelu_tanh_form) {
  using namespace function_detail;
  switch (op) {
    case OpId::Sigmoid: return sigmoid(a);
    case OpId::SigmoidGrad: return std::fabs(b * a * (1.0 - a));
    case OpId::Tanh: return std::fabs(std::tanh(a));
    case OpId::TanhGrad: return std::fabs(b) * (1.0 + a * a);
    case OpId::Elu: return a > 0.0 ? a : std::exp(a) + 1.0;
    case OpId::EluGrad: return std::fabs(a) * (std::fabs(b) + 1.0);
    case OpId::Selu: return a > 0.0 ? kSeluScale * a : kSeluScaleAlpha * (std::exp(a) + 1.0);
    case OpId::SeluGrad: return std::fabs(a) * (b < 0.0 ? std::fabs(b) + kSeluScaleAlpha : kSeluScale);
    case OpId::Softplus: return a > 30.0 ? a : std::log1p(std::exp(a));
    case OpId::SoftplusGrad: return std::fabs(a) * sigmoid(b);
    case OpId::Silu: return std::fabs(a) * sigmoid(a);
    case OpId::SiluGrad: return std::fabs(a) * sigmoid(b) * (1.0 + std::fabs(b));
    case OpId::Gelu:
    case OpId::GeluGrad: {
      const double x = op == OpId::Gelu ? a : b, dy = op == OpId::Gelu ? 1.0 : std::fabs(a);
      if (gelu_tanh_form) {
        const double t = std::tanh(kGeluC * (x + kGeluA * x * x * x));
        const double half = 0.5 * (1.0 + std::fabs(t));
        if (op == OpId::Gelu) return std::fabs(x) * half;
        return dy * (half + 0.5 * std::fabs(x) * (1.0 + t * t) * kGeluC * (1.0 + 3.0 * kGeluA * x * x));
      }
      // Phi(x), and its tail Q = min(Phi, 1 - Phi): the part erfc computes
      const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0)), tail = 0.5 * std::erfc(std::fabs(x) / std::sqrt(2.0));
      if (op == OpId::Gelu) return std::fabs(x) * (cdf + tail * (2.0 + x * x));
      return dy * (cdf + (tail + std::fabs(x) * std::exp(-0.5 * x * x) / kSqrt2Pi) * (2.0 + x * x));
    }
    default: return 0.0;
  }
}

// B for one row of Softmax (a: the logits) or SoftmaxGrad (a: dy, b: y),
// `classes` elements each; writes `out`.
inline void softmax_row_magnitudes(OpId op, const float* a, const float* b, int64_t classes, double* out) {
  if (op == OpId::Softmax) {
    double mx = -INFINITY;
    for (int64_t j = 0; j < classes; ++j) mx = std::fmax(mx, a[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < classes; ++j) sum += std::exp(a[j] - mx);
    const double terms = 2.0 + std::log2(static_cast<double>(classes));
    for (int64_t j = 0; j < classes; ++j) {
      const double y = std::exp(a[j] - mx) / sum;  // 0 for a logit of -inf
      out[j] = y > 0.0 ? y * (terms + std::fabs(a[j] - mx)) : 0.0;
    }
    return;
  }
  double s = 0.0;
  for (int64_t j = 0; j < classes; ++j) s += std::fabs(double(a[j]) * b[j]);
  for (int64_t j = 0; j < classes; ++j) out[j] = std::fabs(double(b[j])) * (std::fabs(a[j]) + s);
}

// B for every element of an op with has_function_bound: in0, in1 its inputs
// (in1 null for one input), n elements, `classes` the last dimension.
inline void function_magnitudes(OpId op, const float* in0, const float* in1, int64_t n, int64_t classes,
                                bool gelu_tanh_form, double* out) {
  if (op == OpId::Softmax || op == OpId::SoftmaxGrad) {
    for (int64_t r = 0; classes > 0 && r < n / classes; ++r)
      softmax_row_magnitudes(op, in0 + r * classes, in1 ? in1 + r * classes : nullptr, classes, out + r * classes);
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = function_magnitude(op, in0[i], in1 ? in1[i] : 0.0, gelu_tanh_form);
}

}  // namespace axon::tol
