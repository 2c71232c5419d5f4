// The magnitudes B that FusedBatchNormV3's and FusedBatchNormGradV3's results
// are judged by, element by element, with tol::sum_allowed(want, B):
// |got - want| <= 16 u B + u |want| (axon/tolerance.hpp). Each B is the size
// of what the result is made of, plus what the rounding of the per-channel
// statistics moves it by. Per channel, over its n values: A = mean |x|, m and
// v the mean and biased variance used, r = 1 / sqrt(v + epsilon),
// t = sqrt(n), xhat = (x - m) r, f the exponential_avg_factor.
//
//   forward, training:  y: |scale| r ((1 + t) |x - m| + t A) + |offset|
//                       batch_mean: (1 - f) |mean in| + f t A
//                       batch_variance: (1 - f) |variance in| + f n/(n-1) t V,  V = v + A^2 2^-20
//                       reserve_space_1: t A;  reserve_space_2: t V
//   forward, inference: y: |scale| r |x - m| + |offset|; the other outputs are copies (B = 0: exact)
//   gradient:           dx: |scale| r (|dy| + mean |dy| + |xhat| mean |dy xhat|) in training,
//                           |scale| r |dy| in inference
//                       scale_backprop: sum |dy xhat|;  offset_backprop: sum |dy|
//
// The factor t: TensorFlow's (oneDNN's) float32 batch statistics carry a
// rounding error that grows with n (measured up to 35 u V at n = 784,
// 174 u V at n = 3136, tests/goldens/tf/README.md); A^2 2^-20 is the
// rounding of the mean entering the variance squared (a constant channel).
// Where both sides sum in double (BatchNormInputs::float32_statistics
// false), t = 1. Power: any error above 16 u B, for y in training about
// 16 u t of its typical size (2.7e-5 at n = 784, 2.1e-4 at n = 50176 with
// t = sqrt(n); 1e-6 with t = 1); a variance unbiased where it must not be
// (a relative error of 1 / n) fails while 1 / n > 16 u t, i.e. for
// n < 10^4 with t = sqrt(n), and at every n with t = 1.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace axon::tol {

struct BatchNormInputs {
  const float* x;  // [rows, ch]
  int64_t rows, ch;
  const float *scale, *offset, *mean, *variance;  // offset unused by the gradient
  float epsilon, exponential_avg_factor;
  bool training;
  // The statistics of the result judged are float32 sums (TensorFlow's,
  // cuDNN's): t = sqrt(n). False where both sides sum in double (axon's CPU
  // plugin, float blocks of 4 rows added in double, against the reference):
  // t = 1.
  bool float32_statistics = true;
};

namespace batch_norm_detail {
// A (mean |x|), the mean and biased variance per channel of x, or the given
// ones in inference; nothing for n = 0.
struct Channel {
  double a = 0, m = 0, v = 0, r = 0, t = 0;
};
inline Channel channel(const BatchNormInputs& in, int64_t c, const float* mean, const float* var, bool from_x) {
  Channel s;
  const double n = double(in.rows);
  for (int64_t i = 0; i < in.rows; ++i) s.a += std::fabs(double(in.x[i * in.ch + c])) / n;
  if (from_x) {
    for (int64_t i = 0; i < in.rows; ++i) s.m += double(in.x[i * in.ch + c]) / n;
    for (int64_t i = 0; i < in.rows; ++i) s.v += (in.x[i * in.ch + c] - s.m) * (in.x[i * in.ch + c] - s.m) / n;
  } else {
    s.m = mean[c];
    s.v = var[c];
  }
  s.r = 1.0 / std::sqrt(s.v + double(in.epsilon));
  s.t = in.float32_statistics ? std::sqrt(n) : 1.0;
  return s;
}
}  // namespace batch_norm_detail

// B of each of FusedBatchNormV3's first `outputs` results (y, batch_mean,
// batch_variance, reserve_space_1, reserve_space_2).
inline std::vector<std::vector<double>> batch_norm_magnitudes(const BatchNormInputs& in, int outputs) {
  std::vector<std::vector<double>> b(static_cast<size_t>(outputs));
  b[0].assign(static_cast<size_t>(in.rows * in.ch), 0.0);
  for (int k = 1; k < outputs; ++k) b[static_cast<size_t>(k)].assign(static_cast<size_t>(in.ch), 0.0);
  if (in.rows == 0) return b;
  const double f = in.exponential_avg_factor, unbias = in.rows > 1 ? double(in.rows) / double(in.rows - 1) : 1.0;
  for (int64_t c = 0; c < in.ch; ++c) {
    const auto s = batch_norm_detail::channel(in, c, in.mean, in.variance, in.training);
    const double grow = in.training ? s.t : 0.0, scale = std::fabs(double(in.scale[c])) * s.r;
    for (int64_t i = 0; i < in.rows; ++i) {
      const double centred = std::fabs(in.x[i * in.ch + c] - s.m);
      b[0][static_cast<size_t>(i * in.ch + c)] =
          scale * ((1 + grow) * centred + grow * s.a) + std::fabs(double(in.offset[c]));
    }
    if (!in.training || outputs == 1) continue;
    const double big_v = s.v + s.a * s.a * 0x1p-20;
    const double at[5] = {0, (1 - f) * std::fabs(double(in.mean[c])) + f * s.t * s.a,
                          (1 - f) * std::fabs(double(in.variance[c])) + f * unbias * s.t * big_v, s.t * s.a,
                          s.t * big_v};
    for (int k = 1; k < outputs; ++k) b[static_cast<size_t>(k)][static_cast<size_t>(c)] = at[k];
  }
  return b;
}

// B of FusedBatchNormGradV3's dx, scale_backprop and offset_backprop; in.x is
// x, in.mean and in.variance the reserve spaces.
inline std::vector<std::vector<double>> batch_norm_grad_magnitudes(const BatchNormInputs& in, const float* dy) {
  std::vector<std::vector<double>> b(3);
  b[0].assign(static_cast<size_t>(in.rows * in.ch), 0.0);
  b[1].assign(static_cast<size_t>(in.ch), 0.0);
  b[2].assign(static_cast<size_t>(in.ch), 0.0);
  for (int64_t c = 0; c < in.ch; ++c) {
    const auto s = batch_norm_detail::channel(in, c, in.mean, in.variance, false);
    double sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t i = 0; i < in.rows; ++i) {
      sum_dy += std::fabs(double(dy[i * in.ch + c]));
      sum_dy_xhat += std::fabs(double(dy[i * in.ch + c]) * (in.x[i * in.ch + c] - s.m) * s.r);
    }
    const double n = double(in.rows), scale = std::fabs(double(in.scale[c])) * s.r;
    for (int64_t i = 0; i < in.rows; ++i) {
      const double g = std::fabs(double(dy[i * in.ch + c])), xhat = std::fabs((in.x[i * in.ch + c] - s.m) * s.r);
      b[0][static_cast<size_t>(i * in.ch + c)] =
          in.training ? scale * (g + sum_dy / n + xhat * sum_dy_xhat / n) : scale * g;
    }
    b[1][static_cast<size_t>(c)] = sum_dy_xhat;
    b[2][static_cast<size_t>(c)] = sum_dy;
  }
  return b;
}

}  // namespace axon::tol
