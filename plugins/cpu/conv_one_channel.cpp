// Stride-1 convolutions of one-channel images (a grey image's first layer:
// 3x3 over 1 channel into 16 or 32), output channels in the vector lanes.
// The gathered kernels (small_gemm.hpp) read such a filter's taps value by
// value, each through a row pointer and an offset: eight row pointers no
// longer fit the general registers and move in from vector registers for
// every tap. Here each image is first copied into one zero-padded plane (a
// few KiB of the thread's scratch), so a block of pixels of an output row
// reads tap (kh, kw) at fixed offsets from row oh + kh of the plane, and the
// filter's taps stay in registers.
//
// Every output value is its products summed by multiply-adds in the
// filter's (kh, kw) order from zero, then the bias added and relu: the
// gathered kernels' exact sequence, so the results are bit-identical to
// theirs (tests/kernels compare _FusedConv2D, here, with the fused
// conv+pool op's gathered rows bit for bit) and independent of the thread
// count. Conv2DBackpropFilter sums rows in order from the same plane, as
// the gathered tn kernel does.
#include "conv.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace axon::cpu {
namespace {

// Largest plane (floats) one image may take in a thread's scratch.
constexpr int64_t kMaxPlaneFloats = int64_t{1} << 20;
// Filters of at most this many taps (their vectors loaded once per block
// of channels: 3x3 stays in registers, 5x5 spills).
constexpr int64_t kMaxTaps = 25;

struct Plane {
  int64_t rows, cols;  // padded input rows and columns
};

Plane plane_of(const ConvGeometry& g) { return {g.oh + g.kh - 1, g.ow + g.kw - 1}; }

// plane[pad_h + ih][pad_w + iw] = image[ih][iw], zeros elsewhere.
void fill_plane(const ConvGeometry& g, const Plane& s, const float* image, float* plane) {
  std::memset(plane, 0, sizeof(float) * static_cast<size_t>(s.rows * s.cols));
  const int64_t h = std::min(g.h, s.rows - g.pad_h), w = std::min(g.w, s.cols - g.pad_w);
  for (int64_t ih = 0; ih < h; ++ih) std::memcpy(plane + (ih + g.pad_h) * s.cols + g.pad_w, image + ih * g.w, 4 * w);
}

// acc + (all lanes = *p) * b (F one float: acc + *p * b), through
// simd::fma_broadcast: each splat feeds one multiply-add here.
template <class F>
__attribute__((always_inline)) inline F fma_splat(F acc, const float* p, F b) {
  if constexpr (std::is_same_v<F, float>) return acc + *p * b;
  else return simd::fma_broadcast<F>(acc, p, b);
}

// Pixels [ow0, ow0 + R) of output row `rows` (the plane rows its taps
// read), channels [c0, c0 + lanes of F), into y (the block's first pixel):
// R accumulators, each tap's vector `wt` from registers.
template <class F, int R, int KH, int KW>
__attribute__((always_inline)) inline void pixels(const ConvGeometry& g, const float* const* rows, const F* wt,
                                                  int64_t ow0, int64_t c0, const Epilogue& ep, float* y) {
  const int64_t kh_n = KH > 0 ? KH : g.kh, kw_n = KW > 0 ? KW : g.kw;
  F acc[R] = {};
  for (int64_t kh = 0; kh < kh_n; ++kh) {
    const float* row = rows[kh] + ow0;
    for (int64_t kw = 0; kw < kw_n; ++kw)
      for (int i = 0; i < R; ++i) acc[i] = fma_splat(acc[i], row + kw + i, wt[kh * kw_n + kw]);
  }
  for (int i = 0; i < R; ++i) {
    F v = acc[i];
    if (ep.bias != nullptr) v += simd::load<F>(ep.bias + c0);
    if (ep.relu) v = v > F{} ? v : F{};  // NaN -> 0, as Relu
    simd::store<F>(y + i * g.oc, v);
  }
}

// One image: y[oh][ow][oc] from its plane, a block of channels at a time,
// R pixels of a row at a time (8 accumulators fill the FMA pipes' depth;
// 4 where 16 vector registers must also hold the taps).
template <int W, int KH, int KW>
__attribute__((always_inline)) inline void image_rows(const ConvGeometry& g, const float* plane, const float* w,
                                                      float* y, const Epilogue& ep) {
  const Plane s = plane_of(g);
  const int64_t taps = g.kh * g.kw;
  simd::for_channel_blocks<W>(g.oc, [&](auto lanes, int64_t c0) __attribute__((always_inline)) {
    using F = decltype(lanes);
    constexpr int R = W == 16 ? 8 : 4;
    F wt[kMaxTaps];
    for (int64_t t = 0; t < taps; ++t) wt[t] = simd::load<F>(w + t * g.oc + c0);
    const float* rows[kMaxTaps];
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      for (int64_t kh = 0; kh < g.kh; ++kh) rows[kh] = plane + (oh + kh) * s.cols;
      float* out = y + oh * g.ow * g.oc + c0;
      int64_t ow = 0;
      for (; ow + R <= g.ow; ow += R) pixels<F, R, KH, KW>(g, rows, wt, ow, c0, ep, out + ow * g.oc);
      for (; ow < g.ow; ++ow) pixels<F, 1, KH, KW>(g, rows, wt, ow, c0, ep, out + ow * g.oc);
    }
  });
}

template <int W>
__attribute__((always_inline)) inline void one_channel_image_body(const ConvGeometry& g, const float* plane,
                                                                   const float* w, float* y, const Epilogue& ep) {
  if (g.kh == 3 && g.kw == 3) return image_rows<W, 3, 3>(g, plane, w, y, ep);
  image_rows<W, 0, 0>(g, plane, w, y, ep);
}

AXON_CPU_DISPATCH(one_channel_image,
                  (const ConvGeometry& g, const float* plane, const float* w, float* y, const Epilogue& ep),
                  (g, plane, w, y, ep))

// Filters of at most this many taps take the filter gradient here: one
// accumulator vector per tap, with the gradient's and a tap's vector, in
// AVX2's 16 registers.
constexpr int64_t kMaxGradientTaps = 9;

// acc[(kh * KW + kw) * oc + o] (+)= the sum over rows r in [r0, r1) (r =
// (n, oh, ow)) of x's tap (kh, kw) of row r times dy[r - r0][o], a channel
// block at a time, rows in order: each element's multiply-adds in the
// gathered tn kernel's order (small_gemm.hpp), so its bits (compared with
// it when this was written: four shapes, AVX-512 and AVX2, one and two
// threads; tests/kernels compare the fused conv+pool gradient's, which
// keeps the gathered rows, with Conv2DBackpropFilter's, here, bit for
// bit).
template <int W, int KH, int KW>
__attribute__((always_inline)) inline void filter_sums(const ConvGeometry& g, const float* x, int64_t r0, int64_t r1,
                                                       const float* dy, float* acc, bool accumulate, float* plane) {
  const Plane s = plane_of(g);
  const int64_t kh_n = KH > 0 ? KH : g.kh, kw_n = KW > 0 ? KW : g.kw, taps = kh_n * kw_n;
  // An image's part of the rows at a time, its plane filled once: each block
  // of channels carries its sums through acc (stored and loaded exactly).
  for (int64_t b = r0; b < r1;) {
    const int64_t n = b / (g.oh * g.ow), in_image = b % (g.oh * g.ow);
    const int64_t end = std::min(r1, b - in_image + g.oh * g.ow);
    fill_plane(g, s, x + n * g.h * g.w, plane);
    const bool carry = accumulate || b > r0;
    simd::for_channel_blocks<W>(g.oc, [&](auto lanes, int64_t c0) __attribute__((always_inline)) {
      using F = decltype(lanes);
      F sum[kMaxGradientTaps];
      for (int64_t t = 0; t < taps; ++t) sum[t] = carry ? simd::load<F>(acc + t * g.oc + c0) : F{};
      for (int64_t r = b, oh = in_image / g.ow, ow = in_image % g.ow; r < end; ++oh, ow = 0) {
        const float* rows[kMaxGradientTaps];
        for (int64_t kh = 0; kh < kh_n; ++kh) rows[kh] = plane + (oh + kh) * s.cols;
        for (; ow < g.ow && r < end; ++ow, ++r) {
          const F dv = simd::load<F>(dy + (r - r0) * g.oc + c0);
          for (int64_t kh = 0; kh < kh_n; ++kh)
            for (int64_t kw = 0; kw < kw_n; ++kw) {
              F& tap = sum[kh * kw_n + kw];
              tap = fma_splat(tap, rows[kh] + ow + kw, dv);
            }
        }
      }
      for (int64_t t = 0; t < taps; ++t) simd::store<F>(acc + t * g.oc + c0, sum[t]);
    });
    b = end;
  }
}

template <int W>
__attribute__((always_inline)) inline void plane_filter_sums_body(const ConvGeometry& g, const float* x,
                                                                         int64_t r0, int64_t r1, const float* dy,
                                                                         float* acc, bool accumulate, float* plane) {
  if (g.kh == 3 && g.kw == 3) return filter_sums<W, 3, 3>(g, x, r0, r1, dy, acc, accumulate, plane);
  filter_sums<W, 0, 0>(g, x, r0, r1, dy, acc, accumulate, plane);
}

AXON_CPU_DISPATCH(plane_filter_sums,
                  (const ConvGeometry& g, const float* x, int64_t r0, int64_t r1, const float* dy, float* acc,
                   bool accumulate, float* plane),
                  (g, x, r0, r1, dy, acc, accumulate, plane))

}  // namespace

bool one_channel_conv_applies(const ConvGeometry& g) {
  if (simd::isa() == simd::Isa::base) return false;  // no FMA: the gathered kernels' rounding differs
  if (g.c != 1 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 || g.oc == 0) return false;
  if (g.kh * g.kw > kMaxTaps || (g.kh == 1 && g.kw == 1)) return false;
  const Plane s = plane_of(g);
  return s.rows * s.cols <= kMaxPlaneFloats;
}

void one_channel_conv2d(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y,
                        const Epilogue& ep, bool parallel) {
  const Plane s = plane_of(g);
  const int64_t image_in = g.h * g.w, image_out = g.oh * g.ow * g.oc;
  d.pool().for_ranges(g.n, 1, parallel, [&](int t, int64_t n0, int64_t n1) {
    float* plane = d.scratch(t, static_cast<size_t>(s.rows * s.cols));
    for (int64_t n = n0; n < n1; ++n) {
      fill_plane(g, s, x + n * image_in, plane);
      one_channel_image(g, plane, w, y + n * image_out, ep);
    }
  });
}

}  // namespace axon::cpu

namespace axon::cpu {

bool one_channel_filter_applies(const ConvGeometry& g) {
  return one_channel_conv_applies(g) && g.kh * g.kw <= kMaxGradientTaps;
}

void one_channel_filter_sums(CpuDevice& d, int t, const ConvGeometry& g, const float* x, int64_t r0, int64_t r1,
                             const float* dy, float* acc, bool accumulate) {
  const Plane s = plane_of(g);
  plane_filter_sums(g, x, r0, r1, dy, acc, accumulate, d.scratch(t, static_cast<size_t>(s.rows * s.cols)));
}

}  // namespace axon::cpu
