// DepthwiseConv2dNative and its two gradients over NHWC, filter [KH, KW, C, M].
// The filter is already [KH, KW, C * M]: output channel j = c * M + m reads
// input channel j / M. Every loop runs over the C * M output channels in the
// vector lanes; with M > 1 the input rows a call reads are first widened to
// C * M channels (each value repeated M times) in per-thread scratch, so the
// same loops serve every multiplier. Windows are clipped to the image once
// per output pixel (TensorFlow's geometry, op_geometry.hpp).
//
// Rounding: each lane sums its taps in row-major order, whatever the thread
// count; the AVX2 and AVX-512 copies fuse each multiply-add (FMA) and agree
// bit for bit, the baseline copy rounds the product first (README.md).
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <cstring>

namespace axon::cpu {
namespace {

constexpr int64_t kSerialFlops = 1 << 16;

// The taps [k0, k1) of a window axis that land inside the input, for output
// position o: input index o * s - pad + k * dil in [0, in).
struct TapRange {
  int64_t k0, k1;
};
TapRange tap_range(int64_t o, int64_t s, int64_t pad, int64_t dil, int64_t k, int64_t in) {
  const int64_t start = o * s - pad;
  int64_t k0 = 0, k1 = k;
  if (start < 0) k0 = (-start + dil - 1) / dil;
  if (start + (k - 1) * dil >= in) k1 = start >= in ? 0 : (in - 1 - start) / dil + 1;
  return {k0, k1 > k0 ? k1 : k0};
}

// Input row (n, ih) with each channel repeated m times: [w, c * m] at out.
void widen_row(const float* x, int64_t w, int64_t c, int64_t m, float* out) {
  for (int64_t i = 0; i < w * c; ++i)
    for (int64_t r = 0; r < m; ++r) out[i * m + r] = x[i];
}

// The input rows output row (n, oh) reads, widened when M > 1: rows[kh] for
// the taps kh in `kr` (others unset).
void input_rows(const ConvGeometry& g, const float* x, int64_t n, int64_t oh, const TapRange& kr, float* scratch,
                const float** rows) {
  for (int64_t kh = kr.k0; kh < kr.k1; ++kh) {
    const int64_t ih = oh * g.sh - g.pad_h + kh * g.dh;
    const float* row = x + (n * g.h + ih) * g.w * g.c;
    if (g.oc == 1) {
      rows[kh] = row;
    } else {
      float* wide = scratch + kh * g.w * g.c * g.oc;
      widen_row(row, g.w, g.c, g.oc, wide);
      rows[kh] = wide;
    }
  }
}

// One output row of the forward: y[ow, j] = sum over taps of rows[kh][iw, j] * f[kh, kw, j].
template <int W>
__attribute__((always_inline)) inline void depthwise_row_body(const ConvGeometry& g, const float* const* rows,
                                                               const TapRange& kr, const float* f, float* y) {
  using F = typename simd::Vec<W>::f;
  const int64_t cm = g.c * g.oc, vec_end = cm / W * W;
  for (int64_t ow = 0; ow < g.ow; ++ow) {
    const TapRange kc = tap_range(ow, g.sw, g.pad_w, g.dw, g.kw, g.w);
    const int64_t iw0 = ow * g.sw - g.pad_w;
    float* out = y + ow * cm;
    for (int64_t j = 0; j < vec_end; j += W) {
      F acc{};
      for (int64_t kh = kr.k0; kh < kr.k1; ++kh)
        for (int64_t kw = kc.k0; kw < kc.k1; ++kw)
          acc += simd::load<F>(rows[kh] + (iw0 + kw * g.dw) * cm + j) * simd::load<F>(f + (kh * g.kw + kw) * cm + j);
      simd::store<F>(out + j, acc);
    }
    for (int64_t j = vec_end; j < cm; ++j) {
      float acc = 0.0f;
      for (int64_t kh = kr.k0; kh < kr.k1; ++kh)
        for (int64_t kw = kc.k0; kw < kc.k1; ++kw)
          acc += rows[kh][(iw0 + kw * g.dw) * cm + j] * f[(kh * g.kw + kw) * cm + j];
      out[j] = acc;
    }
  }
}

AXON_CPU_DISPATCH(depthwise_row,
                  (const ConvGeometry& g, const float* const* rows, const TapRange& kr, const float* f, float* y),
                  (g, rows, kr, f, y))

// Output rows per chunk: about 2^14 multiply-adds.
int64_t rows_per_chunk(const ConvGeometry& g) {
  return std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, g.ow * g.c * g.oc * g.kh * g.kw));
}

// Scratch floats per thread for the widened rows (none when M = 1).
size_t widened_floats(const ConvGeometry& g) { return g.oc == 1 ? 1 : static_cast<size_t>(g.kh * g.w * g.c * g.oc); }

void depthwise_conv2d(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), y = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), f.c());
  AXON_CHECK(g.kh <= 64, "%s: filter %s: the CPU plugin takes filters of at most 64 rows", c.op(),
             f.shape_string().c_str());
  const float* xp = x.data<float>();
  const float* fp = f.data<float>();
  float* yp = y.data<float>();
  const int64_t cm = g.c * g.oc;
  d.pool().for_ranges(g.n * g.oh, rows_per_chunk(g), y.numel() * g.kh * g.kw >= kSerialFlops,
                      [&](int t, int64_t b, int64_t e) {
                        float* scratch = d.scratch(t, widened_floats(g));
                        const float* rows[64];
                        for (int64_t r = b; r < e; ++r) {
                          const int64_t n = r / g.oh, oh = r % g.oh;
                          const TapRange kr = tap_range(oh, g.sh, g.pad_h, g.dh, g.kh, g.h);
                          input_rows(g, xp, n, oh, kr, scratch, rows);
                          depthwise_row(g, rows, kr, fp, yp + r * g.ow * cm);
                        }
                      });
}

// One input row (n, ih) of the input gradient, gathered: for each pixel iw,
// t[j] = sum over the taps (kh, kw) whose output (oh, ow) reads it of
// dy[oh, ow, j] * f[kh, kw, j], then dx[iw, c] = sum over m of t[c * M + m].
template <int W>
__attribute__((always_inline)) inline void depthwise_input_row_body(const ConvGeometry& g, const float* dy_image,
                                                                     const float* f, int64_t ih, float* t, float* dx) {
  using F = typename simd::Vec<W>::f;
  const int64_t cm = g.c * g.oc, vec_end = cm / W * W;
  for (int64_t iw = 0; iw < g.w; ++iw) {
    for (int64_t j = 0; j < cm; ++j) t[j] = 0.0f;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ph = ih + g.pad_h - kh * g.dh;  // oh * sh
      if (ph < 0 || ph % g.sh != 0 || ph / g.sh >= g.oh) continue;
      const float* dy_row = dy_image + (ph / g.sh) * g.ow * cm;
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t pw = iw + g.pad_w - kw * g.dw;
        if (pw < 0 || pw % g.sw != 0 || pw / g.sw >= g.ow) continue;
        const float* dyp = dy_row + (pw / g.sw) * cm;
        const float* fp = f + (kh * g.kw + kw) * cm;
        for (int64_t j = 0; j < vec_end; j += W)
          simd::store<F>(t + j, simd::load<F>(t + j) + simd::load<F>(dyp + j) * simd::load<F>(fp + j));
        for (int64_t j = vec_end; j < cm; ++j) t[j] += dyp[j] * fp[j];
      }
    }
    float* out = dx + iw * g.c;
    if (g.oc == 1) {
      std::memcpy(out, t, sizeof(float) * static_cast<size_t>(g.c));
    } else {
      for (int64_t ci = 0; ci < g.c; ++ci) {
        float s = 0.0f;
        for (int64_t m = 0; m < g.oc; ++m) s += t[ci * g.oc + m];
        out[ci] = s;
      }
    }
  }
}

AXON_CPU_DISPATCH(depthwise_input_row,
                  (const ConvGeometry& g, const float* dy_image, const float* f, int64_t ih, float* t, float* dx),
                  (g, dy_image, f, ih, t, dx))

void depthwise_conv2d_backprop_input(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), f = c.input(1), dx = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c());
  const float* dyp = dy.data<float>();
  const float* fp = f.data<float>();
  float* dxp = dx.data<float>();
  const int64_t cm = g.c * g.oc;
  const int64_t rows = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, g.w * cm * g.kh * g.kw));
  d.pool().for_ranges(g.n * g.h, rows, dy.numel() * g.kh * g.kw >= kSerialFlops, [&](int t, int64_t b, int64_t e) {
    float* acc = d.scratch(t, static_cast<size_t>(std::max<int64_t>(cm, 1)));
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / g.h, ih = r % g.h;
      depthwise_input_row(g, dyp + n * g.oh * g.ow * cm, fp, ih, acc, dxp + r * g.w * g.c);
    }
  });
}

// The filter gradient's products of output row (n, oh), added to
// part[kh, kw, j] (float).
template <int W>
__attribute__((always_inline)) inline void depthwise_filter_row_body(const ConvGeometry& g, const float* const* rows,
                                                                      const TapRange& kr, const float* dy,
                                                                      float* part) {
  using F = typename simd::Vec<W>::f;
  const int64_t cm = g.c * g.oc, vec_end = cm / W * W;
  for (int64_t ow = 0; ow < g.ow; ++ow) {
    const TapRange kc = tap_range(ow, g.sw, g.pad_w, g.dw, g.kw, g.w);
    const int64_t iw0 = ow * g.sw - g.pad_w;
    const float* d = dy + ow * cm;
    for (int64_t kh = kr.k0; kh < kr.k1; ++kh)
      for (int64_t kw = kc.k0; kw < kc.k1; ++kw) {
        const float* xr = rows[kh] + (iw0 + kw * g.dw) * cm;
        float* p = part + (kh * g.kw + kw) * cm;
        for (int64_t j = 0; j < vec_end; j += W)
          simd::store<F>(p + j, simd::load<F>(p + j) + simd::load<F>(xr + j) * simd::load<F>(d + j));
        for (int64_t j = vec_end; j < cm; ++j) p[j] += xr[j] * d[j];
      }
  }
}

AXON_CPU_DISPATCH(depthwise_filter_row,
                  (const ConvGeometry& g, const float* const* rows, const TapRange& kr, const float* dy, float* part),
                  (g, rows, kr, dy, part))

// Output rows per chunk of the filter gradient: about 256 output pixels, so
// each chunk's float sums stay short; the chunks' sums are added in double,
// in chunk order.
int64_t filter_rows_per_chunk(const ConvGeometry& g) { return std::max<int64_t>(1, 256 / std::max<int64_t>(1, g.ow)); }

void depthwise_conv2d_backprop_filter(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), dy = c.input(1), df = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c());
  AXON_CHECK(g.kh <= 64, "%s: dfilter %s: the CPU plugin takes filters of at most 64 rows", c.op(),
             df.shape_string().c_str());
  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  float* out = df.data<float>();
  const int64_t cm = g.c * g.oc, fsize = g.kh * g.kw * cm;
  const int64_t per_chunk = filter_rows_per_chunk(g), chunks = chunk_count(g.n * g.oh, per_chunk);
  if (chunks == 0) {
    std::memset(out, 0, sizeof(float) * static_cast<size_t>(fsize));
    return;
  }
  float* parts = d.partials(static_cast<size_t>(chunks * fsize));
  const bool parallel = dy.numel() * g.kh * g.kw >= kSerialFlops;
  d.pool().for_ranges(g.n * g.oh, per_chunk, parallel, [&](int t, int64_t b, int64_t e) {
    float* part = parts + (b / per_chunk) * fsize;
    std::memset(part, 0, sizeof(float) * static_cast<size_t>(fsize));
    float* scratch = d.scratch(t, widened_floats(g));
    const float* rows[64];
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / g.oh, oh = r % g.oh;
      const TapRange kr = tap_range(oh, g.sh, g.pad_h, g.dh, g.kh, g.h);
      input_rows(g, xp, n, oh, kr, scratch, rows);
      depthwise_filter_row(g, rows, kr, dyp + r * g.ow * cm, part);
    }
  });
  for (int64_t i = 0; i < fsize; ++i) {
    double s = 0.0;
    for (int64_t k = 0; k < chunks; ++k) s += parts[k * fsize + i];
    out[i] = static_cast<float>(s);
  }
}

}  // namespace

void add_depthwise_kernels(sdk::KernelTable& t) {
  add<OpId::DepthwiseConv2dNative, depthwise_conv2d>(t);
  add<OpId::DepthwiseConv2dNativeBackpropInput, depthwise_conv2d_backprop_input>(t);
  add<OpId::DepthwiseConv2dNativeBackpropFilter, depthwise_conv2d_backprop_filter>(t);
}

}  // namespace axon::cpu
