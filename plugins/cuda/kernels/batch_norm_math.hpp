// The per-column arithmetic of FusedBatchNormV3 and FusedBatchNormGradV3
// (TensorFlow's CPU kernel), host and device alike (device_math.hpp): the
// CUDA kernels (batch_norm.cu) run it on column sums taken in double, and
// tests/cuda/batch_norm_math_test.cpp checks it on the host against
// TensorFlow's own outputs. Columns are the last dimension of x; n is the
// number of rows (all the other dimensions).
#pragma once

#include "device_math.hpp"

#include <cmath>
#include <cstdint>

namespace axon::cuda {

// Training: the batch's mean and biased variance (the reserve spaces), and
// batch_mean / batch_variance: the running averages with factor f of the
// mean and the unbiased variance v * n / (n - 1) (f = 1: just those).
struct BatchStats {
  float mean, variance;                  // reserve_space_1, reserve_space_2
  float running_mean, running_variance;  // batch_mean, batch_variance
};

// From the batch's mean and sum of (x - mean)^2 over n rows.
AXON_HD inline BatchStats batch_norm_stats(double mean, double centered_squares, int64_t n, float old_mean,
                                           float old_variance, float factor) {
  const double variance = centered_squares / static_cast<double>(n);
  const double unbiased = n > 1 ? variance * static_cast<double>(n) / static_cast<double>(n - 1) : variance;
  BatchStats s;
  s.mean = static_cast<float>(mean);
  s.variance = static_cast<float>(variance);
  if (factor == 1.f) {
    s.running_mean = static_cast<float>(mean);
    s.running_variance = static_cast<float>(unbiased);
  } else {
    s.running_mean = static_cast<float>((1.0 - factor) * old_mean + factor * mean);
    s.running_variance = static_cast<float>((1.0 - factor) * old_variance + factor * unbiased);
  }
  return s;
}

// y = (x - mean) * coefficient + offset, coefficient = scale / sqrt(variance + epsilon).
AXON_HD inline float batch_norm_coefficient(float scale, float variance, float epsilon) {
  return static_cast<float>(scale / sqrt(static_cast<double>(variance) + epsilon));
}

// The gradient, per column, from the sums of dy and of dy * (x - mean):
// dx = k_dy * dy + k_x * (x - mean) + k_1; in training mean and variance
// are the batch's (the reserve spaces), otherwise the given ones and only
// the first term remains.
struct BatchNormGrad {
  float k_dy, k_x, k_1;
  float scale_backprop, offset_backprop;
};

AXON_HD inline BatchNormGrad batch_norm_gradient(double sum_dy, double sum_dy_centered, int64_t n, float scale,
                                                 float variance, float epsilon, bool training) {
  const double inv_std = 1.0 / sqrt(static_cast<double>(variance) + epsilon), k = scale * inv_std;
  BatchNormGrad g;
  g.scale_backprop = static_cast<float>(sum_dy_centered * inv_std);
  g.offset_backprop = static_cast<float>(sum_dy);
  g.k_dy = static_cast<float>(k);
  g.k_x = training ? static_cast<float>(-k * inv_std * inv_std * sum_dy_centered / static_cast<double>(n)) : 0.f;
  g.k_1 = training ? static_cast<float>(-k * sum_dy / static_cast<double>(n)) : 0.f;
  return g;
}

}  // namespace axon::cuda
