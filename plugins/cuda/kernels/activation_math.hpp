// The per-element arithmetic of the activations of ABI 1.4 and their
// gradients, and of the elementwise ops of two tensors, host and device alike
// (device_math.hpp): the CUDA kernels (elementwise.cu) run it, and
// tests/cuda/activation_math_test.cpp checks it on the host against
// TensorFlow's own outputs. TensorFlow's rules where its kernels choose
// (Softplus's thresholds, SeluGrad's branch at 0, NaN in Maximum).
#pragma once

#include "device_math.hpp"

#include <cmath>
#include <cstdint>

namespace axon::cuda {

enum class Activation : int32_t {
  Sigmoid,
  Tanh,
  Elu,
  Selu,
  Relu6,
  LeakyRelu,
  Softplus,
  GeluErf,
  GeluTanh,
  Silu,
  ClippedRelu,
};

// The attributes an activation may take (axon_leaky_relu_attrs, axon_clipped_relu_attrs).
struct ActivationParams {
  float alpha = 0.f;                                                  // LeakyRelu
  float negative_slope = 0.f, max_value = INFINITY, threshold = 0.f;  // ClippedRelu
};

// TensorFlow's SELU constants.
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
// Softplus: y = x above -kSoftplusThreshold, exp(x) below kSoftplusThreshold
// (TensorFlow's log(float epsilon) + 2), log(1 + exp(x)) between.
constexpr float kSoftplusThreshold = -13.9423847f;
constexpr float kSqrt2OverPi = 0.7978845608028654f, kGeluCubic = 0.044715f;
constexpr float kSqrtHalf = 0.7071067811865476f, kInvSqrt2Pi = 0.3989422804014327f;

AXON_HD inline float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }

AXON_HD inline float activate(Activation op, float x, const ActivationParams& p) {
  switch (op) {
    case Activation::Sigmoid: return sigmoid(x);
    case Activation::Tanh: return tanhf(x);
    case Activation::Elu: return x > 0.f ? x : expm1f(x);
    case Activation::Selu: return x < 0.f ? kSeluScale * kSeluAlpha * expm1f(x) : kSeluScale * x;
    case Activation::Relu6: return fminf(fmaxf(x, 0.f), 6.f);
    case Activation::LeakyRelu: return x > 0.f ? x : p.alpha * x;
    case Activation::Softplus: return x > -kSoftplusThreshold ? x : x < kSoftplusThreshold ? expf(x) : log1pf(expf(x));
    case Activation::GeluErf: return 0.5f * x * erfcf(-x * kSqrtHalf);
    case Activation::GeluTanh: return 0.5f * x * (1.f + tanhf(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    case Activation::Silu: return x * sigmoid(x);
    case Activation::ClippedRelu:
      if (x > p.threshold) return fminf(x, p.max_value);
      return p.negative_slope == 0.f ? 0.f : p.negative_slope * (x - p.threshold);
  }
  return NAN;
}

// The gradient dx from dy and `v`, the op's other input: y for Sigmoid,
// Tanh, Elu and Selu, x for the others.
AXON_HD inline float activation_grad(Activation op, float dy, float v, const ActivationParams& p) {
  switch (op) {
    case Activation::Sigmoid: return dy * v * (1.f - v);
    case Activation::Tanh: return dy * (1.f - v * v);
    case Activation::Elu: return v < 0.f ? dy * (v + 1.f) : dy;
    case Activation::Selu: return v < 0.f ? dy * (v + kSeluScale * kSeluAlpha) : dy * kSeluScale;
    case Activation::Relu6: return v > 0.f && v < 6.f ? dy : 0.f;
    case Activation::LeakyRelu: return v > 0.f ? dy : p.alpha * dy;
    case Activation::Softplus: return dy * sigmoid(v);
    case Activation::GeluErf: return dy * (0.5f * erfcf(-v * kSqrtHalf) + v * kInvSqrt2Pi * expf(-0.5f * v * v));
    case Activation::GeluTanh: {
      const float t = tanhf(kSqrt2OverPi * (v + kGeluCubic * v * v * v));
      return dy * (0.5f * (1.f + t) + 0.5f * v * (1.f - t * t) * kSqrt2OverPi * (1.f + 3.f * kGeluCubic * v * v));
    }
    case Activation::Silu: {
      const float s = sigmoid(v);
      return dy * s * (1.f + v * (1.f - s));
    }
    case Activation::ClippedRelu:
      if (v <= p.threshold) return p.negative_slope * dy;
      return v < p.max_value ? dy : 0.f;
  }
  return NAN;
}

enum class Binary : int32_t { Sub, Mul, Maximum };

// Maximum propagates NaN from either side, as TensorFlow's does.
AXON_HD inline float binary(Binary op, float a, float b) {
  switch (op) {
    case Binary::Sub: return a - b;
    case Binary::Mul: return a * b;
    case Binary::Maximum: return a != a || b != b ? a + b : fmaxf(a, b);
  }
  return NAN;
}

}  // namespace axon::cuda
