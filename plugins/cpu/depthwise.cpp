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
// the taps (kh, kw) whose output (oh, ow) reads it are listed first (at most
// KH * KW), then t[j] = sum over them, in row-major tap order, of
// dy[oh, ow, j] * f[kh, kw, j] in a register per vector of channels, and
// dx[iw, c] = sum over m of t[c * M + m] (t itself when M = 1).
template <int W>
__attribute__((always_inline)) inline void depthwise_input_row_body(const ConvGeometry& g, const float* dy_image,
                                                                     const float* f, int64_t ih, float* t,
                                                                     int64_t* taps, float* dx) {
  using F = typename simd::Vec<W>::f;
  const int64_t cm = g.c * g.oc, vec_end = cm / W * W;
  // The output index o with o * s == p, or -1 (no division for stride 1).
  auto output_of = [](int64_t p, int64_t s, int64_t out) -> int64_t {
    if (p < 0) return -1;
    const int64_t o = s == 1 ? p : p % s != 0 ? -1 : p / s;
    return o < out ? o : -1;
  };
  int64_t rows = 0;  // the taps kh whose output row reads row ih: taps[2 KH KW + 2 i] = kh, then oh
  int64_t* row_taps = taps + 2 * g.kh * g.kw;
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t oh = output_of(ih + g.pad_h - kh * g.dh, g.sh, g.oh);
    if (oh < 0) continue;
    row_taps[2 * rows] = kh;
    row_taps[2 * rows + 1] = oh;
    ++rows;
  }
  for (int64_t iw = 0; iw < g.w; ++iw) {
    int64_t count = 0;  // taps[2 i]: dy offset, taps[2 i + 1]: filter offset
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t kh = row_taps[2 * r], oh = row_taps[2 * r + 1];
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const int64_t ow = output_of(iw + g.pad_w - kw * g.dw, g.sw, g.ow);
        if (ow < 0) continue;
        taps[2 * count] = (oh * g.ow + ow) * cm;
        taps[2 * count + 1] = (kh * g.kw + kw) * cm;
        ++count;
      }
    }
    float* out = g.oc == 1 ? dx + iw * g.c : t;
    for (int64_t j = 0; j < vec_end; j += W) {
      F acc{};
      for (int64_t i = 0; i < count; ++i)
        acc += simd::load<F>(dy_image + taps[2 * i] + j) * simd::load<F>(f + taps[2 * i + 1] + j);
      simd::store<F>(out + j, acc);
    }
    for (int64_t j = vec_end; j < cm; ++j) {
      float acc = 0.0f;
      for (int64_t i = 0; i < count; ++i) acc += dy_image[taps[2 * i] + j] * f[taps[2 * i + 1] + j];
      out[j] = acc;
    }
    if (g.oc == 1) continue;
    for (int64_t ci = 0; ci < g.c; ++ci) {
      float s = 0.0f;
      for (int64_t m = 0; m < g.oc; ++m) s += t[ci * g.oc + m];
      dx[iw * g.c + ci] = s;
    }
  }
}

AXON_CPU_DISPATCH(depthwise_input_row,
                  (const ConvGeometry& g, const float* dy_image, const float* f, int64_t ih, float* t, int64_t* taps,
                   float* dx),
                  (g, dy_image, f, ih, t, taps, dx))

void depthwise_conv2d_backprop_input(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), f = c.input(1), dx = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c());
  const float* dyp = dy.data<float>();
  const float* fp = f.data<float>();
  float* dxp = dx.data<float>();
  const int64_t cm = g.c * g.oc;
  const int64_t rows = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(1, g.w * cm * g.kh * g.kw));
  d.pool().for_ranges(g.n * g.h, rows, dy.numel() * g.kh * g.kw >= kSerialFlops, [&](int t, int64_t b, int64_t e) {
    // Per thread: t (cm floats), then the tap lists (2 KH KW + 2 KH int64).
    const int64_t t_floats = (std::max<int64_t>(cm, 1) + 15) / 16 * 16;
    float* acc = d.scratch(t, static_cast<size_t>(t_floats + 4 * g.kh * g.kw + 4 * g.kh));
    int64_t* taps = reinterpret_cast<int64_t*>(acc + t_floats);
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / g.h, ih = r % g.h;
      depthwise_input_row(g, dyp + n * g.oh * g.ow * cm, fp, ih, acc, taps, dxp + r * g.w * g.c);
    }
  });
}

// The filter gradient's products of output row (n, oh), added to
// part[kh, kw, j] (float): per tap and vector of channels, the sum over the
// row's pixels ow in a register, then added to part.
template <int W>
__attribute__((always_inline)) inline void depthwise_filter_row_body(const ConvGeometry& g, const float* const* rows,
                                                                      const TapRange& kr, const float* dy,
                                                                      float* part) {
  using F = typename simd::Vec<W>::f;
  const int64_t cm = g.c * g.oc, vec_end = cm / W * W;
  for (int64_t kw = 0; kw < g.kw; ++kw) {
    // Outputs ow whose tap kw lands inside the row: ow * sw - pad + kw * dw in [0, w).
    const int64_t first = g.pad_w - kw * g.dw;
    const int64_t ow0 = first <= 0 ? 0 : (first + g.sw - 1) / g.sw;
    const int64_t last = g.w - 1 + g.pad_w - kw * g.dw;
    const int64_t ow1 = last < 0 ? 0 : std::min(g.ow, last / g.sw + 1);
    if (ow1 <= ow0) continue;
    const int64_t x0 = kw * g.dw - g.pad_w;  // input column of output 0's tap kw
    for (int64_t kh = kr.k0; kh < kr.k1; ++kh) {
      const float* xr = rows[kh];
      float* p = part + (kh * g.kw + kw) * cm;
      for (int64_t j = 0; j < vec_end; j += W) {
        F acc{};
        for (int64_t ow = ow0; ow < ow1; ++ow)
          acc += simd::load<F>(xr + (ow * g.sw + x0) * cm + j) * simd::load<F>(dy + ow * cm + j);
        simd::store<F>(p + j, simd::load<F>(p + j) + acc);
      }
      for (int64_t j = vec_end; j < cm; ++j) {
        float acc = 0.0f;
        for (int64_t ow = ow0; ow < ow1; ++ow) acc += xr[(ow * g.sw + x0) * cm + j] * dy[ow * cm + j];
        p[j] += acc;
      }
    }
  }
}

AXON_CPU_DISPATCH(depthwise_filter_row,
                  (const ConvGeometry& g, const float* const* rows, const TapRange& kr, const float* dy, float* part),
                  (g, rows, kr, dy, part))

// Output rows per chunk of the filter gradient: about 256 output pixels, so
// each chunk's float sums stay short (a row's sum, then the chunk's rows);
// the chunks' sums are added in double, in chunk order.
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
