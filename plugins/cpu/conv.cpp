// Convolutions as GEMMs over an NHWC im2col. With rows r = (n, oh, ow) and
// the HWIO filter read as a [K = KH*KW*C, OC] matrix:
//   forward          y[M, OC]  = col[M, K] * W[K, OC]
//   backprop filter  dW[K, OC] = col^T[K, M] * dy[M, OC]
//   backprop input   dcol[M,K] = dy[M, OC] * W^T, then scattered back (col2im)
// `col` never exists whole: each thread builds it one tile of rows at a time in
// its own scratch (sized to stay in L2) and feeds the tile straight to sgemm.
// Forward and backprop-filter skip even that where no tap of a tile touches
// padding: register-blocked kernels (small_gemm.hpp) read the rows straight
// from the image; backprop-input's product runs in the same kernels against
// W^T. (Without AVX2, large-K products go to OpenBLAS's sgemm instead.)
// Tiles are fixed by the shapes alone (see thread_pool.hpp), so results are
// bit-identical whatever the thread count.
// 3x3 stride-1 convolutions with enough channels run as Winograd F(4x2, 3x3)
// or F(2x2, 3x3) instead (winograd.hpp; use_winograd says where).
#include "blas.hpp"
#include "device.hpp"
#include "elementwise.hpp"
#include "kernels.hpp"
#include "simd.hpp"
#include "small_gemm.hpp"
#include "conv.hpp"
#include "winograd.hpp"

#include <cstring>

namespace axon::cpu {
namespace {

// Below this many multiply-adds (or elements) a kernel runs on the calling
// thread alone.
constexpr int64_t kSerialMacs = 1 << 18;
constexpr int64_t kSerialElements = 1 << 15;

bool pointwise(const ConvGeometry& g) { return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pad_h == 0 && g.pad_w == 0; }

// Visits every (row, kh) of rows [r0, r1): f(dst, xrow, iw0) with dst the
// offset of the kh segment (KW*C floats) inside the tile, xrow the offset in x
// of the input row the segment reads (-1 when it is padding) and iw0 the
// segment's first input column (may be negative).
template <class F>
void for_each_tap_row(const ConvGeometry& g, int64_t r0, int64_t r1, F&& f) {
  const int64_t k = g.k(), kwc = g.kw * g.c;
  int64_t ow = r0 % g.ow, oh = (r0 / g.ow) % g.oh, n = r0 / (g.ow * g.oh);
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t ih0 = oh * g.sh - g.pad_h, iw0 = ow * g.sw - g.pad_w;
    const int64_t image = n * g.h * g.w * g.c;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = ih0 + kh * g.dh;
      const int64_t dst = (r - r0) * k + kh * kwc;
      f(dst, (ih >= 0 && ih < g.h) ? image + ih * g.w * g.c : int64_t{-1}, iw0);
    }
    if (++ow == g.ow) {
      ow = 0;
      if (++oh == g.oh) oh = 0, ++n;
    }
  }
}

// Copies/clears a few floats. Short segments (KW*C = 3 for a 3x3 filter on a
// grey image) are the common case, where a libc call per segment costs more
// than the copy; the attribute keeps GCC from turning the loops back into calls.
__attribute__((optimize("no-tree-loop-distribute-patterns"))) inline void copy_floats(float* d, const float* s,
                                                                                     int64_t n) {
  if (n >= 64) {
    std::memcpy(d, s, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] = s[i];
}
__attribute__((optimize("no-tree-loop-distribute-patterns"))) inline void zero_floats(float* d, int64_t n) {
  if (n >= 64) {
    std::memset(d, 0, sizeof(float) * static_cast<size_t>(n));
    return;
  }
  for (int64_t i = 0; i < n; ++i) d[i] = 0.0f;
}

// col[r - r0, :] = the input pixels tap r reads (zeros for padding).
void im2col(const ConvGeometry& g, const float* x, int64_t r0, int64_t r1, float* col) {
  const int64_t kwc = g.kw * g.c;
  for_each_tap_row(g, r0, r1, [&](int64_t dst, int64_t xrow, int64_t iw0) {
    float* d = col + dst;
    if (xrow < 0) return zero_floats(d, kwc);
    const float* s = x + xrow;
    if (g.dw == 1 && iw0 >= 0 && iw0 + g.kw <= g.w) return copy_floats(d, s + iw0 * g.c, kwc);  // contiguous in x
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      const int64_t iw = iw0 + kw * g.dw;
      if (iw >= 0 && iw < g.w)
        copy_floats(d + kw * g.c, s + iw * g.c, g.c);
      else
        zero_floats(d + kw * g.c, g.c);
    }
  });
}

// A strided 1x1 convolution without padding (a ResNet's projection shortcut)
// reaches each dx pixel through at most one tap, so one image's dx is written
// in one pass: its col row where a tap lands, zero elsewhere. (+ 0.0f: the
// sum col2im_add would form into a zeroed image, -0 included.)
bool strided_pointwise(const ConvGeometry& g) {
  return g.kh == 1 && g.kw == 1 && (g.sh > 1 || g.sw > 1) && g.pad_h == 0 && g.pad_w == 0;
}
template <int W>
__attribute__((always_inline)) inline void col2im_strided_1x1_body(const ConvGeometry& g, const float* col, float* dx) {
  const int64_t c = g.c, row_floats = g.w * c;
  for (int64_t ih = 0; ih < g.h; ++ih) {
    float* __restrict d = dx + ih * row_floats;
    const int64_t oh = ih / g.sh;
    if (ih % g.sh != 0 || oh >= g.oh) {
      std::memset(d, 0, sizeof(float) * static_cast<size_t>(row_floats));
      continue;
    }
    for (int64_t iw = 0; iw < g.w; ++iw, d += c) {
      const int64_t ow = iw / g.sw;
      if (iw % g.sw != 0 || ow >= g.ow) {
        std::memset(d, 0, sizeof(float) * static_cast<size_t>(c));
        continue;
      }
      const float* __restrict s = col + (oh * g.ow + ow) * c;
      for (int64_t ci = 0; ci < c; ++ci) d[ci] = s[ci] + 0.0f;
    }
  }
}
AXON_CPU_DISPATCH(col2im_strided_1x1, (const ConvGeometry& g, const float* col, float* dx), (g, col, dx))

// dx += the same, touching only the pixels a tap lands on (a quarter of them
// at stride 2): where the gradient adds into a sum another layer began (a
// ResNet's projection shortcut, which the plan runs before its block's
// first convolution, so its backward after it), instead of writing the
// whole gradient to a temporary and adding that. AddN's values, except that
// a -0 no tap reaches stays -0.
template <int W>
__attribute__((always_inline)) inline void col2im_strided_1x1_add_body(const ConvGeometry& g, const float* col,
                                                                       float* dx) {
  const int64_t c = g.c;
  for (int64_t oh = 0; oh < g.oh; ++oh)
    for (int64_t ow = 0; ow < g.ow; ++ow) {
      float* __restrict d = dx + (oh * g.sh * g.w + ow * g.sw) * c;
      const float* __restrict s = col + (oh * g.ow + ow) * c;
      for (int64_t ci = 0; ci < c; ++ci) d[ci] += s[ci] + 0.0f;
    }
}
AXON_CPU_DISPATCH(col2im_strided_1x1_add, (const ConvGeometry& g, const float* col, float* dx), (g, col, dx))

// Small-K convolutions read their rows straight from the image: off[p] is
// tap p's offset from a row's first tap, and each row starts in the image or,
// where its taps reach into padding, in a copy of its pixels (row_starts).
// The register-blocked kernels stream a [K, 64] block of the filter from L2
// for every few rows: beyond this K it no longer fits and sgemm's blocking wins.
constexpr int64_t kMaxGatherK = 2048;

// The width of a padded copy of the input: its columns from -pad_w on, as
// far as any tap reaches (and at least the whole image).
int64_t padded_width(const ConvGeometry& g) {
  return std::max(g.pad_w + g.w, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1);
}
// Padded copies hold at most one image (the rows a tile needs of it); above
// this many floats the tiles that touch padding go through im2col instead.
constexpr int64_t kMaxPaddedImage = int64_t{1} << 22;
int64_t padded_image_floats(const ConvGeometry& g) {
  const int64_t hp = std::max(g.pad_h + g.h, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1);
  return hp * padded_width(g) * g.c;
}

// The floats a gathered row reads contiguously: a filter tap's C channels,
// or with undilated columns a whole filter row's KW*C (taps side by side in
// NHWC), so that few-channel filters (5x5 over 4 channels: runs of 20, not 4)
// take the kernels' pointer-per-row path. The products are summed in the
// same order either way.
int64_t gather_run(const ConvGeometry& g) { return g.dw == 1 ? g.kw * g.c : g.c; }

void fill_offsets(const ConvGeometry& g, int64_t width, int32_t* off) {
  int64_t p = 0;
  for (int64_t kh = 0; kh < g.kh; ++kh)
    for (int64_t kw = 0; kw < g.kw; ++kw)
      for (int64_t ci = 0; ci < g.c; ++ci) off[p++] = static_cast<int32_t>((kh * g.dh * width + kw * g.dw) * g.c + ci);
}

// No taps (use im2col) when an image is too large for 32-bit offsets, or for
// K >= kSmallK without AVX2/AVX-512: baseline SSE2 broadcast-FMA loops lose
// to OpenBLAS there (measured: 3x), while with AVX-512 the gathered kernels
// beat im2col + sgemm by 40-50% at the CNN's shapes.
ConvTaps tap_offsets(CpuDevice& d, const ConvGeometry& g) {
  if (g.h * g.w * g.c >= (int64_t{1} << 31)) return {};
  if (g.k() >= kSmallK && simd::isa() == simd::Isa::base) return {};
  if (g.k() > kMaxGatherK) return {};
  const bool padded = (g.pad_h_total > 0 || g.pad_w_total > 0) && padded_image_floats(g) <= kMaxPaddedImage;
  int32_t* off = d.taps(static_cast<size_t>((padded ? 2 : 1) * g.k()));
  fill_offsets(g, g.w, off);
  if (!padded) return {off, nullptr};
  fill_offsets(g, padded_width(g), off + g.k());
  return {off, off + g.k()};
}
// Output columns [first, end) whose taps all lie within the image's columns.
struct InsideColumns {
  int64_t first, end;
  explicit InsideColumns(const ConvGeometry& g) {
    first = std::min((g.pad_w + g.sw - 1) / g.sw, g.ow);  // (heavily dilated SAME filters pad past the output)
    const int64_t last = g.w - 1 - (g.kw - 1) * g.dw + g.pad_w;  // the last first-tap column inside, + pad_w
    end = std::clamp<int64_t>(last >= 0 ? last / g.sw + 1 : 0, first, g.ow);
  }
};

// Visits rows [r0, r1) a stretch of one output row at a time: f(r, ow0, ow1,
// n, ih0, rows_inside), rows_inside saying whether its taps' rows all lie in
// the image.
template <class F>
void for_row_stretches(const ConvGeometry& g, int64_t r0, int64_t r1, F&& f) {
  for (int64_t r = r0; r < r1;) {
    const int64_t ow0 = r % g.ow, oh = r / g.ow % g.oh, n = r / (g.ow * g.oh);
    const int64_t ow1 = std::min(g.ow, ow0 + (r1 - r));
    const int64_t ih0 = oh * g.sh - g.pad_h;
    f(r, ow0, ow1, n, ih0, ih0 >= 0 && ih0 + (g.kh - 1) * g.dh < g.h);
    r += ow1 - ow0;
  }
}

// Rows of [r0, r1) whose taps reach into padding.
int64_t edge_rows(const ConvGeometry& g, int64_t r0, int64_t r1) {
  const InsideColumns in(g);
  int64_t edges = 0;
  for_row_stretches(g, r0, r1, [&](int64_t, int64_t ow0, int64_t ow1, int64_t, int64_t, bool rows_inside) {
    const int64_t inside = rows_inside ? std::max<int64_t>(0, std::min(ow1, in.end) - std::max(ow0, in.first)) : 0;
    edges += ow1 - ow0 - inside;
  });
  return edges;
}

// dx[pixels tap r reads] += col[r - r0, :]; the inverse of im2col, compiled
// per instruction set. A stretch of one output row at a time, filter row by
// filter row: within a stretch each dx pixel lies in one filter row's reach,
// so every pixel still gets its rows' values in row order (the same bits as
// row by row), and the columns whose taps all lie inside the image take a
// plain loop. (The ResNet's 28x28x16 stride-2 input gradient spent 17% of
// its time here row by row, 13% so: plugins/cpu/README.md.)
template <int W>
__attribute__((always_inline)) inline void col2im_add_body(const ConvGeometry& g, const float* col, int64_t r0, int64_t r1,
                                                            float* dx) {
  const int64_t k = g.k(), kwc = g.kw * g.c, pitch = g.w * g.c;
  const InsideColumns in(g);
  for_row_stretches(g, r0, r1, [&](int64_t r, int64_t ow0, int64_t ow1, int64_t n, int64_t ih0, bool) {
    const int64_t first = std::clamp(in.first, ow0, ow1), end = g.dw == 1 ? std::clamp(in.end, first, ow1) : first;
    for (int64_t kh = 0; kh < g.kh; ++kh) {
      const int64_t ih = ih0 + kh * g.dh;
      if (ih < 0 || ih >= g.h) continue;
      float* drow = dx + n * g.h * pitch + ih * pitch;
      const float* srow = col + (r - r0) * k + kh * kwc;
      auto edge = [&](int64_t ow) {  // tap by tap, skipping padding
        const float* __restrict s = srow + (ow - ow0) * k;
        for (int64_t kw = 0; kw < g.kw; ++kw) {
          const int64_t iw = ow * g.sw - g.pad_w + kw * g.dw;
          if (iw < 0 || iw >= g.w) continue;
          float* __restrict dd = drow + iw * g.c;
          for (int64_t ci = 0; ci < g.c; ++ci) dd[ci] += s[kw * g.c + ci];
        }
      };
      for (int64_t ow = ow0; ow < first; ++ow) edge(ow);
      for (int64_t ow = first; ow < end; ++ow) {  // the filter row's KW*C floats are contiguous in dx
        const float* __restrict s = srow + (ow - ow0) * k;
        float* __restrict dd = drow + (ow * g.sw - g.pad_w) * g.c;
        for (int64_t i = 0; i < kwc; ++i) dd[i] += s[i];
      }
      for (int64_t ow = end; ow < ow1; ++ow) edge(ow);
    }
  });
}

AXON_CPU_DISPATCH(col2im_add, (const ConvGeometry& g, const float* col, int64_t r0, int64_t r1, float* dx),
                  (g, col, r0, r1, dx))

// An edge row's copy (a slot): its taps' pixels, zeros for padding, laid out
// with the image's row pitch so that the same tap offsets reach them. Slots
// sit side by side in blocks as tall as the filter's reach; `per_block` of
// them fit across one pitch (0: the filter is wider than the image).
struct SlotLayout {
  int64_t span, per_block, block;  // floats of a slot's row; slots per block; floats per block
  explicit SlotLayout(const ConvGeometry& g) {
    span = ((g.kw - 1) * g.dw + 1) * g.c;
    per_block = span > 0 ? g.w * g.c / span : 0;
    block = ((g.kh - 1) * g.dh + 1) * g.w * g.c;
  }
  int64_t floats(int64_t slots) const { return per_block > 0 ? (slots + per_block - 1) / per_block * block : 0; }
  float* slot(float* area, int64_t i) const { return area + i / per_block * block + i % per_block * span; }
};

void fill_slot(const ConvGeometry& g, const float* x, int64_t n, int64_t ih0, int64_t iw0, float* slot) {
  // Taps [kw0, kw1) lie inside the image's columns.
  const int64_t kw0 = std::clamp<int64_t>((-iw0 + g.dw - 1) / g.dw, 0, g.kw);
  const int64_t kw1 = std::clamp<int64_t>(g.w - iw0 > 0 ? (g.w - iw0 + g.dw - 1) / g.dw : 0, kw0, g.kw);
  for (int64_t kh = 0; kh < g.kh; ++kh) {
    const int64_t ih = ih0 + kh * g.dh;
    float* dst = slot + kh * g.dh * g.w * g.c;
    const bool row_inside = ih >= 0 && ih < g.h;
    for (int64_t kw = 0; kw < g.kw; ++kw) {
      float* d = dst + kw * g.dw * g.c;
      if (!row_inside || kw < kw0 || kw >= kw1) {
        zero_floats(d, g.c);
        continue;
      }
      const float* src = x + ((n * g.h + ih) * g.w + iw0 + kw * g.dw) * g.c;
      if (g.dw == 1) {  // the inside taps side by side, as in x
        copy_floats(d, src, (kw1 - kw) * g.c);
        kw = kw1 - 1;
      } else {
        copy_floats(d, src, g.c);
      }
    }
  }
}

// Where rows [r0, r1) start: in x where their taps all lie inside the image,
// else in a slot made in `slots` (nullptr: return false at the first such
// row). This runs for every tile of the gathered kernels.
bool row_starts(const ConvGeometry& g, const float* x, int64_t r0, int64_t r1, const float** row, float* slots) {
  const InsideColumns in(g);
  const SlotLayout lay(g);
  int64_t used = 0;
  bool ok = true;
  for_row_stretches(g, r0, r1, [&](int64_t r, int64_t ow0, int64_t ow1, int64_t n, int64_t ih0, bool rows_inside) {
    if (!ok) return;
    // Columns [a, b) inside, those either side in slots.
    const int64_t a = rows_inside ? std::clamp(in.first, ow0, ow1) : ow1;
    const int64_t b = rows_inside ? std::clamp(in.end, a, ow1) : ow1;
    if (slots == nullptr && (a != ow0 || b != ow1)) {
      ok = false;
      return;
    }
    const float** dst = row + (r - r0);  // dst[ow - ow0]: column ow's row start
    auto slot = [&](int64_t ow) {
      float* s = lay.slot(slots, used++);
      fill_slot(g, x, n, ih0, ow * g.sw - g.pad_w, s);
      dst[ow - ow0] = s;
    };
    for (int64_t ow = ow0; ow < a; ++ow) slot(ow);
    if (a < b) {
      const float* p = x + ((n * g.h + ih0) * g.w + a * g.sw - g.pad_w) * g.c;
      for (int64_t ow = a; ow < b; ++ow, p += g.sw * g.c) dst[ow - ow0] = p;
    }
    for (int64_t ow = b; ow < ow1; ++ow) slot(ow);
  });
  return ok;
}

// The floats of a padded copy of the input rows that `rows` consecutive
// output rows of one image read.
int64_t padded_floats(const ConvGeometry& g, int64_t rows) {
  const int64_t out_rows = std::min(g.oh, (rows + g.ow - 1) / g.ow + 1);
  const int64_t in_rows = (out_rows - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  return std::min(padded_image_floats(g), in_rows * padded_width(g) * g.c);
}

// The part of rows [r, e) in row r's image: rows [r, end), in output rows
// [oa, ob] of the image, which read padded input rows [ip0, ip1).
struct ImagePart {
  int64_t n, end, ip0, ip1;
  ImagePart(const ConvGeometry& g, int64_t r, int64_t e) {
    const int64_t per_image = g.oh * g.ow, first = r / per_image * per_image;
    n = r / per_image, end = std::min(e, first + per_image);
    const int64_t oa = (r - first) / g.ow, ob = (end - 1 - first) / g.ow;
    ip0 = oa * g.sh, ip1 = ob * g.sh + (g.kh - 1) * g.dh + 1;
  }
};

// Rows [b, e) image by image through a zero-padded copy of the input rows
// each image's part reads (built in `pad`): f(gather, first row - b, rows).
// The copy is a few rows of one image, so it is in L1/L2 when the kernel
// reads it, and the gathered kernels need no bounds tests.
template <class F>
void for_padded_parts(const ConvGeometry& g, const int32_t* off, const float* x, int64_t b, int64_t e, float* pad,
                      const float** row, F&& f) {
  const int64_t wp = padded_width(g), row_floats = wp * g.c;
  for (int64_t r = b; r < e;) {
    const ImagePart part(g, r, e);
    const int64_t re = part.end, ip0 = part.ip0, ip1 = part.ip1;
    const float* image = x + part.n * g.h * g.w * g.c;
    for (int64_t ip = ip0; ip < ip1; ++ip) {
      float* dst = pad + (ip - ip0) * row_floats;
      const int64_t ih = ip - g.pad_h;
      if (ih < 0 || ih >= g.h) {
        zero_floats(dst, row_floats);
        continue;
      }
      zero_floats(dst, g.pad_w * g.c);
      copy_floats(dst + g.pad_w * g.c, image + ih * g.w * g.c, g.w * g.c);
      zero_floats(dst + (g.pad_w + g.w) * g.c, (wp - g.pad_w - g.w) * g.c);
    }
    // Row starts walked by pointer: the multiplies per row cost 9% of a
    // grey image's first layer.
    const int64_t col_step = g.sw * g.c, row_step = g.sh * row_floats;
    const float* line = pad;  // the first column of the part's first output row
    const float* p = line + r % g.ow * col_step;
    for (int64_t i = 0, ow = r % g.ow; i < re - r; ++i, p += col_step) {
      if (ow++ == g.ow) ow = 1, line += row_step, p = line;
      row[i] = p;
    }
    f(Gather{row, off, g.k(), gather_run(g)}, r - b, re - r);
    r = re;
  }
}

// The floats for_padded_parts copies for rows [b, e).
int64_t padded_copy_floats(const ConvGeometry& g, int64_t b, int64_t e) {
  int64_t floats = 0;
  for (int64_t r = b; r < e;) {
    const ImagePart part(g, r, e);
    floats += (part.ip1 - part.ip0) * padded_width(g) * g.c;
    r = part.end;
  }
  return floats;
}

// Per-thread scratch for `tile` rows: an im2col tile, a padded copy or
// slots (col), then room for `tile` row starts.
struct TileScratch {
  float* col;
  int64_t col_floats;
  const float** row;
};
TileScratch tile_scratch(CpuDevice& d, int t, int64_t tile, int64_t k, const ConvGeometry& g) {
  const int64_t floats = std::max(tile * k, padded_floats(g, tile));
  const int64_t col_floats = (floats + 1) / 2 * 2;  // keeps the row starts 8-byte aligned
  float* s = d.scratch(t, static_cast<size_t>(col_floats + 2 * tile));
  return {s, col_floats, reinterpret_cast<const float**>(s + col_floats)};
}

// What a slot's copy of one tap costs beyond its C floats, in floats: the
// first layer of a grey image (C = 1), weighed float for float, took slots
// and ran 144 -> 200 us (axon-bench-layers, Conv2D/28x28x1/3x3s1/16).
constexpr int64_t kCopyCallFloats = 16;

// Row starts in sc for the gathered kernels over rows [b, e) of x; false
// where the tile goes another way. With `slots`, rows whose taps reach into
// padding take slots where those copy less than the tile's alternative (the
// padded copies of its images' rows, or im2col): a strided SAME
// convolution, whose only such rows are its images' last row and column
// (the ResNet's 28x28x16 -> 32 at stride 2: 512 -> 459 us). The filter
// gradient passes no slots: its passes over a tile read a padded copy made
// just before faster than x itself (the same layer: 487 -> 509 us with slots).
bool gather_rows(const ConvGeometry& g, const ConvTaps& taps, const float* x, int64_t b, int64_t e,
                 const TileScratch& sc, bool slots) {
  if (taps.direct == nullptr) return false;
  const int64_t edges = slots ? edge_rows(g, b, e) : 0;
  if (edges == 0) return row_starts(g, x, b, e, sc.row, nullptr);
  const SlotLayout lay(g);
  // A slot copies a tap's C floats at a time; a padded copy, whole rows.
  const int64_t slot_cost = edges * g.kh * g.kw * (g.c + kCopyCallFloats);
  const int64_t alternative = taps.padded != nullptr ? padded_copy_floats(g, b, e) : (e - b) * g.k();
  if (lay.per_block == 0 || slot_cost >= alternative || lay.floats(edges) > sc.col_floats) return false;
  return row_starts(g, x, b, e, sc.row, sc.col);
}

void zero(float* p, int64_t n) {
  if (n > 0) std::memset(p, 0, sizeof(float) * static_cast<size_t>(n));
}

}  // namespace

int64_t tile_rows(int64_t k) { return std::max<int64_t>(16, (96 * 1024) / std::max<int64_t>(k, 1)); }

ConvTaps conv_taps(CpuDevice& d, const ConvGeometry& g) { return pointwise(g) ? ConvTaps{} : tap_offsets(d, g); }

// y = ep(conv(x, f)): the epilogue (bias, relu) runs on each tile as it
// leaves the registers (gathered / small-K kernels) or while it is still in
// cache after sgemm, so _FusedConv2D costs no extra pass over y.
void conv2d_into(CpuDevice& d, const ConvGeometry& g, const float* xp, const float* w, float* yp, const Epilogue& ep) {
  const int64_t m = g.rows(), k = g.k(), oc = g.oc;
  if (m * oc == 0) return;
  if (k == 0) {
    zero(yp, m * oc);
    return apply_epilogue(yp, m, oc, ep);
  }
  if (use_winograd(g, ConvPass::forward)) return winograd_conv2d(d, g, xp, w, yp, ep);
  const bool parallel = m * k * oc >= kSerialMacs;
  if (planar_conv_applies(g)) return planar_conv2d(d, g, xp, w, yp, ep, parallel);
  if (one_channel_conv_applies(g)) return one_channel_conv2d(d, g, xp, w, yp, ep, parallel);
  const int64_t tile = tile_rows(k);
  const ConvTaps taps = conv_taps(d, g);
  d.pool().for_tapered_ranges(m, tile, parallel, [&](int t, int64_t, int64_t b, int64_t e) {
    conv_rows(d, t, g, taps, xp, w, b, e, yp + b * oc, ep);
  });
}

bool conv_rows_independent(const ConvGeometry& g, const ConvTaps& taps) {
  if (g.k() < kSmallK) return true;  // gathered or im2col'd, the same register-blocked kernel
  const bool inside = g.pad_h == 0 && g.pad_w == 0 && (g.oh - 1) * g.sh + (g.kh - 1) * g.dh < g.h &&
                      (g.ow - 1) * g.sw + (g.kw - 1) * g.dw < g.w;
  return taps.direct != nullptr && (inside || taps.padded != nullptr);  // every tile gathered
}

void conv_rows(CpuDevice& d, int t, const ConvGeometry& g, const ConvTaps& taps, const float* x, const float* w,
               int64_t b, int64_t e, float* y, const Epilogue& ep) {
  const int64_t k = g.k(), oc = g.oc;
  const float* a = x + b * k;
  if (!pointwise(g)) {  // else x rows are already the im2col rows
    TileScratch sc = tile_scratch(d, t, std::max(tile_rows(k), e - b), k, g);
    if (gather_rows(g, taps, x, b, e, sc, true))
      return small_k_conv(Gather{sc.row, taps.direct, k, gather_run(g)}, e - b, k, w, oc, y, ep);
    if (taps.padded != nullptr)
      return for_padded_parts(g, taps.padded, x, b, e, sc.col, sc.row, [&](const Gather& ga, int64_t r, int64_t rows) {
        small_k_conv(ga, rows, k, w, oc, y + r * oc, ep);
      });
    im2col(g, x, b, e, sc.col);
    a = sc.col;
  }
  if (k < kSmallK) return small_k_gemm(a, e - b, k, w, oc, y, ep);
  sgemm(false, false, e - b, oc, k, a, k, w, oc, 0.0f, y, oc);
  apply_epilogue(y, e - b, oc, ep);
}

namespace {

// ------------------------------------------------------------------ Conv2D

void conv2d(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), y = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), f.c());
  conv2d_into(d, g, x.data<float>(), f.data<float>(), y.data<float>(), Epilogue{});
}

// ------------------------------------------------------------------ _FusedConv2D

void fused_conv2d(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), bias = c.input(2), y = c.output(0);
  const auto& a = c.attrs<axon_fused_conv2d_attrs>();
  const ConvGeometry g = conv_geometry(a.conv, x.c(), f.c());
  Epilogue ep;
  ep.bias = g.oc > 0 ? bias.data<float>() : nullptr;
  ep.relu = a.activation == AXON_ACTIVATION_RELU;
  conv2d_into(d, g, x.data<float>(), f.data<float>(), y.data<float>(), ep);
}

// ------------------------------------------------------------------ Conv2DBackpropFilter

void conv2d_backprop_filter(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), dy = c.input(1), df = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c());
  conv2d_backprop_filter_into(d, g, x.data<float>(), dy.data<float>(), df.data<float>());
}

// ------------------------------------------------------------------ Conv2DBackpropInput

void conv2d_backprop_input(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), f = c.input(1), dx = c.output(0);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c());
  conv2d_backprop_input_into(d, g, dy.data<float>(), f.data<float>(), dx.data<float>());
}

// ------------------------------------------------------------------ _Conv2DBackpropInputAccumulate

void conv2d_backprop_input_accumulate(CpuDevice& d, const KernelCall& c) {
  TensorRef dx = c.input(0), dy = c.input(1), f = c.input(2);
  const ConvGeometry g = conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c());
  conv2d_backprop_input_into(d, g, dy.data<float>(), f.data<float>(), dx.data<float>(), true);
}

}  // namespace

namespace {

// dy's rows as the filter gradient gets them: in memory (dense), or made by
// fill on demand.
struct DyRows {
  const float* dense;
  const FillRows* fill;
};

// Rows of dy filled per tile of the gathered kernels: 16 KiB, L1-resident.
int64_t fill_tile_rows(int64_t oc) { return std::max<int64_t>(16, 4096 / std::max<int64_t>(oc, 1)); }

void backprop_filter(CpuDevice& d, const ConvGeometry& g, const float* xp, DyRows dy, float* out) {
  const int64_t m = g.rows(), k = g.k(), oc = g.oc, size = k * oc;
  if (size == 0) return;
  if (m == 0) return zero(out, size);
  const bool parallel = m * size >= kSerialMacs;
  // dy whole, for the paths that read it so (filled where it is not in memory).
  float* whole = dy.dense == nullptr ? d.intermediate(static_cast<size_t>(m * oc)) : nullptr;
  auto fill_whole = [&] {
    if (dy.dense != nullptr) return;
    d.pool().for_ranges(m, fill_tile_rows(oc), parallel,
                        [&](int, int64_t b, int64_t e) { (*dy.fill)(b, e, whole + b * oc); });
    dy.dense = whole;
  };
  if (use_winograd(g, ConvPass::filter_gradient)) {
    fill_whole();
    return winograd_backprop_filter(d, g, xp, dy.dense, out);
  }

  const int64_t tile = tile_rows(k);
  const bool direct = pointwise(g);
  const ConvTaps taps = conv_taps(d, g);
  // Partial sums per chunk of rows that would fill half an L2 (the CNN's
  // conv3: 576 rows of K = 576 in 14 chunks, 2 MiB of partials for 21M
  // multiply-adds), rows gathered from the image: the tasks are blocks of
  // dW's rows instead, each summed over one of two fixed groups of rows
  // in order, the groups' partials added in group order afterwards (the
  // same sums whatever the thread count). Groups first, so each thread's run
  // of tasks reads the rows its own core wrote in the ops before: conv3's
  // filter gradient in the CNN's step 176 -> 146 us on two threads, 263 ->
  // 270 us on one, where a thread read all rows.
  const int64_t chunks = ThreadPool::Taper(m, tile).count;
  if (chunks * size > (int64_t{1} << 17) && taps.direct != nullptr) {
    const int64_t groups = std::min<int64_t>(m, 2);  // each group at least one row
    const int64_t row_floats = (2 * m + 15) / 16 * 16;
    float* scratch = d.partials(static_cast<size_t>(row_floats + (groups - 1) * size));
    const float** row = reinterpret_cast<const float**>(scratch);
    float* part = scratch + row_floats;
    if (row_starts(g, xp, 0, m, row, nullptr)) {
      fill_whole();
      // Blocks of at most kBlock rows of dW inside one gathered run (a run's
      // floats are contiguous in the image, as the kernel's pointer path needs).
      constexpr int64_t kBlock = 48;
      const int64_t run = gather_run(g), per_run = (run + kBlock - 1) / kBlock, blocks = k / run * per_run;
      d.pool().for_ranges(groups * blocks, 1, parallel, [&](int, int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t grp = i / blocks, blk = i % blocks;
          const int64_t r0 = m * grp / groups, r1 = m * (grp + 1) / groups;
          const int64_t k0 = blk / per_run * run + blk % per_run * kBlock;
          const int64_t k1 = std::min(blk / per_run * run + run, k0 + kBlock);
          float* dst = grp == 0 ? out : part + (grp - 1) * size;
          small_k_conv_tn(Gather{row + r0, taps.direct + k0, k1 - k0, run}, r1 - r0, k1 - k0, dy.dense + r0 * oc, oc,
                          dst + k0 * oc);
        }
      });
      d.pool().for_ranges(size, 4096, parallel, [&](int, int64_t b, int64_t e) {
        for (int64_t grp = 1; grp < groups; ++grp)
          for (int64_t i = b; i < e; ++i) out[i] += part[(grp - 1) * size + i];
      });
      return;
    }
  }

  // One partial dW per chunk of rows, added in chunk order afterwards.
  float* partials = chunks == 1 ? out : d.partials(static_cast<size_t>(chunks * size));
  const bool one_channel = one_channel_filter_applies(g);
  d.pool().for_tapered_ranges(m, tile, parallel, [&](int t, int64_t chunk, int64_t b, int64_t e) {
    float* acc = partials + chunk * size;
    // From a plane of each image: the gathered tn kernel's sums. Not for dy
    // filled tile by tile (the fused conv+pool gradient), which would fill the
    // plane again for every tile (the guide CNN's conv1: 258 -> 349 us); its
    // gathered rows give the same bits (tests/kernels compare the two).
    if (one_channel && dy.dense != nullptr)
      return one_channel_filter_sums(d, t, g, xp, b, e, dy.dense + b * oc, acc, false);
    const TileScratch sc = direct ? TileScratch{} : tile_scratch(d, t, tile, k, g);
    if (!direct && gather_rows(g, taps, xp, b, e, sc, false)) {
      const Gather rows{sc.row, taps.direct, k, gather_run(g)};
      if (dy.dense != nullptr) return small_k_conv_tn(rows, e - b, k, dy.dense + b * oc, oc, acc);
      // The same sums tile by tile: they carry through acc exactly (small_gemm.hpp).
      const int64_t step = fill_tile_rows(oc);
      float* dz = d.tile(t, static_cast<size_t>(step * oc));
      for (int64_t r = b; r < e; r += step) {
        const int64_t r1 = std::min(e, r + step);
        (*dy.fill)(r, r1, dz);
        Gather part = rows;
        part.row += r - b;
        small_k_conv_tn(part, r1 - r, k, dz, oc, acc, r > b);
      }
      return;
    }
    // The other paths read dy's rows [b, e) from memory.
    const float* dyp = dy.dense;
    if (dyp == nullptr) {
      (*dy.fill)(b, e, whole + b * oc);
      dyp = whole;
    }
    const float* a = xp + b * k;
    if (!direct) {
      if (taps.padded != nullptr)
        return for_padded_parts(g, taps.padded, xp, b, e, sc.col, sc.row,
                                [&](const Gather& ga, int64_t r, int64_t rows) {
                                  small_k_conv_tn(ga, rows, k, dyp + (b + r) * oc, oc, acc, r > 0);
                                });
      im2col(g, xp, b, e, sc.col);
      a = sc.col;
    }
    if (k < kSmallK)
      small_k_gemm_tn(a, e - b, k, dyp + b * oc, oc, acc);
    else
      sgemm(true, false, k, oc, e - b, a, k, dyp + b * oc, oc, 0.0f, acc, oc);
  });
  if (chunks == 1) return;
  d.pool().for_ranges(size, 4096, parallel && size * chunks >= kSerialElements, [&](int, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = partials[i];
    for (int64_t ch = 1; ch < chunks; ++ch) {
      const float* p = partials + ch * size;
      for (int64_t i = b; i < e; ++i) out[i] += p[i];
    }
  });
}

}  // namespace

void conv2d_backprop_filter_into(CpuDevice& d, const ConvGeometry& g, const float* xp, const float* dyp, float* out) {
  backprop_filter(d, g, xp, DyRows{dyp, nullptr}, out);
}

void conv2d_backprop_filter_into(CpuDevice& d, const ConvGeometry& g, const float* xp, const FillRows& dy,
                                 float* out) {
  backprop_filter(d, g, xp, DyRows{nullptr, &dy}, out);
}

namespace {

// At stride 1, dx[ih, iw] = sum over (kh, kw, o) of dy[ih + pad_h - kh*dh,
// iw + pad_w - kw*dw, o] w[kh, kw, c, o]: the forward convolution of dy with
// the filter turned by 180 degrees and its channels swapped, padded by
// (KH-1)*DH - pad_h before (the "full" convolution for VALID). This is that
// convolution's geometry.
ConvGeometry turned(const ConvGeometry& g) {
  ConvGeometry t = g;
  t.h = g.oh, t.w = g.ow, t.c = g.oc, t.oh = g.h, t.ow = g.w, t.oc = g.c;
  t.pad_h = (g.kh - 1) * g.dh - g.pad_h, t.pad_w = (g.kw - 1) * g.dw - g.pad_w;
  t.pad_h_total = g.h + (g.kh - 1) * g.dh - g.oh, t.pad_w_total = g.w + (g.kw - 1) * g.dw - g.ow;
  return t;
}

// Where the turned forward convolution replaces im2col's product and col2im's
// scatter: filters of few channels either side at stride 1 (an Inception
// cell's 3x3 of 8 into 8 and 5x5 of 4 into 4 channels: 1.5-1.6 -> 0.6-0.9
// and 2.2-2.4 -> 0.6-0.9 ms at batch 64 on AVX2), with AVX2 or better for
// the gathered kernels.
bool backprop_input_turned(const ConvGeometry& g) {
  return g.sh == 1 && g.sw == 1 && !pointwise(g) && (g.c < 16 || g.oc < 16) && simd::isa() != simd::Isa::base &&
         g.k() <= kMaxGatherK && g.kh * g.kw * g.oc <= kMaxGatherK;
}

}  // namespace

const float* transposed(CpuDevice& d, const float* w, int64_t k, int64_t oc) {
  float* t = d.partials(static_cast<size_t>(k * oc));
  // 16 rows of w at a time, so each row of t gets a whole cache line at once
  // rather than one float of each of oc lines; large ones on all threads (a
  // Dense layer's [4056, 10] weights: 12% of its input gradient's time,
  // serial), in chunks of 128 rows (the CNN's conv3, [576, 64], is 5 of them:
  // its input gradient in the CNN's step 180 -> 172 us on two threads).
  constexpr int64_t kRows = 16;
  d.pool().for_ranges(k, 8 * kRows, k * oc >= (1 << 15), [&](int, int64_t p0, int64_t p1) {
    for (int64_t b = p0; b < p1; b += kRows) {
      const int64_t e = std::min(p1, b + kRows);
      for (int64_t o = 0; o < oc; ++o)
        for (int64_t p = b; p < e; ++p) t[o * k + p] = w[p * oc + o];
    }
  });
  return t;
}

void conv2d_backprop_input_into(CpuDevice& d, const ConvGeometry& g, const float* dyp, const float* w, float* out,
                                bool accumulate) {
  const int64_t m = g.rows(), k = g.k(), oc = g.oc;
  if (g.n * g.h * g.w * g.c == 0) return;
  if (use_winograd(g, ConvPass::input_gradient)) return winograd_backprop_input(d, g, dyp, w, out, accumulate);
  // With AVX2/AVX-512 the product runs in the register-blocked kernel against
  // W^T (transposed below), which beats sgemm's packing at these sizes.
  const bool blocked = simd::isa() != simd::Isa::base && oc > 0 && oc <= kMaxGatherK;
  const bool direct = strided_pointwise(g) && blocked;
  if (accumulate && backprop_input_turned(g)) {
    // This path writes dx whole: the gradient goes to a temporary first.
    const int64_t size = g.n * g.h * g.w * g.c;
    float* part = d.intermediate(static_cast<size_t>(size));
    conv2d_backprop_input_into(d, g, dyp, w, part, false);
    return for_elements(d, size, [&](int64_t b, int64_t e) { add_range(out + b, part + b, e - b); });
  }
  if (backprop_input_turned(g)) {
    const ConvGeometry t = turned(g);
    float* wt = d.partials(static_cast<size_t>(k * oc));  // [kh, kw, o, c] = w[KH-1-kh, KW-1-kw, c, o]
    for (int64_t kh = 0; kh < g.kh; ++kh)
      for (int64_t kw = 0; kw < g.kw; ++kw) {
        const float* src = w + ((g.kh - 1 - kh) * g.kw + (g.kw - 1 - kw)) * g.c * oc;
        float* dst = wt + (kh * g.kw + kw) * oc * g.c;
        for (int64_t o = 0; o < oc; ++o)
          for (int64_t ci = 0; ci < g.c; ++ci) dst[o * g.c + ci] = src[ci * oc + o];
      }
    return conv2d_into(d, t, dyp, wt, out, Epilogue{});  // never Winograd here: it needs 16 channels each side
  }
  const bool parallel = m * k * oc >= kSerialMacs;
  const int64_t tile = tile_rows(k);
  if (pointwise(g)) {  // dx rows are exactly dy rows times W^T
    // Few filters (a short inner dimension): the register-blocked kernel
    // against W^T, as the forward takes a short K, instead of sgemm's packing.
    const float* wt = oc > 0 && oc < kSmallK && simd::isa() != simd::Isa::base ? transposed(d, w, k, oc) : nullptr;
    // Added into dx (a tensor several layers read), each chunk's rows go
    // to the thread's tile and are added from there while in cache, not
    // through a whole temporary.
    d.pool().for_ranges(m, tile, parallel, [&](int t, int64_t b, int64_t e) {
      float* rows = accumulate ? d.tile(t, static_cast<size_t>((e - b) * k)) : out + b * k;
      if (oc == 0)
        zero(rows, (e - b) * k);
      else if (wt != nullptr)
        small_k_gemm(dyp + b * oc, e - b, oc, wt, k, rows);
      else
        sgemm(false, true, e - b, k, oc, dyp + b * oc, oc, w, oc, 0.0f, rows, k);
      if (accumulate) add_range(out + b * k, rows, (e - b) * k);
    });
    return;
  }
  // Taps of different images never touch the same dx pixel, so chunks are
  // whole images and scatter without races.
  const int64_t per_image = g.oh * g.ow, image_size = g.h * g.w * g.c;
  const int64_t images = std::max<int64_t>(1, tile / std::max<int64_t>(per_image, 1));
  const float* wt = blocked ? transposed(d, w, k, oc) : nullptr;
  d.pool().for_tapered_ranges(g.n, images, parallel, [&](int t, int64_t, int64_t n0, int64_t n1) {
    if (direct) {  // an image at a time: its product, then dx written once
      float* col = d.scratch(t, static_cast<size_t>(per_image * k));
      for (int64_t n = n0; n < n1; ++n) {
        small_k_gemm(dyp + n * per_image * oc, per_image, oc, wt, k, col);
        if (accumulate)
          col2im_strided_1x1_add(g, col, out + n * image_size);
        else
          col2im_strided_1x1(g, col, out + n * image_size);
      }
      return;
    }
    // The chunk's images are summed from zero, in dx or, to accumulate, in
    // a copy in cache that is then added into dx: dx + (the sum), AddN's
    // bits, in one pass over dx.
    const int64_t floats = (n1 - n0) * image_size;
    float* images_dx = accumulate ? d.tile(t, static_cast<size_t>(floats)) : out + n0 * image_size;
    zero(images_dx, floats);
    if (oc > 0 && per_image > 0) {
      ConvGeometry chunk = g;  // the chunk's images alone
      chunk.n = n1 - n0;
      float* col = d.scratch(t, static_cast<size_t>(std::max(tile, per_image) * k));
      const int64_t first = n0 * per_image, e = n1 * per_image;
      for (int64_t r0 = first; r0 < e; r0 += tile) {
        const int64_t r1 = std::min(e, r0 + tile);
        if (wt != nullptr)
          small_k_gemm(dyp + r0 * oc, r1 - r0, oc, wt, k, col);
        else
          sgemm(false, true, r1 - r0, k, oc, dyp + r0 * oc, oc, w, oc, 0.0f, col, k);
        col2im_add(chunk, col, r0 - first, r1 - first, images_dx);
      }
    }
    if (accumulate) add_range(out + n0 * image_size, images_dx, floats);
  });
}

void add_conv_kernels(sdk::KernelTable& t) {
  add<OpId::Conv2D, conv2d>(t);
  add<OpId::FusedConv2D, fused_conv2d>(t);
  add<OpId::Conv2DBackpropInput, conv2d_backprop_input>(t);
  add<OpId::Conv2DBackpropInputAccumulate, conv2d_backprop_input_accumulate>(t);
  add<OpId::Conv2DBackpropFilter, conv2d_backprop_filter>(t);
}

}  // namespace axon::cpu
