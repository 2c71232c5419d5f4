// Convolutions into at most 4 channels at stride 1, output pixels in the
// vector lanes. The register-blocked kernels (small_gemm.hpp) put output
// channels in the lanes, so a 5x5 filter into 4 channels fills half an AVX2
// vector (a quarter of AVX-512's).
// Here each image is first copied into zero-padded planes, one per input
// channel ([C][rows][columns], in the thread's scratch, a few KiB), so that
// 2W consecutive output pixels of a row read 2W consecutive floats of a
// plane for every filter tap; each tap's weights are broadcast once for
// those 2W pixels.
//
// Every output value is its products summed by fused multiply-adds in the
// filter's (kh, kw, ci) order from zero, then the bias added and relu: the
// gathered kernels' exact sequence, so the results are bit-identical to
// theirs (tests/kernels' fused conv+pool cases with 3 and 4 channels compare
// _FusedConv2D, here, with the fused op's gathered rows bit for bit) and
// independent of the thread count.
#include "conv.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstring>

namespace axon::cpu {
namespace {

// At most this many output channels: from 8 on the channel-lane kernels
// fill an AVX2 vector and win (measured: a 3x3 convolution of 8 channels
// into 8 at batch 64, 0.75 ms there against 0.99 ms here; 5x5 of 4 into 4,
// 0.92 ms there against 0.68 ms here).
constexpr int64_t kMaxPlanarChannels = 4;
// Largest planes (floats) one image may take in a thread's scratch.
constexpr int64_t kMaxPlaneFloats = int64_t{1} << 20;

// The planes' columns are a multiple of two vectors of W (the widest block).
template <int W>
constexpr int64_t kBlock = 2 * W;

struct Planes {
  int64_t rows, cols;  // of each plane: padded input rows and columns
};

Planes planes_of(const ConvGeometry& g, int64_t block) {
  const int64_t blocks = (g.ow + block - 1) / block;
  return {g.oh + (g.kh - 1) * g.dh, blocks * block + (g.kw - 1) * g.dw};
}

// planes[ci][pad_h + ih][pad_w + iw] = image[ih][iw][ci], zeros elsewhere.
void fill_planes(const ConvGeometry& g, const Planes& s, const float* image, float* planes) {
  std::memset(planes, 0, sizeof(float) * static_cast<size_t>(g.c * s.rows * s.cols));
  const int64_t h = std::min(g.h, s.rows - g.pad_h), w = std::min(g.w, s.cols - g.pad_w);
  for (int64_t ih = 0; ih < h; ++ih)
    for (int64_t iw = 0; iw < w; ++iw) {
      const float* px = image + (ih * g.w + iw) * g.c;
      float* dst = planes + (ih + g.pad_h) * s.cols + iw + g.pad_w;
      for (int64_t ci = 0; ci < g.c; ++ci) dst[ci * s.rows * s.cols] = px[ci];
    }
}

// Output row oh, pixels [ow0, ow0 + PV*W), channels [o0, o0 + OB) of one
// image: the sums into out[OB][PV*W]. PV*OB accumulators (8: the FMA pipes'
// depth), each tap's PV vectors of the plane loaded once for OB channels.
template <int W, int PV, int OB>
__attribute__((always_inline)) inline void block_sums(const ConvGeometry& g, const Planes& s, const float* planes,
                                                      const float* w, int64_t oh, int64_t ow0, int64_t o0,
                                                      float* out) {
  using F = typename simd::Vec<W>::f;
  F acc[OB][PV] = {};
  const int64_t plane = s.rows * s.cols;
  for (int64_t kh = 0; kh < g.kh; ++kh)
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const float* tap = planes + (oh + kh * g.dh) * s.cols + ow0 + kw * g.dw;
      const float* wt = w + (kh * g.kw + kw) * g.c * g.oc + o0;
      for (int64_t ci = 0; ci < g.c; ++ci, tap += plane, wt += g.oc) {
        F x[PV];
        for (int v = 0; v < PV; ++v) x[v] = simd::load<F>(tap + v * W);
        for (int o = 0; o < OB; ++o) {
          const F wv = simd::broadcast<F>(wt + o);
          for (int v = 0; v < PV; ++v) acc[o][v] += x[v] * wv;
        }
      }
    }
  for (int o = 0; o < OB; ++o)
    for (int v = 0; v < PV; ++v) simd::store<F>(out + (o * PV + v) * W, acc[o][v]);
}

// Rows of one image: y[oh][ow][oc] from its planes, PV*W pixels at a time
// (PV = 2: eight accumulators for four channels).
template <int W, int PV, int OB>
__attribute__((always_inline)) inline void image_rows(const ConvGeometry& g, const float* planes, const float* w,
                                                      float* y, const Epilogue& ep) {
  constexpr int64_t B = PV * W;
  const Planes s = planes_of(g, kBlock<W>);
  alignas(64) float sums[OB * B];
  for (int64_t oh = 0; oh < g.oh; ++oh)
    for (int64_t ow0 = 0; ow0 < g.ow; ow0 += B) {
      block_sums<W, PV, OB>(g, s, planes, w, oh, ow0, 0, sums);
      const int64_t pixels = std::min(B, g.ow - ow0);
      float* out = y + (oh * g.ow + ow0) * OB;
      for (int64_t l = 0; l < pixels; ++l)
        for (int o = 0; o < OB; ++o) {
          float v = sums[o * B + l];
          if (ep.bias != nullptr) v += ep.bias[o];
          if (ep.relu) v = v > 0.0f ? v : 0.0f;  // NaN -> 0, as Relu
          out[l * OB + o] = v;
        }
    }
}

template <int W>
__attribute__((always_inline)) inline void planar_image_body(const ConvGeometry& g, const float* planes,
                                                              const float* w, float* y, const Epilogue& ep) {
  switch (g.oc) {
    case 1: return image_rows<W, 2, 1>(g, planes, w, y, ep);
    case 2: return image_rows<W, 2, 2>(g, planes, w, y, ep);
    case 3: return image_rows<W, 2, 3>(g, planes, w, y, ep);
    default: return image_rows<W, 2, 4>(g, planes, w, y, ep);
  }
}

AXON_CPU_DISPATCH(planar_image,
                  (const ConvGeometry& g, const float* planes, const float* w, float* y, const Epilogue& ep),
                  (g, planes, w, y, ep))

int64_t block_width() {
  switch (simd::isa()) {
    case simd::Isa::avx512: return kBlock<16>;
    case simd::Isa::avx2: return kBlock<8>;
    default: return kBlock<4>;
  }
}

}  // namespace

bool planar_conv_applies(const ConvGeometry& g) {
  if (simd::isa() == simd::Isa::base) return false;  // no FMA: the gathered kernels' rounding differs
  if (g.sh != 1 || g.sw != 1 || g.oc > kMaxPlanarChannels || g.oc == 0 || g.c == 0) return false;
  if (g.kh == 1 && g.kw == 1) return false;  // pointwise: rows of x are already the product's rows
  const Planes s = planes_of(g, block_width());
  return g.c * s.rows * s.cols <= kMaxPlaneFloats;
}

void planar_conv2d(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y, const Epilogue& ep,
                   bool parallel) {
  const Planes s = planes_of(g, block_width());
  const int64_t image_in = g.h * g.w * g.c, image_out = g.oh * g.ow * g.oc;
  d.pool().for_ranges(g.n, 1, parallel, [&](int t, int64_t n0, int64_t n1) {
    float* planes = d.scratch(t, static_cast<size_t>(g.c * s.rows * s.cols));
    for (int64_t n = n0; n < n1; ++n) {
      fill_planes(g, s, x + n * image_in, planes);
      planar_image(g, planes, w, y + n * image_out, ep);
    }
  });
}

}  // namespace axon::cpu
