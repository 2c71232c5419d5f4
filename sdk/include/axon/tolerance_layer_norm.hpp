// The magnitudes B that LayerNorm's and LayerNormGrad's results are judged
// by, element by element, with tol::sum_allowed(want, B): |got - want| <=
// 16 u B + u |want| (axon/tolerance.hpp). The forms of
// axon/tolerance_batch_norm.hpp turned round: each row of x [R, K] is a
// channel's n = K values there. Per row: A = mean |x|, m and v its mean and
// biased variance, r = 1 / sqrt(v + epsilon), xhat = (x - m) r, t = sqrt(K)
// where the statistics are float32 sums (a GPU's), 1 where both sides sum in
// double (the CPU and reference plugins).
//
//   forward:   y: |scale| r ((1 + t) |x - m| + t A) + |offset|
//              mean: t A;  inv_std: r (1 + t V / (v + epsilon)),  V = v + A^2 2^-20
//   gradient:  dx: r (|g| + mean |g| + |xhat| mean |g xhat|),  g = dy scale
//              scale_backprop: sum over rows |dy xhat|;  offset_backprop: sum |dy|
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace axon::tol {

struct LayerNormInputs {
  const float* x;  // [rows, k]
  int64_t rows, k;
  const float *scale, *offset;  // [k]; offset unused by the gradient
  float epsilon;
  bool float32_statistics = false;
};

namespace layer_norm_detail {
struct Row {
  double a = 0, m = 0, v = 0, r = 0, t = 0;
};
inline Row row(const LayerNormInputs& in, int64_t i) {
  Row s;
  const double n = double(in.k);
  const float* x = in.x + i * in.k;
  for (int64_t j = 0; j < in.k; ++j) s.a += std::fabs(double(x[j])) / n, s.m += double(x[j]) / n;
  for (int64_t j = 0; j < in.k; ++j) s.v += (x[j] - s.m) * (x[j] - s.m) / n;
  s.r = 1.0 / std::sqrt(s.v + double(in.epsilon));
  s.t = in.float32_statistics ? std::sqrt(n) : 1.0;
  return s;
}
}  // namespace layer_norm_detail

// B of LayerNorm's y, mean and inv_std.
inline std::vector<std::vector<double>> layer_norm_magnitudes(const LayerNormInputs& in) {
  std::vector<std::vector<double>> b(3);
  b[0].assign(static_cast<size_t>(in.rows * in.k), 0.0);
  b[1].assign(static_cast<size_t>(in.rows), 0.0);
  b[2].assign(static_cast<size_t>(in.rows), 0.0);
  for (int64_t i = 0; i < in.rows; ++i) {
    const auto s = layer_norm_detail::row(in, i);
    for (int64_t j = 0; j < in.k; ++j) {
      const double centred = std::fabs(in.x[i * in.k + j] - s.m);
      b[0][static_cast<size_t>(i * in.k + j)] =
          std::fabs(double(in.scale[j])) * s.r * ((1 + s.t) * centred + s.t * s.a) + std::fabs(double(in.offset[j]));
    }
    const double big_v = s.v + s.a * s.a * 0x1p-20;
    b[1][static_cast<size_t>(i)] = s.t * s.a;
    b[2][static_cast<size_t>(i)] = s.r * (1 + s.t * big_v / (s.v + double(in.epsilon)));
  }
  return b;
}

// B of LayerNormGrad's dx, scale_backprop and offset_backprop (in.x is x; the
// row statistics are recomputed from it, as the forward gave them).
inline std::vector<std::vector<double>> layer_norm_grad_magnitudes(const LayerNormInputs& in, const float* dy) {
  std::vector<std::vector<double>> b(3);
  b[0].assign(static_cast<size_t>(in.rows * in.k), 0.0);
  b[1].assign(static_cast<size_t>(in.k), 0.0);
  b[2].assign(static_cast<size_t>(in.k), 0.0);
  for (int64_t i = 0; i < in.rows; ++i) {
    const auto s = layer_norm_detail::row(in, i);
    const double n = double(in.k);
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < in.k; ++j) {
      const double g = std::fabs(double(dy[i * in.k + j]) * in.scale[j]), xhat = std::fabs((in.x[i * in.k + j] - s.m) * s.r);
      sum_g += g;
      sum_gx += g * xhat;
      b[1][static_cast<size_t>(j)] += std::fabs(double(dy[i * in.k + j])) * xhat;
      b[2][static_cast<size_t>(j)] += std::fabs(double(dy[i * in.k + j]));
    }
    for (int64_t j = 0; j < in.k; ++j) {
      const double g = std::fabs(double(dy[i * in.k + j]) * in.scale[j]), xhat = std::fabs((in.x[i * in.k + j] - s.m) * s.r);
      b[0][static_cast<size_t>(i * in.k + j)] = s.r * (g + sum_g / n + xhat * sum_gx / n);
    }
  }
  return b;
}

}  // namespace axon::tol
