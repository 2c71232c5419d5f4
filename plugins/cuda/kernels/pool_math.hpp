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
// Indices of type I: 64-bit in general, 32-bit where every index fits (the
// kernels' divisions are then a fraction of the cost on a GPU).
template <class I>
struct PoolShapeT {
  I n, h, w, c, kh, kw, oh, ow, sh, sw, pad_h, pad_w;
};
using PoolShape = PoolShapeT<int64_t>;

// The same shape with 32-bit indices.
inline PoolShapeT<int32_t> narrow(const PoolShape& p) {
  auto i = [](int64_t v) { return static_cast<int32_t>(v); };
  return {i(p.n), i(p.h), i(p.w), i(p.c), i(p.kh), i(p.kw), i(p.oh), i(p.ow), i(p.sh), i(p.sw), i(p.pad_h), i(p.pad_w)};
}

// T itself, in a parameter the shape's index type decides (not deduced).
template <class T>
struct Same {
  using type = T;
};

// For output element `o`: the tap (kh * window width + kw) of its window's
// first maximum of x, scanning row-major; padding takes no part, and a later
// tap wins only when greater (so a NaN never does, unless it comes first).
template <class I>
AXON_HD inline int32_t max_pool_first_max_tap(const PoolShapeT<I>& p, const float* x, typename Same<I>::type o) {
  const I c = o % p.c;
  I t = o / p.c;
  const I ow = t % p.ow;
  t /= p.ow;
  const I oh = t % p.oh;
  const I n = t / p.oh;
  I best = -1;
  int32_t best_tap = 0;
  for (I kh = 0; kh < p.kh; ++kh) {
    const I ih = oh * p.sh - p.pad_h + kh;
    if (ih < 0 || ih >= p.h) continue;
    for (I kw = 0; kw < p.kw; ++kw) {
      const I iw = ow * p.sw - p.pad_w + kw;
      if (iw < 0 || iw >= p.w) continue;
      const I at = ((n * p.h + ih) * p.w + iw) * p.c + c;
      if (best < 0 || x[at] > x[best]) best = at, best_tap = static_cast<int32_t>(kh * p.kw + kw);
    }
  }
  return best_tap;
}

// For input element `i`: the sum of dy over the windows whose first maximum
// it is (`tap` from max_pool_first_max_tap), windows in row-major order.
template <class I>
AXON_HD inline float max_pool_grad_at(const PoolShapeT<I>& p, const int32_t* tap, const float* dy,
                                     typename Same<I>::type i) {
  const I c = i % p.c;
  I t = i / p.c;
  const I iw = t % p.w;
  t /= p.w;
  const I ih = t % p.h;
  const I n = t / p.h;
  // The windows oh with oh * sh - pad_h <= ih < oh * sh - pad_h + kh.
  const I hh = ih + p.pad_h, ww = iw + p.pad_w;
  const I oh0 = hh >= p.kh ? (hh - p.kh) / p.sh + 1 : 0, ow0 = ww >= p.kw ? (ww - p.kw) / p.sw + 1 : 0;
  const I oh1 = hh / p.sh < p.oh - 1 ? hh / p.sh : p.oh - 1, ow1 = ww / p.sw < p.ow - 1 ? ww / p.sw : p.ow - 1;
  float sum = 0.f;
  for (I oh = oh0; oh <= oh1; ++oh)
    for (I ow = ow0; ow <= ow1; ++ow) {
      const I o = ((n * p.oh + oh) * p.ow + ow) * p.c + c;
      const I th = tap[o] / p.kw, tw = tap[o] % p.kw;
      if (oh * p.sh - p.pad_h + th == ih && ow * p.sw - p.pad_w + tw == iw) sum += dy[o];
    }
  return sum;
}

// The window of output `o` clipped to x: rows [h0, h1), columns [w0, w1).
template <class I>
struct Taps {
  I n, c, h0, h1, w0, w1;
  AXON_HD I count() const { return (h1 - h0) * (w1 - w0); }
};

template <class I>
AXON_HD inline Taps<I> window_taps(const PoolShapeT<I>& p, I oh, I ow, I n, I c) {
  const I top = oh * p.sh - p.pad_h, left = ow * p.sw - p.pad_w;
  Taps<I> t{n,
         c,
         top < 0 ? 0 : top,
         top + p.kh < p.h ? top + p.kh : p.h,
         left < 0 ? 0 : left,
         left + p.kw < p.w ? left + p.kw : p.w};
  return t;
}

// AvgPool's output `o`: the mean of its window's taps inside x (TensorFlow's
// SAME counts no padding).
template <class I>
AXON_HD inline float avg_pool_at(const PoolShapeT<I>& p, const float* x, typename Same<I>::type o) {
  const I c = o % p.c;
  I t = o / p.c;
  const I ow = t % p.ow;
  t /= p.ow;
  const Taps<I> w = window_taps(p, t % p.oh, ow, t / p.oh, c);
  float sum = 0.f;
  for (I ih = w.h0; ih < w.h1; ++ih)
    for (I iw = w.w0; iw < w.w1; ++iw) sum += x[((w.n * p.h + ih) * p.w + iw) * p.c + c];
  return sum / static_cast<float>(w.count());
}

// AvgPoolGrad's input element `i`: the sum over the windows holding it of
// their dy divided by their tap count, windows in row-major order.
template <class I>
AXON_HD inline float avg_pool_grad_at(const PoolShapeT<I>& p, const float* dy, typename Same<I>::type i) {
  const I c = i % p.c;
  I t = i / p.c;
  const I iw = t % p.w;
  t /= p.w;
  const I ih = t % p.h;
  const I n = t / p.h;
  const I hh = ih + p.pad_h, ww = iw + p.pad_w;
  const I oh0 = hh >= p.kh ? (hh - p.kh) / p.sh + 1 : 0, ow0 = ww >= p.kw ? (ww - p.kw) / p.sw + 1 : 0;
  const I oh1 = hh / p.sh < p.oh - 1 ? hh / p.sh : p.oh - 1, ow1 = ww / p.sw < p.ow - 1 ? ww / p.sw : p.ow - 1;
  float sum = 0.f;
  for (I oh = oh0; oh <= oh1; ++oh)
    for (I ow = ow0; ow <= ow1; ++ow)
      sum += dy[((n * p.oh + oh) * p.ow + ow) * p.c + c] / static_cast<float>(window_taps(p, oh, ow, n, c).count());
  return sum;
}

}  // namespace axon::cuda
