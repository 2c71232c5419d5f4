// _FusedConv2DMaxPool and _FusedConv2DMaxPoolGrad: a convolution layer and the
// max pooling after it, without the layer's full-size activations going
// through memory. For the CNN's first layer those are 64x26x26x32 floats
// (5.5 MB, beyond L2), which the separate ops write or read eight times a
// step at ~25 GB/s per core; here it crosses memory twice (dz, below).
//  - Forward: a thread computes the conv rows one group of pooled rows needs
//    into its own tile (in L2), with bias and activation applied as the rows
//    leave the registers, and pools the tile into y and a one-byte argmax.
//    Where the pooling is 2x2 at stride 2 and the convolution runs as
//    Winograd (each output tile a column of windows), or has one input
//    channel and a 3x3 filter (grey_windows), each window's four outputs are
//    pooled in registers.
//  - Backward: dz, the gradient of the conv output, is built row by row from
//    dy and the argmax (one write, no read of the activations), the bias
//    gradient summed in the same pass; Conv2DBackpropFilter and
//    Conv2DBackpropInput then run on dz exactly as they run alone.
// So the results equal MaxPool(_FusedConv2D) and MaxPoolGrad, ReluGrad,
// BiasAddGrad, Conv2DBackpropFilter, Conv2DBackpropInput run apart, bit for
// bit (same products, every sum in the same order; where sgemm would make a
// row's rounding depend on its tile, the forward computes the convolution in
// Conv2D's own tiles first, see conv_rows_independent).
#include "conv.hpp"
#include "winograd.hpp"
#include "device.hpp"
#include "kernels.hpp"
#include "pool_2x2.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstring>

namespace axon::cpu {
namespace {

constexpr int64_t kSerialMacs = 1 << 18;      // below: one thread (as conv.cpp)
constexpr int64_t kSerialElements = 1 << 15;  // below: one thread (as math.cpp)

struct ConvPoolGeom {
  ConvGeometry g;  // the convolution; its output [n, oh, ow, oc] is the pool's input
  PoolGeometry p;
  bool relu;
  // Conv output rows [lo, hi) that pooled row ph reads.
  int64_t lo(int64_t ph) const { return std::max<int64_t>(0, ph * p.sh - p.pad_h); }
  int64_t hi(int64_t ph) const { return std::min(p.h, ph * p.sh - p.pad_h + p.kh); }
  // One past the last conv output column pooled column pw reads.
  int64_t wi(int64_t pw) const { return std::min(p.w, pw * p.sw - p.pad_w + p.kw); }
};

ConvPoolGeom geometry(const KernelCall& c, const TensorRef& x, const TensorRef& filter) {
  const auto& a = c.attrs<axon_fused_conv2d_max_pool_attrs>();
  ConvPoolGeom cp;
  cp.g = conv_geometry(a.conv, x.c(), filter.c());
  cp.p = pool_geometry(a.pool, cp.g.n, cp.g.oh, cp.g.ow, cp.g.oc);
  cp.relu = a.activation == AXON_ACTIVATION_RELU;
  return cp;
}

// ------------------------------------------------------------------ forward

// Channels [c0, c0 + NV*W) of one pool window, its taps clipped to rows
// [h0, h1) and columns [w0, w1): a row-major scan keeping a value only when
// strictly larger (the first maximum wins, as MaxPool and MaxPoolGrad
// decide). NV independent vectors, so the compare/select chains overlap.
template <int W, int NV, class Tap>
__attribute__((always_inline)) inline void pool_window(const ConvPoolGeom& cp, int64_t h0, int64_t h1, int64_t w0,
                                                        int64_t w1, const Tap& tap, int64_t c0, float* y,
                                                        uint8_t* argmax) {
  using F = typename simd::Vec<W>::f;
  using I = typename simd::Vec<W>::i;
  F best[NV];
  I won[NV];
  const I first = simd::splat<I>(tap.index(h0, w0));
  for (int j = 0; j < NV; ++j) {
    best[j] = simd::load<F>(tap.at(h0, w0) + c0 + j * W);
    won[j] = first;
  }
  for (int64_t ih = h0; ih < h1; ++ih)
    for (int64_t iw = ih == h0 ? w0 + 1 : w0; iw < w1; ++iw) {
      const float* in = tap.at(ih, iw) + c0;
      const int32_t t = tap.index(ih, iw);
      for (int j = 0; j < NV; ++j) {
        const F v = simd::load<F>(in + j * W);
        const I more = v > best[j];
        best[j] = more ? v : best[j];
        won[j] = more ? I{} + t : won[j];
      }
    }
  for (int j = 0; j < NV; ++j) {
    if (cp.relu) won[j] = best[j] > F{} ? won[j] : I{} + AXON_ARGMAX_NONE;  // ReLU passes no gradient there
    simd::store<F>(y + c0 + j * W, best[j]);
    simd::narrow_to_bytes(argmax + c0 + j * W, won[j]);
  }
}

// Pools pooled rows [ph0, ph1) of one image from z, which holds that image's
// conv output rows from `lo` on (all columns).
template <int W>
__attribute__((always_inline)) inline void pool_tile_body(const ConvPoolGeom& cp, const float* z, int64_t lo,
                                                           int64_t ph0, int64_t ph1, float* y, uint8_t* argmax) {
  const PoolGeometry& p = cp.p;
  const int64_t ch = p.c;
  struct Tap {
    const PoolGeometry& p;
    const float* z;
    int64_t lo, hs, ws;  // hs, ws: the window's unclipped corner
    const float* at(int64_t ih, int64_t iw) const { return z + ((ih - lo) * p.w + iw) * p.c; }
    int32_t index(int64_t ih, int64_t iw) const { return static_cast<int32_t>((ih - hs) * p.kw + (iw - ws)); }
  };
  for (int64_t ph = ph0; ph < ph1; ++ph)
    for (int64_t pw = 0; pw < p.ow; ++pw) {
      const Tap tap{p, z, lo, ph * p.sh - p.pad_h, pw * p.sw - p.pad_w};
      const int64_t h0 = std::max<int64_t>(tap.hs, 0), h1 = std::min(tap.hs + p.kh, p.h);
      const int64_t w0 = std::max<int64_t>(tap.ws, 0), w1 = std::min(tap.ws + p.kw, p.w);
      float* yo = y + (ph * p.ow + pw) * ch;
      uint8_t* ao = argmax + (ph * p.ow + pw) * ch;
      int64_t c0 = 0;
      for (; c0 + 4 * W <= ch; c0 += 4 * W) pool_window<W, 4>(cp, h0, h1, w0, w1, tap, c0, yo, ao);
      if (c0 + 2 * W <= ch) pool_window<W, 2>(cp, h0, h1, w0, w1, tap, c0, yo, ao), c0 += 2 * W;
      if (c0 + W <= ch) pool_window<W, 1>(cp, h0, h1, w0, w1, tap, c0, yo, ao), c0 += W;
      for (int64_t c = c0; c < ch; ++c) {  // the last ch % W channels
        float best = tap.at(h0, w0)[c];
        int32_t won = tap.index(h0, w0);
        for (int64_t ih = h0; ih < h1; ++ih)
          for (int64_t iw = w0; iw < w1; ++iw)
            if (tap.at(ih, iw)[c] > best) best = tap.at(ih, iw)[c], won = tap.index(ih, iw);
        if (cp.relu && !(best > 0.0f)) won = AXON_ARGMAX_NONE;
        yo[c] = best;
        ao[c] = static_cast<uint8_t>(won);
      }
    }
}

// One input channel, a 3x3 filter (a grey image's first layer, the CNN's
// conv1), VALID at stride 1, pooled 2x2 at stride 2: each window's four
// conv outputs are computed in registers, NV vectors of channels from c0,
// and pooled there. The tap loop is unrolled, so the filter's 9 NV vectors
// stay in registers across a row of windows (AVX-512: 18 of 32). Each
// output is its 9 products summed from zero in (kh, kw) order by the same
// multiply-adds as the gathered kernel's (small_gemm.cpp), then the bias and
// relu: the same bits as _FusedConv2D + MaxPool.
template <int W, int NV>
__attribute__((always_inline)) inline void grey_windows(const ConvPoolGeom& cp, const float* image, const float* w,
                                                         const Epilogue& ep, int64_t ph, int64_t c0, float* y,
                                                         uint8_t* argmax) {
  using F = typename simd::Vec<W>::f;
  const ConvGeometry& g = cp.g;
  const int64_t oc = g.oc;
  F wv[9][NV];
  for (int t = 0; t < 9; ++t)
    for (int j = 0; j < NV; ++j) wv[t][j] = simd::load<F>(w + t * oc + c0 + j * W);
  F bias[NV] = {};
  if (ep.bias != nullptr)
    for (int j = 0; j < NV; ++j) bias[j] = simd::load<F>(ep.bias + c0 + j * W);
  for (int64_t pw = 0; pw < cp.p.ow; ++pw) {
    const float* at = image + (2 * ph) * g.w + 2 * pw;  // the window's top-left conv output's first tap
    F acc[NV][2][2] = {};
#pragma GCC unroll 9
    for (int t = 0; t < 9; ++t) {
      const float* px = at + (t / 3) * g.w + t % 3;
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 2; ++k) {
          const F s = simd::broadcast<F>(px + i * g.w + k);
          for (int j = 0; j < NV; ++j) acc[j][i][k] += s * wv[t][j];
        }
    }
    const int64_t out = (ph * cp.p.ow + pw) * oc + c0;
    for (int j = 0; j < NV; ++j) {
      for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 2; ++k) {
          if (ep.bias != nullptr) acc[j][i][k] += bias[j];
          if (ep.relu) acc[j][i][k] = acc[j][i][k] > F{} ? acc[j][i][k] : F{};  // NaN -> 0, as Relu
        }
      max_pool_2x2(acc[j], ep.relu, y + out + j * W, argmax + out + j * W);
    }
  }
}

// Pooled rows [ph0, ph1) of image n by grey_windows (channels in blocks of
// two vectors, one, then one float at a time).
template <int W>
__attribute__((always_inline)) inline void grey_conv_pool_body(const ConvPoolGeom& cp, const float* x, const float* w,
                                                                const Epilogue& ep, int64_t n, int64_t ph0,
                                                                int64_t ph1, float* y, uint8_t* argmax) {
  const ConvGeometry& g = cp.g;
  const float* image = x + n * g.h * g.w;
  const int64_t image_out = cp.p.oh * cp.p.ow * g.oc;
  y += n * image_out, argmax += n * image_out;
  for (int64_t ph = ph0; ph < ph1; ++ph) {
    int64_t c0 = 0;
    for (; c0 + 2 * W <= g.oc; c0 += 2 * W) grey_windows<W, 2>(cp, image, w, ep, ph, c0, y, argmax);
    if (c0 + W <= g.oc) grey_windows<W, 1>(cp, image, w, ep, ph, c0, y, argmax), c0 += W;
    for (; c0 < g.oc; ++c0)
      for (int64_t pw = 0; pw < cp.p.ow; ++pw) {
        const float* at = image + (2 * ph) * g.w + 2 * pw;
        float v[2][2] = {};
        for (int t = 0; t < 9; ++t)
          for (int i = 0; i < 2; ++i)
            for (int k = 0; k < 2; ++k) v[i][k] += at[(i + t / 3) * g.w + k + t % 3] * w[t * g.oc + c0];
        for (int i = 0; i < 2; ++i)
          for (int k = 0; k < 2; ++k) {
            if (ep.bias != nullptr) v[i][k] += ep.bias[c0];
            if (ep.relu) v[i][k] = v[i][k] > 0.0f ? v[i][k] : 0.0f;
          }
        const int64_t out = (ph * cp.p.ow + pw) * g.oc + c0;
        max_pool_2x2(v, ep.relu, y + out, argmax + out);
      }
  }
}

AXON_CPU_DISPATCH(grey_conv_pool,
                  (const ConvPoolGeom& cp, const float* x, const float* w, const Epilogue& ep, int64_t n, int64_t ph0,
                   int64_t ph1, float* y, uint8_t* argmax),
                  (cp, x, w, ep, n, ph0, ph1, y, argmax))

bool grey_conv_pool_applies(const ConvPoolGeom& cp) {
  const ConvGeometry& g = cp.g;
  const PoolGeometry& p = cp.p;
  return g.c == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 &&
         g.pad_h_total == 0 && g.pad_w_total == 0 && p.kh == 2 && p.kw == 2 && p.sh == 2 && p.sw == 2 &&
         p.pad_h_total == 0 && p.pad_w_total == 0;
}

AXON_CPU_DISPATCH(pool_tile,
                  (const ConvPoolGeom& cp, const float* z, int64_t lo, int64_t ph0, int64_t ph1, float* y,
                   uint8_t* argmax),
                  (cp, z, lo, ph0, ph1, y, argmax))

void fused_conv2d_max_pool(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), bias = c.input(2), y = c.output(0), am = c.output(1);
  const ConvPoolGeom cp = geometry(c, x, f);
  const ConvGeometry& g = cp.g;
  const PoolGeometry& p = cp.p;
  if (y.numel() == 0) return;
  const float* xp = x.data<float>();
  const float* w = f.data<float>();
  float* yp = y.data<float>();
  uint8_t* ap = am.data<uint8_t>();
  Epilogue ep;
  ep.bias = bias.data<float>();
  ep.relu = cp.relu;

  // Tasks: a group of pooled rows of one image, sized so its conv rows fill
  // about one conv tile (at least one pooled row). Windows that overlap
  // vertically recompute the shared conv rows in both groups.
  const int64_t rows_per_pooled_row = std::min(p.kh, p.h) * g.ow;
  const int64_t group = std::max<int64_t>(1, tile_rows(g.k()) / std::max<int64_t>(rows_per_pooled_row, 1));
  const int64_t groups = (p.oh + group - 1) / group, tasks = p.n * groups;
  const bool parallel = g.rows() * g.k() * g.oc >= kSerialMacs;
  if (winograd_pools_output(g, p))
    return winograd_conv2d_max_pool(d, g, xp, w, ep, PooledOutput{yp, ap, p.oh, p.ow});
  if (grey_conv_pool_applies(cp)) {
    d.pool().for_ranges(tasks, 1, parallel, [&](int, int64_t b, int64_t e) {
      for (int64_t task = b; task < e; ++task) {
        const int64_t n = task / groups, ph0 = task % groups * group;
        grey_conv_pool(cp, xp, w, ep, n, ph0, std::min(p.oh, ph0 + group), yp, ap);
      }
    });
    return;
  }
  const ConvTaps taps = conv_taps(d, g);
  if (use_winograd(g, ConvPass::forward) || !conv_rows_independent(g, taps)) {
    // Conv2D runs as Winograd (winograd.hpp), or its products go to sgemm and
    // round differently in other tiles: compute the convolution as Conv2D
    // does, then pool it (exactly the separate ops, without the memory
    // saving). Winograd computes only the tiles the windows read.
    float* z = d.intermediate(static_cast<size_t>(g.rows() * g.oc));
    if (use_winograd(g, ConvPass::forward))
      winograd_conv2d(d, g, xp, w, z, ep, OutputReach{cp.hi(p.oh - 1), cp.wi(p.ow - 1)});
    else
      conv2d_into(d, g, xp, w, z, ep);
    const int64_t image_out = p.oh * p.ow * p.c;
    d.pool().for_ranges(p.n, 1, parallel, [&](int, int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n)
        pool_tile(cp, z + n * g.oh * g.ow * g.oc, 0, 0, p.oh, yp + n * image_out, ap + n * image_out);
    });
    return;
  }
  d.pool().for_ranges(tasks, 1, parallel, [&](int t, int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t n = task / groups, ph0 = task % groups * group, ph1 = std::min(p.oh, ph0 + group);
      const int64_t lo = cp.lo(ph0), hi = cp.hi(ph1 - 1);
      const int64_t r0 = (n * g.oh + lo) * g.ow, r1 = (n * g.oh + hi) * g.ow;
      float* z = d.tile(t, static_cast<size_t>((r1 - r0) * g.oc));
      conv_rows(d, t, g, taps, xp, w, r0, r1, z, ep);
      const int64_t image = n * p.oh * p.ow * p.c;
      pool_tile(cp, z, lo, ph0, ph1, yp + image, ap + image);
    }
  });
}

// ------------------------------------------------------------------ backward

// dz rows [r0, r1) (dz[0] is row r0's) from dy and the argmax, and their
// column sums into acc[ch] (double, row order: exactly BiasAddGrad's sums
// over the same rows).
// A conv output pixel takes dy from every window whose argmax is its tap, in
// window order (as MaxPoolGrad adds them); ReLU's zeros are already in the
// argmax (AXON_ARGMAX_NONE matches no tap). The windows covering a pixel are
// found with counters, not divisions (a division per row cost more than the
// rest of the pass).
template <int W>
__attribute__((always_inline)) inline void route_rows_body(const ConvPoolGeom& cp, const float* dy,
                                                            const uint8_t* argmax, int64_t r0, int64_t r1, float* dz,
                                                            double* acc) {
  using F = typename simd::Vec<W>::f;
  using I = typename simd::Vec<W>::i;
  const PoolGeometry& p = cp.p;
  const int64_t ch = p.c, vec_end = ch / W * W;
  // Windows [first, last) along one axis covering position o: those v with
  // v*s - pad <= o < v*s - pad + k.
  auto windows = [](int64_t o, int64_t k, int64_t s, int64_t pad, int64_t count, int64_t& first, int64_t& last) {
    first = std::max<int64_t>(0, (o + pad - k + s) / s);
    last = std::min(count, (o + pad) / s + 1);
  };
  for (int64_t c0 = 0; c0 < ch; ++c0) acc[c0] = 0.0;
  int64_t ow = r0 % p.w, oh = r0 / p.w % p.h, n = r0 / (p.w * p.h);
  int64_t ph0, ph1, pw0, pw1;
  windows(oh, p.kh, p.sh, p.pad_h, p.oh, ph0, ph1);
  windows(ow, p.kw, p.sw, p.pad_w, p.ow, pw0, pw1);
  for (int64_t r = r0; r < r1; ++r) {
    float* out = dz + (r - r0) * ch;
    for (int64_t c0 = 0; c0 < vec_end; c0 += W) {
      F v{};
      for (int64_t ph = ph0; ph < ph1; ++ph)
        for (int64_t pw = pw0; pw < pw1; ++pw) {
          const int32_t t = static_cast<int32_t>((oh - (ph * p.sh - p.pad_h)) * p.kw + (ow - (pw * p.sw - p.pad_w)));
          const int64_t i = ((n * p.oh + ph) * p.ow + pw) * ch + c0;
          v += simd::widen_bytes<I>(argmax + i) == t ? simd::load<F>(dy + i) : F{};
        }
      simd::store<F>(out + c0, v);
      simd::DoubleSum<W> s(acc + c0);
      s.add(v);
      s.store(acc + c0);
    }
    for (int64_t c = vec_end; c < ch; ++c) {
      float v = 0.0f;
      for (int64_t ph = ph0; ph < ph1; ++ph)
        for (int64_t pw = pw0; pw < pw1; ++pw) {
          const int64_t t = (oh - (ph * p.sh - p.pad_h)) * p.kw + (ow - (pw * p.sw - p.pad_w));
          const int64_t i = ((n * p.oh + ph) * p.ow + pw) * ch + c;
          v += argmax[i] == t ? dy[i] : 0.0f;
        }
      out[c] = v;
      acc[c] += v;
    }
    // Next pixel: the window range moves by one when a window starts or ends.
    if (++ow == p.w) {
      ow = 0;
      if (++oh == p.h) oh = 0, ++n;
      windows(oh, p.kh, p.sh, p.pad_h, p.oh, ph0, ph1);
      windows(ow, p.kw, p.sw, p.pad_w, p.ow, pw0, pw1);
    } else {
      if (pw0 < p.ow && pw0 * p.sw - p.pad_w + p.kw == ow) ++pw0;  // window pw0 ended at ow - 1
      if (pw1 < p.ow && pw1 * p.sw - p.pad_w == ow) ++pw1;         // window pw1 starts at ow
    }
  }
}

// route_rows for pools whose windows tile the image (stride = window, no
// padding; a ragged edge gets no gradient): pixel (oh, ow) lies in window
// (oh / kh, ow / kw) alone. One pass over the rows per W channels, the sums
// in registers, positions tracked by counters.
struct TiledWalk {
  const PoolGeometry& p;
  int64_t ow, oh, n, qx, pw, qy, ph;
  TiledWalk(const PoolGeometry& g, int64_t r)
      : p(g), ow(r % g.w), oh(r / g.w % g.h), n(r / (g.w * g.h)), qx(ow % g.kw), pw(ow / g.kw), qy(oh % g.kh),
        ph(oh / g.kh) {}
  // Offset of the pixel's pooled value (times channels), or -1 off the windows.
  int64_t pooled() const { return ph < p.oh && pw < p.ow ? ((n * p.oh + ph) * p.ow + pw) * p.c : -1; }
  int32_t tap() const { return static_cast<int32_t>(qy * p.kw + qx); }
  void next() {
    if (++qx == p.kw) qx = 0, ++pw;
    if (++ow == p.w) {
      ow = qx = pw = 0;
      if (++qy == p.kh) qy = 0, ++ph;
      if (++oh == p.h) oh = qy = ph = 0, ++n;
    }
  }
};

// Channels [c0, c0 + NV*W) of route_tiled: the rows in order, NV vectors
// of a row side by side (whole cache lines of dz written at once, and NV
// sums whose additions do not wait on each other; each channel's sum is
// still its rows in order). The pixels one window has in one conv row hold
// dy in one of them at most, zeros in the rest, so their float sum is that
// value exactly and goes into the double sums once (a sum that starts at
// +0.0 is never -0.0, so adding a zero of either sign leaves it as it is):
// half the conversions for 2x2. Without Sums only dz is written.
template <int W, int NV, bool Sums>
__attribute__((always_inline)) inline void route_tiled_group(const PoolGeometry& p, const float* dy,
                                                              const uint8_t* argmax, int64_t r0, int64_t r1,
                                                              float* dz, double* acc, int64_t c0) {
  using F = typename simd::Vec<W>::f;
  using I = typename simd::Vec<W>::i;
  simd::DoubleSum<W> s[NV];
  F window[NV] = {};
  TiledWalk at(p, r0);
  for (int64_t r = r0; r < r1; ++r, at.next()) {
    const int64_t i = at.pooled();
    const int32_t tap = at.tap();
    float* out = dz != nullptr ? dz + (r - r0) * p.c + c0 : nullptr;
    for (int j = 0; j < NV; ++j) {
      F v{};
      if (i >= 0) {
        const int64_t at_c = i + c0 + j * W;
        v = simd::widen_bytes<I>(argmax + at_c) == tap ? simd::load<F>(dy + at_c) : F{};
      }
      if (out != nullptr) simd::store<F>(out + j * W, v);
      if constexpr (Sums) window[j] += v;
    }
    if constexpr (Sums)
      if (at.qx + 1 == p.kw || at.ow + 1 == p.w || r + 1 == r1)
        for (int j = 0; j < NV; ++j) s[j].add(window[j]), window[j] = F{};
  }
  if constexpr (Sums)
    for (int j = 0; j < NV; ++j) s[j].store(acc + c0 + j * W);
}

// route_tiled_group for 2x2 windows, a conv row at a time: a window's two
// pixels in the row share one load of its argmax and dy, and each window's
// float sum starts afresh instead of being carried from pixel to pixel. The
// same values, stores and sums in the same order: the same bits.
template <int W, int NV, bool Sums>
__attribute__((always_inline)) inline void route_2x2_group(const PoolGeometry& p, const float* dy,
                                                            const uint8_t* argmax, int64_t r0, int64_t r1, float* dz,
                                                            double* acc, int64_t c0) {
  using F = typename simd::Vec<W>::f;
  using I = typename simd::Vec<W>::i;
  simd::DoubleSum<W> s[NV];
  for (int64_t r = r0; r < r1;) {
    // The pixels [ow0, ow1) of conv row oh of image n.
    const int64_t ow0 = r % p.w, oh = r / p.w % p.h, n = r / (p.w * p.h);
    const int64_t ow1 = std::min(p.w, ow0 + (r1 - r));
    const int64_t ph = oh / 2;
    const int32_t top = static_cast<int32_t>(oh % 2 * 2);  // the tap of pixel qx = 0 of a window in this row
    const int64_t pooled_row = ph < p.oh ? (n * p.oh + ph) * p.ow * p.c + c0 : -1;
    float* out = dz != nullptr ? dz + (r - r0) * p.c + c0 : nullptr;  // pixel ow0's
    // count pixels (1 or 2) of window pw from its pixel qx, at out's pixel o; then the window's sum.
    auto window = [&](int64_t pw, int64_t o, int qx, int count) __attribute__((always_inline)) {
      F v[2][NV] = {};
      if (pooled_row >= 0 && pw < p.ow)
        for (int j = 0; j < NV; ++j) {
          const int64_t at_c = pooled_row + pw * p.c + j * W;
          const I a = simd::widen_bytes<I>(argmax + at_c);
          const F y = simd::load<F>(dy + at_c);
          for (int q = 0; q < count; ++q) v[q][j] = a == top + qx + q ? y : F{};
        }
      if (out != nullptr)
        for (int q = 0; q < count; ++q)
          for (int j = 0; j < NV; ++j) simd::store<F>(out + (o + q) * p.c + j * W, v[q][j]);
      if constexpr (Sums)
        for (int j = 0; j < NV; ++j) {
          F sum{};
          for (int q = 0; q < count; ++q) sum += v[q][j];
          s[j].add(sum);
        }
    };
    int64_t ow = ow0;
    if (ow % 2 == 1) window(ow / 2, ow - ow0, 1, 1), ++ow;  // a window begun in the rows before r0
    for (; ow + 2 <= ow1; ow += 2) window(ow / 2, ow - ow0, 0, 2);
    if (ow < ow1) window(ow / 2, ow - ow0, 0, 1);  // ends at r1 or at the row's ragged edge
    r += ow1 - ow0;
  }
  if constexpr (Sums)
    for (int j = 0; j < NV; ++j) s[j].store(acc + c0 + j * W);
}

template <int W, bool Sums>
__attribute__((always_inline)) inline void route_tiled_channels(const PoolGeometry& p, const float* dy,
                                                                 const uint8_t* argmax, int64_t r0, int64_t r1,
                                                                 float* dz, double* acc) {
  const int64_t ch = p.c, vec_end = ch / W * W;
  auto group = [&]<int NV>(int64_t c0) __attribute__((always_inline)) {
    if (p.kh == 2 && p.kw == 2) return route_2x2_group<W, NV, Sums>(p, dy, argmax, r0, r1, dz, acc, c0);
    route_tiled_group<W, NV, Sums>(p, dy, argmax, r0, r1, dz, acc, c0);
  };
  int64_t c0 = 0;
  for (; c0 + 4 * W <= vec_end; c0 += 4 * W) group.template operator()<4>(c0);
  if (c0 + 2 * W <= vec_end) group.template operator()<2>(c0), c0 += 2 * W;
  if (c0 + W <= vec_end) group.template operator()<1>(c0), c0 += W;
  for (int64_t c = vec_end; c < ch; ++c) {
    double s1 = 0.0;
    TiledWalk at(p, r0);
    for (int64_t r = r0; r < r1; ++r, at.next()) {
      const int64_t i = at.pooled() + c;
      const float v = i >= c && argmax[i] == at.tap() ? dy[i] : 0.0f;
      if (dz != nullptr) dz[(r - r0) * ch + c] = v;
      s1 += v;
    }
    if constexpr (Sums) acc[c] = s1;
  }
}

// dz (as route_rows: dz[0] is row r0's, or none) and, where acc is given,
// the column sums; without them a pass only routes dy (the filter
// gradient's rows, filled as it takes them).
template <int W>
__attribute__((always_inline)) inline void route_tiled_body(const ConvPoolGeom& cp, const float* dy,
                                                             const uint8_t* argmax, int64_t r0, int64_t r1, float* dz,
                                                             double* acc) {
  if (acc != nullptr) return route_tiled_channels<W, true>(cp.p, dy, argmax, r0, r1, dz, acc);
  route_tiled_channels<W, false>(cp.p, dy, argmax, r0, r1, dz, acc);
}

AXON_CPU_DISPATCH(route_tiled,
                  (const ConvPoolGeom& cp, const float* dy, const uint8_t* argmax, int64_t r0, int64_t r1, float* dz,
                   double* acc),
                  (cp, dy, argmax, r0, r1, dz, acc))

AXON_CPU_DISPATCH(route_rows,
                  (const ConvPoolGeom& cp, const float* dy, const uint8_t* argmax, int64_t r0, int64_t r1, float* dz,
                   double* acc),
                  (cp, dy, argmax, r0, r1, dz, acc))

// An argmax that is no tap of its window (or a tap in the pool's padding)
// can only come from a caller's bug and would silently drop gradient: an
// error. One vectorised pass over the bytes; the window-by-window check only
// where windows are clipped by padding.
void check_argmax(const KernelCall& c, const ConvPoolGeom& cp, const uint8_t* a, int64_t count) {
  const PoolGeometry& p = cp.p;
  const auto taps = static_cast<uint8_t>(p.kh * p.kw), span = static_cast<uint8_t>(AXON_ARGMAX_NONE - taps);
  uint8_t bad = 0;
  for (int64_t i = 0; i < count; ++i) bad |= static_cast<uint8_t>(static_cast<uint8_t>(a[i] - taps) < span);
  const bool clipped = p.pad_h > 0 || p.pad_w > 0 || (p.oh - 1) * p.sh + p.kh > p.h || (p.ow - 1) * p.sw + p.kw > p.w;
  if (bad == 0 && !clipped) return;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t pw = i / p.c % p.ow, ph = i / (p.c * p.ow) % p.oh;
    const int64_t ih = ph * p.sh - p.pad_h + a[i] / p.kw, iw = pw * p.sw - p.pad_w + a[i] % p.kw;
    AXON_CHECK(a[i] == AXON_ARGMAX_NONE || (a[i] < taps && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w),
               "%s: argmax[%lld] = %d is not a tap of its %lldx%lld pool window inside the %lldx%lld input", c.op(),
               static_cast<long long>(i), static_cast<int>(a[i]), static_cast<long long>(p.kh),
               static_cast<long long>(p.kw), static_cast<long long>(p.h), static_cast<long long>(p.w));
  }
}

void fused_conv2d_max_pool_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), dy = c.input(2), am = c.input(3);
  TensorRef df = c.output(0), db = c.output(1);
  const ConvPoolGeom cp = geometry(c, x, f);
  const ConvGeometry& g = cp.g;
  const PoolGeometry& p = cp.p;
  const bool want_dx = c.num_outputs() == 3;
  check_argmax(c, cp, am.data<uint8_t>(), am.numel());
  const uint8_t* ap = am.data<uint8_t>();

  const int64_t ch = g.oc, rows = g.rows();
  const bool tiles = p.sh == p.kh && p.sw == p.kw && p.pad_h == 0 && p.pad_w == 0;
  // Winograd's 2x2 output tiles are a 2x2 pooling's windows: its gradients
  // take the pooled dy and argmax tile by tile, and dz is never written
  // (only the bias gradient's pass over it, storing nothing).
  const bool pooled = tiles && p.kh == 2 && p.kw == 2 && winograd_takes_pooled_gradient(g, want_dx);
  // Without dx (the first layer), the filter gradient routes dz's rows as it
  // reads them (conv.hpp's FillRows): dz is not written either.
  const bool routed = tiles && !pooled && !want_dx;
  float* dz = pooled || routed ? nullptr : d.intermediate(static_cast<size_t>(rows * ch));
  if (ch > 0) {
    const int64_t rows_per_chunk = bias_grad_rows_per_chunk(ch), chunks = chunk_count(rows, rows_per_chunk);
    double* acc = d.partials_f64(static_cast<size_t>(chunks * ch));
    d.pool().for_ranges(rows, rows_per_chunk, rows * ch >= kSerialElements, [&](int, int64_t b, int64_t e) {
      double* a = acc + (b / rows_per_chunk) * ch;
      float* z = dz != nullptr ? dz + b * ch : nullptr;
      if (tiles)
        route_tiled(cp, dy.data<float>(), ap, b, e, z, a);
      else
        route_rows(cp, dy.data<float>(), ap, b, e, z, a);
    });
    float* bias_out = db.data<float>();
    for (int64_t i = 0; i < ch; ++i) {
      double s = 0.0;
      for (int64_t t = 0; t < chunks; ++t) s += acc[t * ch + i];
      bias_out[i] = static_cast<float>(s);
    }
  }
  if (pooled) {
    const PooledGradient pg{dy.data<float>(), ap, p.oh, p.ow};
    winograd_backprop_filter(d, g, x.data<float>(), pg, df.data<float>());
    if (want_dx) winograd_backprop_input(d, g, pg, f.data<float>(), c.output(2).data<float>());
    return;
  }
  // Both handle empty shapes (zeros where a sum has no terms).
  if (routed) {
    const float* dyp = dy.data<float>();
    const FillRows fill = [&](int64_t b, int64_t e, float* z) { route_tiled(cp, dyp, ap, b, e, z, nullptr); };
    return conv2d_backprop_filter_into(d, g, x.data<float>(), fill, df.data<float>());
  }
  conv2d_backprop_filter_into(d, g, x.data<float>(), dz, df.data<float>());
  if (want_dx) conv2d_backprop_input_into(d, g, dz, f.data<float>(), c.output(2).data<float>());
}

}  // namespace

void add_conv_pool_kernels(sdk::KernelTable& t) {
  add<OpId::FusedConv2DMaxPool, fused_conv2d_max_pool>(t);
  add<OpId::FusedConv2DMaxPoolGrad, fused_conv2d_max_pool_grad>(t);
}

}  // namespace axon::cpu
