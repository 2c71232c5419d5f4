// The per-element arithmetic of axon's own pooling kernels (pooling.cu:
// MaxPoolGrad, AvgPool, AvgPoolGrad),
// host and device alike (device_math.hpp), tested on the host by
// tests/cuda/pool_math_test.cpp.
#pragma once

#include "device_math.hpp"

#include <cstdint>

namespace axon::cuda {

// A pooling window geometry (TensorFlow's, from op_geometry.hpp): input
// [n, h, w, c], output [n, oh, ow, c], window kh x kw, strides, and the
// padding before the first row and column.
struct PoolShape {
  int64_t n, h, w, c, kh, kw, oh, ow, sh, sw, pad_h, pad_w;
};

// For output element `o`: the tap (kh * window width + kw) of its window's
// first maximum of x, scanning row-major; padding takes no part, and a later
// tap wins only when greater (so a NaN never does, unless it comes first).
AXON_HD inline int32_t max_pool_first_max_tap(const PoolShape& p, const float* x, int64_t o) {
  const int64_t c = o % p.c;
  int64_t t = o / p.c;
  const int64_t ow = t % p.ow;
  t /= p.ow;
  const int64_t oh = t % p.oh;
  const int64_t n = t / p.oh;
  int64_t best = -1;
  int32_t best_tap = 0;
  for (int64_t kh = 0; kh < p.kh; ++kh) {
    const int64_t ih = oh * p.sh - p.pad_h + kh;
    if (ih < 0 || ih >= p.h) continue;
    for (int64_t kw = 0; kw < p.kw; ++kw) {
      const int64_t iw = ow * p.sw - p.pad_w + kw;
      if (iw < 0 || iw >= p.w) continue;
      const int64_t at = ((n * p.h + ih) * p.w + iw) * p.c + c;
      if (best < 0 || x[at] > x[best]) best = at, best_tap = static_cast<int32_t>(kh * p.kw + kw);
    }
  }
  return best_tap;
}

// For input element `i`: the sum of dy over the windows whose first maximum
// it is (`tap` from max_pool_first_max_tap), windows in row-major order.
AXON_HD inline float max_pool_grad_at(const PoolShape& p, const int32_t* tap, const float* dy, int64_t i) {
  const int64_t c = i % p.c;
  int64_t t = i / p.c;
  const int64_t iw = t % p.w;
  t /= p.w;
  const int64_t ih = t % p.h;
  const int64_t n = t / p.h;
  // The windows oh with oh * sh - pad_h <= ih < oh * sh - pad_h + kh.
  const int64_t hh = ih + p.pad_h, ww = iw + p.pad_w;
  const int64_t oh0 = hh >= p.kh ? (hh - p.kh) / p.sh + 1 : 0, ow0 = ww >= p.kw ? (ww - p.kw) / p.sw + 1 : 0;
  const int64_t oh1 = hh / p.sh < p.oh - 1 ? hh / p.sh : p.oh - 1, ow1 = ww / p.sw < p.ow - 1 ? ww / p.sw : p.ow - 1;
  float sum = 0.f;
  for (int64_t oh = oh0; oh <= oh1; ++oh)
    for (int64_t ow = ow0; ow <= ow1; ++ow) {
      const int64_t o = ((n * p.oh + oh) * p.ow + ow) * p.c + c;
      const int64_t th = tap[o] / p.kw, tw = tap[o] % p.kw;
      if (oh * p.sh - p.pad_h + th == ih && ow * p.sw - p.pad_w + tw == iw) sum += dy[o];
    }
  return sum;
}

// The window of output `o` clipped to x: rows [h0, h1), columns [w0, w1).
struct Taps {
  int64_t n, c, h0, h1, w0, w1;
  AXON_HD int64_t count() const { return (h1 - h0) * (w1 - w0); }
};

AXON_HD inline Taps window_taps(const PoolShape& p, int64_t oh, int64_t ow, int64_t n, int64_t c) {
  const int64_t top = oh * p.sh - p.pad_h, left = ow * p.sw - p.pad_w;
  Taps t{n,
         c,
         top < 0 ? 0 : top,
         top + p.kh < p.h ? top + p.kh : p.h,
         left < 0 ? 0 : left,
         left + p.kw < p.w ? left + p.kw : p.w};
  return t;
}

// AvgPool's output `o`: the mean of its window's taps inside x (TensorFlow's
// SAME counts no padding).
AXON_HD inline float avg_pool_at(const PoolShape& p, const float* x, int64_t o) {
  const int64_t c = o % p.c;
  int64_t t = o / p.c;
  const int64_t ow = t % p.ow;
  t /= p.ow;
  const Taps w = window_taps(p, t % p.oh, ow, t / p.oh, c);
  float sum = 0.f;
  for (int64_t ih = w.h0; ih < w.h1; ++ih)
    for (int64_t iw = w.w0; iw < w.w1; ++iw) sum += x[((w.n * p.h + ih) * p.w + iw) * p.c + c];
  return sum / static_cast<float>(w.count());
}

// AvgPoolGrad's input element `i`: the sum over the windows holding it of
// their dy divided by their tap count, windows in row-major order.
AXON_HD inline float avg_pool_grad_at(const PoolShape& p, const float* dy, int64_t i) {
  const int64_t c = i % p.c;
  int64_t t = i / p.c;
  const int64_t iw = t % p.w;
  t /= p.w;
  const int64_t ih = t % p.h;
  const int64_t n = t / p.h;
  const int64_t hh = ih + p.pad_h, ww = iw + p.pad_w;
  const int64_t oh0 = hh >= p.kh ? (hh - p.kh) / p.sh + 1 : 0, ow0 = ww >= p.kw ? (ww - p.kw) / p.sw + 1 : 0;
  const int64_t oh1 = hh / p.sh < p.oh - 1 ? hh / p.sh : p.oh - 1, ow1 = ww / p.sw < p.ow - 1 ? ww / p.sw : p.ow - 1;
  float sum = 0.f;
  for (int64_t oh = oh0; oh <= oh1; ++oh)
    for (int64_t ow = ow0; ow <= ow1; ++ow)
      sum += dy[((n * p.oh + oh) * p.ow + ow) * p.c + c] / static_cast<float>(window_taps(p, oh, ow, n, c).count());
  return sum;
}

}  // namespace axon::cuda
