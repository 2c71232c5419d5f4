// Winograd F(mh x mw, 3x3) convolutions (winograd.hpp). Output tiles of mh x
// mw pixels (4x2 where tiles of 4 rows cover no more rows than tiles of 2,
// in the forward, the turned input gradient and the filter gradient of a
// dense dy of 16 rows or more; else 2x2), (n, tile row, tile
// column) in order, are cut into chunks fixed by the shapes alone; for each
// chunk a pool thread, in its own scratch:
//   forward    V = B^T d B per input tile and channel, then per transform
//              point q: M_q[tiles, OC] = V_q[tiles, C] * U_q[C, OC] (U = G g
//              G^T, the filter transformed once per call), then y = A^T M A
//              plus the epilogue, straight into y;
//   input grad the same convolution of dy with the filter rotated by 180
//              degrees and its channels swapped (padding 2 - pad); or,
//              where that would need more tiles (no padding), the adjoint
//              of the forward's tiles: Z = A dy A^T, N_q[tiles, C] = Z_q *
//              U_q^T, each tile's B N B^T added into dx, an image per task;
//   filter grad V as above and Z = A dy A^T per dy tile, S_q[C, OC] += V_q^T
//              Z_q per chunk, the chunks' S added in chunk order and dW = G^T
//              S G (the transpose of the forward's map from g to y).
// Transforms run over channels in vectors (simd.hpp's dispatch); a chunk's
// products are small_k_gemm's (sgemm on the baseline instruction set), so
// every value has the same bits whatever the thread count.
#include "winograd.hpp"

#include "blas.hpp"
#include "pool_2x2.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace axon::cpu {
namespace {

// The 1-D matrices of F(m, 3), a = m + 2 points: input transform B^T [a, a],
// filter transform G [a, 3], output transform A^T [m, a]; a tile of mh x mw
// outputs takes F(mh, 3) down its rows and F(mw, 3) along them.
template <int M>
struct Matrices;
template <>
struct Matrices<2> {  // at 0, 1, -1 and infinity
  static constexpr float bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr float g[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
  static constexpr float at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};
// At 0, 1, -1, 2, -1/2 and infinity (tools/winograd_error.py derives them):
// A^T's entries are powers of two, and G's 1/3 and 1/15 are applied once per
// call. These points kept the float error of an F(4x4) in the ResNet's
// layers to 23 u S where 0, +-1, +-2 gave 175 (the tolerance is 16 u S);
// F(4x2) reaches 9.0 u S in the kernel tests, F(2x2) 3.6.
template <>
struct Matrices<4> {
  static constexpr float bt[6][6] = {{1, 1.5f, -2, -1.5f, 1, 0},   {0, -1, -2.5f, -0.5f, 1, 0},
                                     {0, 1, 0.5f, -2.5f, 1, 0},    {0, -0.5f, -1, 0.5f, 1, 0},
                                     {0, 2, -1, -2, 1, 0},         {0, 1, 1.5f, -2, -1.5f, 1}};
  static constexpr float g[6][3] = {{1, 0, 0},
                                    {-1.0f / 3, -1.0f / 3, -1.0f / 3},
                                    {1.0f / 3, -1.0f / 3, 1.0f / 3},
                                    {1.0f / 15, 2.0f / 15, 4.0f / 15},
                                    {-16.0f / 15, 8.0f / 15, -4.0f / 15},
                                    {0, 0, 1}};
  static constexpr float at[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -0.5f, 0}, {0, 1, 1, 4, 0.25f, 0}, {0, 1, -1, 8, -0.125f, 1}};
};
// F(2x2)'s tiles: the adjoint input gradient's, the filter gradient's from
// a pooled dy or of fewer than kGradientRows4x2 rows, and where tiles of 4
// rows would cover more rows (tile_height).
constexpr int kM = 2;

// out = L1 in L2^T for L1 [R1, S1] and L2 [R2, S2] given by l1(i, k) and
// l2(j, k) (compile-time constants once inlined and unrolled: zero terms
// vanish, +-1 cost no multiply). T is a float or a vector of floats.
template <class T>
__attribute__((always_inline)) inline T scaled(float c, T v) {
  return c == 1.0f ? v : c == -1.0f ? -v : c * v;
}
// sum over k < S of l(i, k) in(k), the zero terms skipped, in k's order.
template <int S, class L, class In>
__attribute__((always_inline)) inline auto combine(L l, int i, In in) {
  decltype(in(0)) s{};
  bool first = true;
#pragma GCC unroll 8
  for (int k = 0; k < S; ++k) {
    if (l(i, k) == 0.0f) continue;
    const auto t = scaled(l(i, k), in(k));
    s = first ? t : s + t;
    first = false;
  }
  return s;
}
template <int R1, int R2, int S1, int S2, class T, class L1, class L2>
__attribute__((always_inline)) inline void sandwich(L1 l1, L2 l2, const T (&in)[S1][S2], T (&out)[R1][R2]) {
  T mid[R1][S2];
#pragma GCC unroll 8
  for (int i = 0; i < R1; ++i)
#pragma GCC unroll 8
    for (int col = 0; col < S2; ++col) mid[i][col] = combine<S1>(l1, i, [&](int k) { return in[k][col]; });
#pragma GCC unroll 8
  for (int i = 0; i < R1; ++i)
#pragma GCC unroll 8
    for (int j = 0; j < R2; ++j) out[i][j] = combine<S2>(l2, j, [&](int k) { return mid[i][k]; });
}

// *p as a float or a vector, zero for nullptr (an edge tile's pixel outside
// the tensor). Loads that cannot be null go through simd::load instead: GCC
// cannot prove base + offset non-null and kept a test and a branch per load.
template <class T>
__attribute__((always_inline)) inline T load_or_zero(const float* p) {
  return p == nullptr ? T{} : simd::load<T>(p);
}

// A stride-1 3x3 convolution in tiles: input [n, h, w, c] read from row
// pad_t and column pad_l before the output's first (zeros outside), output
// [n, oh, ow, oc] in th x tw tiles of mh x mw per image. Tiles are numbered in
// that grid, but only the first lh x lw of an image are live: where a caller
// reads only part of the output (a max pooling whose windows stop short of
// the last row or column) the others are neither computed nor written, and
// their gradient, zero, is not summed (the sums keep their order and bits).
struct Plan {
  int mh, mw;
  int64_t n, h, w, c, oh, ow, oc, pad_t, pad_l, th, tw, lh, lw;
  int64_t tiles() const { return n * th * tw; }
  int64_t points() const { return (mh + 2) * (mw + 2); }
  // Live tiles before tile t, and in [t0, t1).
  int64_t live_before(int64_t t) const {
    const int64_t r = t % (th * tw), ty = r / tw, tx = r % tw;
    return t / (th * tw) * lh * lw + (ty < lh ? ty * lw + std::min(tx, lw) : lh * lw);
  }
  int64_t live(int64_t t0, int64_t t1) const { return live_before(t1) - live_before(t0); }
};
Plan make_plan(int64_t n, int64_t h, int64_t w, int64_t c, int64_t oh, int64_t ow, int64_t oc, int64_t pad_t,
               int64_t pad_l, int mh = kM, int mw = kM) {
  const int64_t th = (oh + mh - 1) / mh, tw = (ow + mw - 1) / mw;
  return {mh, mw, n, h, w, c, oh, ow, oc, pad_t, pad_l, th, tw, th, tw};
}
// Whether a convolution may compute only the tiles a pooling reads and keep
// the bits of computing them all. The register-blocked products sum each
// row alone; the baseline's sgemm rounds a row with the rows beside it
// (OpenBLAS' Haswell kernels do), and a chunk holds only its live tiles, so
// there every tile is computed and the pooling stays a separate pass.
bool tiles_may_be_skipped() { return simd::isa() != simd::Isa::base; }

// p with only the tiles that reach into output rows [0, rows) and columns
// [0, cols) live (all of them where tiles_may_be_skipped says no).
Plan with_reach(Plan p, int64_t rows, int64_t cols) {
  if (!tiles_may_be_skipped()) return p;
  p.lh = std::clamp<int64_t>((rows + p.mh - 1) / p.mh, 0, p.th);
  p.lw = std::clamp<int64_t>((cols + p.mw - 1) / p.mw, 0, p.tw);
  return p;
}

// Floats from one transform point's block of a chunk to the next's: `rows`
// tiles of `c` channels, plus a cache line, so the (m + 2)^2 blocks a tile
// writes or reads are not a power of two apart (they would share cache sets).
int64_t point_stride(int64_t rows, int64_t c) { return (rows * c + 15) / 16 * 16 + 16; }

// The live tiles from tile t on, in order: image, first output row and column.
struct TileWalk {
  const Plan& p;
  int64_t n, y, x;
  TileWalk(const Plan& plan, int64_t t) : p(plan), n(t / (p.th * p.tw)), y(t / p.tw % p.th), x(t % p.tw) {
    if (x >= p.lw) x = 0, ++y;
    if (y >= p.lh) y = x = 0, ++n;
    y *= p.mh, x *= p.mw;
  }
  void next() {
    if ((x += p.mw) < p.lw * p.mw) return;
    x = 0;
    if ((y += p.mh) < p.lh * p.mh) return;
    y = 0, ++n;
  }
};

// An SH x SW patch of an [n, h, w, c] tensor from row y0 and column x0
// (either may be outside): the pixels' addresses, nullptr outside.
template <int SH, int SW>
struct Patch {
  const float* at[SH][SW];
  Patch(const float* t, int64_t h, int64_t w, int64_t c, int64_t n, int64_t y0, int64_t x0) {
    for (int i = 0; i < SH; ++i)
      for (int j = 0; j < SW; ++j) {
        const int64_t yi = y0 + i, xj = x0 + j;
        at[i][j] = yi >= 0 && yi < h && xj >= 0 && xj < w ? t + ((n * h + yi) * w + xj) * c : nullptr;
      }
  }
  static bool inside(int64_t h, int64_t w, int64_t y0, int64_t x0) {
    return y0 >= 0 && y0 + SH <= h && x0 >= 0 && x0 + SW <= w;
  }
};

// Pixel (i, j) of a patch inside the tensor at at + i * row + j * c.
struct Dense {
  const float* at;
  int64_t row;
};

// dst[q * step + ci] = (L1 d L2^T)[q] of an SH x SW patch, channels [0, c): Edge
// (the tensor's border): src(i, j) is pixel (i, j)'s address (nullptr:
// zero); else src is a Dense patch, read through running pointers, as dst is
// written: 16 addresses per tile kept apart spilled AVX2's registers (28x28x16
// -> 16 at batch 64: 3-7% faster). A zero-padded copy of an edge patch, to
// take this loop too, cost more than testing its loads.
template <int W, int RH, int RW, int SH, int SW, bool Edge, class L1, class L2, class Src>
__attribute__((always_inline)) inline void transform_patch(L1 l1, L2 l2, Src src, int64_t c, float* dst,
                                                           int64_t step) {
  simd::for_channel_blocks<W>(c, [&](auto tag, int64_t c0) __attribute__((always_inline)) {
    using T = decltype(tag);
    T d[SH][SW], o[RH][RW];
    if constexpr (Edge) {
      for (int i = 0; i < SH; ++i)
        for (int j = 0; j < SW; ++j) {
          const float* a = src(i, j);
          d[i][j] = load_or_zero<T>(a == nullptr ? nullptr : a + c0);
        }
    } else {  // src.at + i * src.row + j * c, walked with one pointer
      const float* row = src.at + c0;
      for (int i = 0; i < SH; ++i, row += src.row) {
        const float* a = row;
        for (int j = 0; j < SW; ++j, a += c) d[i][j] = simd::load<T>(a);
      }
    }
    sandwich<RH, RW>(l1, l2, d, o);
    float* out = dst + c0;
    for (int i = 0; i < RH; ++i)
      for (int j = 0; j < RW; ++j, out += step) simd::store<T>(out, o[i][j]);
  });
}

// v[q * point_stride + r * c + ci] = (B_h^T d B_w)[q] of the input of the
// live tile r places after t0 (r from 0), channel ci: F(2x2)'s tiles, each
// patch transformed whole.
template <int W>
__attribute__((always_inline)) inline void input_transform_patches(const Plan& p, const float* x, int64_t t0,
                                                                   int64_t t1, float* v) {
  constexpr int A = kM + 2;
  const int64_t step = point_stride(p.live(t0, t1), p.c), row = p.w * p.c;
  auto l = [](int i, int k) { return Matrices<kM>::bt[i][k]; };
  TileWalk tw(p, t0);
  for (int64_t r = 0, rows = p.live(t0, t1); r < rows; ++r, tw.next()) {
    const int64_t y0 = tw.y - p.pad_t, x0 = tw.x - p.pad_l;
    float* dst = v + r * p.c;
    if (Patch<A, A>::inside(p.h, p.w, y0, x0)) {
      const float* base = x + ((tw.n * p.h + y0) * p.w + x0) * p.c;
      transform_patch<W, A, A, A, A, false>(l, l, Dense{base, row}, p.c, dst, step);
    } else {
      const Patch<A, A> patch(x, p.h, p.w, p.c, tw.n, y0, x0);
      transform_patch<W, A, A, A, A, true>(l, l, [&](int i, int j) { return patch.at[i][j]; }, p.c, dst, step);
    }
  }
}

// The same for F(4x2)'s tiles. The patches of tiles side by side overlap by
// two columns, and the height transform of a column (B_h^T over its 6
// pixels, 20 of the 26 operations a column takes) is the same for both: it is
// taken once and carried to the next tile (28x28x16 -> 16 at batch 64: 9-15%
// faster in each pass, two threads, AVX-512 and AVX2 alike; for F(2x2),
// whose height transform is as cheap as its width one, AVX2 lost 4-5% at
// 14x14x32 -> 32). Its terms are sandwich's, in its order; GCC fuses more
// of their multiplies into adds than it did in the whole patch's sandwich,
// so AVX2 and AVX-512 round a little differently from the baseline.
template <int MH, int MW, int W>
__attribute__((always_inline)) inline void input_transform_carried(const Plan& p, const float* x, int64_t t0,
                                                                   int64_t t1, float* v) {
  constexpr int AH = MH + 2, AW = MW + 2, Kept = AW - MW;
  const int64_t rows = p.live(t0, t1), step = point_stride(rows, p.c), row = p.w * p.c;
  auto lh = [](int i, int k) { return Matrices<MH>::bt[i][k]; };
  auto lw = [](int i, int k) { return Matrices<MW>::bt[i][k]; };
  simd::for_channel_blocks<W>(p.c, [&](auto tag, int64_t c0) __attribute__((always_inline)) {
    using T = decltype(tag);
    T col[AW][AH] = {};  // the height transforms of the patch's columns
    TileWalk tw(p, t0);
    for (int64_t r = 0; r < rows; ++r, tw.next()) {
      const int64_t y0 = tw.y - p.pad_t, x0 = tw.x - p.pad_l;
      const bool rows_inside = y0 >= 0 && y0 + AH <= p.h;
      auto column = [&](int j) __attribute__((always_inline)) {
        const int64_t xj = x0 + j;
        T d[AH];
        if (xj < 0 || xj >= p.w) {
          for (int k = 0; k < AH; ++k) d[k] = T{};
        } else {
          const float* image_column = x + (tw.n * p.h * p.w + xj) * p.c + c0;  // its row 0
          if (rows_inside)
            for (int k = 0; k < AH; ++k) d[k] = simd::load<T>(image_column + (y0 + k) * row);
          else
            for (int k = 0; k < AH; ++k)
              d[k] = y0 + k >= 0 && y0 + k < p.h ? simd::load<T>(image_column + (y0 + k) * row) : T{};
        }
#pragma GCC unroll 8
        for (int i = 0; i < AH; ++i) col[j][i] = combine<AH>(lh, i, [&](int k) { return d[k]; });
      };
      if (r > 0 && tw.x > 0) {  // the tile before is the one to the left
#pragma GCC unroll 8
        for (int j = 0; j < Kept; ++j)
#pragma GCC unroll 8
          for (int i = 0; i < AH; ++i) col[j][i] = col[j + MW][i];
#pragma GCC unroll 8
        for (int j = Kept; j < AW; ++j) column(j);
      } else {
#pragma GCC unroll 8
        for (int j = 0; j < AW; ++j) column(j);
      }
      float* out = v + r * p.c + c0;
#pragma GCC unroll 8
      for (int i = 0; i < AH; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < AW; ++j, out += step)
          simd::store<T>(out, combine<AW>(lw, j, [&](int k) { return col[k][i]; }));
    }
  });
}

// z[q * point_stride + r * oc + o] = (A_h dy A_w^T)[q] of live tile r's mh x
// mw dy values (zeros beyond the output's edge), channel o.
template <int MH, int MW, int W>
__attribute__((always_inline)) inline void gradient_transform_tiles(const Plan& p, const float* dy, int64_t t0,
                                                                    int64_t t1, float* z) {
  constexpr int AH = MH + 2, AW = MW + 2;
  const int64_t step = point_stride(p.live(t0, t1), p.oc), row = p.ow * p.oc;
  auto lh = [](int i, int k) { return Matrices<MH>::at[k][i]; };
  auto lw = [](int i, int k) { return Matrices<MW>::at[k][i]; };
  TileWalk tw(p, t0);
  for (int64_t r = 0, rows = p.live(t0, t1); r < rows; ++r, tw.next()) {
    float* dst = z + r * p.oc;
    if (Patch<MH, MW>::inside(p.oh, p.ow, tw.y, tw.x)) {
      const float* base = dy + ((tw.n * p.oh + tw.y) * p.ow + tw.x) * p.oc;
      transform_patch<W, AH, AW, MH, MW, false>(lh, lw, Dense{base, row}, p.oc, dst, step);
    } else {
      const Patch<MH, MW> patch(dy, p.oh, p.ow, p.oc, tw.n, tw.y, tw.x);
      transform_patch<W, AH, AW, MH, MW, true>(lh, lw, [&](int i, int j) { return patch.at[i][j]; }, p.oc, dst,
                                               step);
    }
  }
}

// gradient_transform_tiles from a PooledGradient: tile t's m x m gradient
// holds the pooled pixel's dy at its argmax tap and zeros elsewhere (all
// zeros off the pooling's windows), the values the routed gradient has there.
template <class T>
__attribute__((always_inline)) inline T routed(const float* dy, const uint8_t* argmax, int32_t tap) {
  if constexpr (sizeof(T) == sizeof(float)) {
    return *argmax == tap ? *dy : 0.0f;
  } else {
    using I = typename simd::Vec<sizeof(T) / 4>::i;
    return simd::widen_bytes<I>(argmax) == tap ? simd::load<T>(dy) : T{};
  }
}
template <int M, int W>
__attribute__((always_inline)) inline void pooled_gradient_transform_tiles(const Plan& p, const PooledGradient& pg,
                                                                           int64_t t0, int64_t t1, float* z) {
  static_assert(M == 2, "tiles are the 2x2 pooling's windows");
  constexpr int A = M + 2;
  const int64_t step = point_stride(p.live(t0, t1), p.oc);
  auto l = [](int i, int k) { return Matrices<M>::at[k][i]; };
  TileWalk tw(p, t0);
  for (int64_t r = 0, rows = p.live(t0, t1); r < rows; ++r, tw.next()) {
    const int64_t ph = tw.y / M, pw = tw.x / M;
    const bool pooled = ph < pg.ph && pw < pg.pw;
    const int64_t at = ((tw.n * pg.ph + ph) * pg.pw + pw) * p.oc;
    float* dst = z + r * p.oc;
    simd::for_channel_blocks<W>(p.oc, [&](auto tag, int64_t c0) __attribute__((always_inline)) {
      using T = decltype(tag);
      T d[M][M], o[A][A];
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < M; ++j) d[i][j] = pooled ? routed<T>(pg.dy + at + c0, pg.argmax + at + c0, i * M + j) : T{};
      sandwich<A, A>(l, l, d, o);
      float* out = dst + c0;
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j, out += step) simd::store<T>(out, o[i][j]);
    });
  }
}

// in[i][j] = the tile's transform point i * AW + j, points `step` floats apart from `from`.
template <int AH, int AW, class T>
__attribute__((always_inline)) inline void load_points(const float* from, int64_t step, T (&in)[AH][AW]) {
  for (int i = 0; i < AH; ++i)
    for (int j = 0; j < AW; ++j, from += step) in[i][j] = simd::load<T>(from);
}

// A tile's mh x mw outputs ep(A_h^T M A_w), M_q at src[q * step], channel
// block by channel block: emit(o, o0) with o[i][j] the values (vectors, or
// floats for the last channels) of channels from o0.
template <int MH, int MW, int W, class Emit>
__attribute__((always_inline)) inline void output_tile(const Plan& p, const float* src, int64_t step,
                                                       const Epilogue& ep, Emit emit) {
  constexpr int AH = MH + 2, AW = MW + 2;
  auto lh = [](int i, int k) { return Matrices<MH>::at[i][k]; };
  auto lw = [](int i, int k) { return Matrices<MW>::at[i][k]; };
  simd::for_channel_blocks<W>(p.oc, [&](auto tag, int64_t o0) __attribute__((always_inline)) {
    using T = decltype(tag);
    T in[AH][AW], o[MH][MW];
    load_points(src + o0, step, in);
    sandwich<MH, MW>(lh, lw, in, o);
    const T bias = ep.bias != nullptr ? simd::load<T>(ep.bias + o0) : T{};
    for (int i = 0; i < MH; ++i)
      for (int j = 0; j < MW; ++j) {
        if (ep.bias != nullptr) o[i][j] += bias;
        if (ep.relu) o[i][j] = o[i][j] > T{} ? o[i][j] : T{};  // NaN -> 0, as Relu
      }
    emit(o, o0);
  });
}

// y's mh x mw pixels of live tile r = ep(A_h^T M A_w), M_q at mm[q *
// point_stride + r * oc]; accumulate: y += instead.
template <int MH, int MW, int W>
__attribute__((always_inline)) inline void output_transform_tiles(const Plan& p, const float* mm, int64_t t0,
                                                                  int64_t t1, float* y, const Epilogue& ep,
                                                                  bool accumulate) {
  const int64_t step = point_stride(p.live(t0, t1), p.oc);
  TileWalk tw(p, t0);
  for (int64_t r = 0, rows = p.live(t0, t1); r < rows; ++r, tw.next()) {
    const int64_t ny = std::min<int64_t>(MH, p.oh - tw.y), nx = std::min<int64_t>(MW, p.ow - tw.x);
    float* dst = y + ((tw.n * p.oh + tw.y) * p.ow + tw.x) * p.oc;
    output_tile<MH, MW, W>(p, mm + r * p.oc, step, ep, [&](const auto& o, int64_t o0) __attribute__((always_inline)) {
      using T = std::remove_cv_t<std::remove_reference_t<decltype(o[0][0])>>;
      for (int64_t i = 0; i < ny; ++i)
        for (int64_t j = 0; j < nx; ++j) {
          float* to = dst + (i * p.ow + j) * p.oc + o0;
          simd::store<T>(to, accumulate ? simd::load<T>(to) + o[i][j] : o[i][j]);
        }
    });
  }
}

// output_transform_tiles where a live tile is a column of 2x2 stride-2 max
// pooling windows: their outputs pooled in registers (max_pool_2x2), the
// windows below the pooled output's last row skipped.
template <int MH, int MW, int W>
__attribute__((always_inline)) inline void pooled_output_transform_tiles(const Plan& p, const float* mm, int64_t t0,
                                                                         int64_t t1, const PooledOutput& out,
                                                                         const Epilogue& ep) {
  static_assert(MW == 2 && MH % 2 == 0, "tiles are columns of the 2x2 pooling's windows");
  const int64_t step = point_stride(p.live(t0, t1), p.oc);
  TileWalk tw(p, t0);
  for (int64_t r = 0, rows = p.live(t0, t1); r < rows; ++r, tw.next()) {
    const int64_t ph = tw.y / 2, windows = std::min<int64_t>(MH / 2, out.ph - ph);
    const int64_t at = ((tw.n * out.ph + ph) * out.pw + tw.x / 2) * p.oc;
    output_tile<MH, MW, W>(p, mm + r * p.oc, step, ep, [&](const auto& o, int64_t o0) __attribute__((always_inline)) {
      using T = std::remove_cv_t<std::remove_reference_t<decltype(o[0][0])>>;
      for (int64_t k = 0; k < windows; ++k) {
        const T window[2][2] = {{o[2 * k][0], o[2 * k][1]}, {o[2 * k + 1][0], o[2 * k + 1][1]}};
        const int64_t to = at + k * out.pw * p.oc + o0;
        max_pool_2x2(window, ep.relu, out.y + to, out.argmax + to);
      }
    });
  }
}

// The adjoint of the input transform: live tile r's (m+2) x (m+2) input
// gradient B N B^T (N_q at nn[q * point_stride + r * c]) added into acc, one
// image's input gradient with the tiles' reach around it: pixel (i, j) of
// tile (y, x)'s patch at acc[((y + i) * (tw m + 2) + x + j) * c]. Tiles in
// order, so every pixel's sum has one order.
template <int M, int W>
__attribute__((always_inline)) inline void scatter_transform_tiles(const Plan& p, const float* nn, int64_t t0,
                                                                   int64_t t1, float* acc) {
  constexpr int A = M + 2;
  const int64_t step = point_stride(p.live(t0, t1), p.c), row = (p.tw * M + 2) * p.c;
  auto l = [](int i, int k) { return Matrices<M>::bt[k][i]; };
  TileWalk tw(p, t0);
  for (int64_t r = 0, rows = p.live(t0, t1); r < rows; ++r, tw.next()) {
    const float* src = nn + r * p.c;
    float* dst = acc + tw.y * row + tw.x * p.c;
    simd::for_channel_blocks<W>(p.c, [&](auto tag, int64_t c0) __attribute__((always_inline)) {
      using T = decltype(tag);
      T in[A][A], o[A][A];
      load_points(src + c0, step, in);
      sandwich<A, A>(l, l, in, o);
      for (int i = 0; i < A; ++i)
        for (int j = 0; j < A; ++j) {
          float* to = dst + i * row + j * p.c + c0;
          simd::store<T>(to, simd::load<T>(to) + o[i][j]);
        }
    });
  }
}

// f.template operator()<MH, MW>() for p's tiles, F(2x2) or F(4x2) (make_plan).
template <class F>
__attribute__((always_inline)) inline void with_tiles(const Plan& p, F&& f) {
  if (p.mh == 4) return f.template operator()<4, 2>();
  f.template operator()<2, 2>();
}

template <int W>
__attribute__((always_inline)) inline void input_transform_body(const Plan& p, const float* x, int64_t t0, int64_t t1,
                                                                float* v) {
  with_tiles(p, [&]<int MH, int MW>() __attribute__((always_inline)) {
    if constexpr (MH == kM)
      input_transform_patches<W>(p, x, t0, t1, v);
    else
      input_transform_carried<MH, MW, W>(p, x, t0, t1, v);
  });
}
template <int W>
__attribute__((always_inline)) inline void output_transform_body(const Plan& p, const float* mm, int64_t t0, int64_t t1,
                                                                 float* y, const Epilogue& ep, bool accumulate) {
  with_tiles(p, [&]<int MH, int MW>() __attribute__((always_inline)) {
    if (accumulate) return output_transform_tiles<MH, MW, W>(p, mm, t0, t1, y, ep, true);
    output_transform_tiles<MH, MW, W>(p, mm, t0, t1, y, ep, false);
  });
}
template <int W>
__attribute__((always_inline)) inline void gradient_transform_body(const Plan& p, const float* dy, int64_t t0,
                                                                   int64_t t1, float* z) {
  with_tiles(p, [&]<int MH, int MW>() __attribute__((always_inline)) {
    gradient_transform_tiles<MH, MW, W>(p, dy, t0, t1, z);
  });
}

AXON_CPU_DISPATCH(input_transform, (const Plan& p, const float* x, int64_t t0, int64_t t1, float* v),
                  (p, x, t0, t1, v))
AXON_CPU_DISPATCH(output_transform,
                  (const Plan& p, const float* mm, int64_t t0, int64_t t1, float* y, const Epilogue& ep,
                   bool accumulate),
                  (p, mm, t0, t1, y, ep, accumulate))
template <int W>
__attribute__((always_inline)) inline void pooled_output_transform_body(const Plan& p, const float* mm, int64_t t0,
                                                                        int64_t t1, const PooledOutput& out,
                                                                        const Epilogue& ep) {
  with_tiles(p, [&]<int MH, int MW>() __attribute__((always_inline)) {
    pooled_output_transform_tiles<MH, MW, W>(p, mm, t0, t1, out, ep);
  });
}
AXON_CPU_DISPATCH(pooled_output_transform,
                  (const Plan& p, const float* mm, int64_t t0, int64_t t1, const PooledOutput& out,
                   const Epilogue& ep),
                  (p, mm, t0, t1, out, ep))
template <int W>
__attribute__((always_inline)) inline void scatter_transform_body(const Plan& p, const float* nn, int64_t t0,
                                                                  int64_t t1, float* acc) {
  scatter_transform_tiles<kM, W>(p, nn, t0, t1, acc);
}
AXON_CPU_DISPATCH(scatter_transform, (const Plan& p, const float* nn, int64_t t0, int64_t t1, float* acc),
                  (p, nn, t0, t1, acc))
AXON_CPU_DISPATCH(gradient_transform, (const Plan& p, const float* dy, int64_t t0, int64_t t1, float* z),
                  (p, dy, t0, t1, z))
template <int W>
__attribute__((always_inline)) inline void pooled_gradient_transform_body(const Plan& p, const PooledGradient& pg,
                                                                          int64_t t0, int64_t t1, float* z) {
  pooled_gradient_transform_tiles<kM, W>(p, pg, t0, t1, z);
}
AXON_CPU_DISPATCH(pooled_gradient_transform,
                  (const Plan& p, const PooledGradient& pg, int64_t t0, int64_t t1, float* z), (p, pg, t0, t1, z))

// The output's gradient as a dense tensor or a PooledGradient.
struct Gradient {
  const float* dy;
  const PooledGradient* pooled;
  // p's tiles that can hold gradient: a 2x2 pooling's windows (F(2x2)'s
  // tiles) stop at its last pooled row and column.
  Plan live_in(const Plan& p) const { return pooled ? with_reach(p, pooled->ph * 2, pooled->pw * 2) : p; }
};
void transform_gradient(const Plan& p, const Gradient& g, int64_t t0, int64_t t1, float* z) {
  if (g.pooled != nullptr) return pooled_gradient_transform(p, *g.pooled, t0, t1, z);
  gradient_transform(p, g.dy, t0, t1, z);
}

// u[(q * c + ci) * oc + co] = (G g G^T)[q], g[kh][kw] = tap(kh, kw, ci, co),
// input channels shared among the pool's threads. Sixteen output channels
// at a time as one vector type, which this file's baseline build lowers to
// SSE2: the same multiplies and adds lane by lane as for one float (no FMA
// to contract into), so the bits do not depend on the blocking.
template <int MH, int MW, class Tap>
void filter_transform(CpuDevice& d, Tap tap, int64_t c, int64_t oc, float* u) {
  constexpr int AH = MH + 2, AW = MW + 2, L = 16;
  using V = simd::Vec<L>::f;
  auto lh = [](int i, int k) { return Matrices<MH>::g[i][k]; };
  auto lw = [](int i, int k) { return Matrices<MW>::g[i][k]; };
  auto one = [&](auto tag, int64_t ci, int64_t co, int lanes) {
    using T = decltype(tag);
    T g[3][3], o[AH][AW];
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw)
        for (int j = 0; j < lanes; ++j) reinterpret_cast<float*>(&g[kh][kw])[j] = tap(kh, kw, ci, co + j);
    sandwich<AH, AW>(lh, lw, g, o);
    for (int i = 0; i < AH; ++i)
      for (int j = 0; j < AW; ++j) {
        const float* lane = reinterpret_cast<const float*>(&o[i][j]);
        std::copy(lane, lane + lanes, u + ((i * AW + j) * c + ci) * oc + co);
      }
  };
  d.pool().for_ranges(c, 1, c * oc >= 1024, [&](int, int64_t b, int64_t e) {
    for (int64_t ci = b; ci < e; ++ci) {
      int64_t co = 0;
      for (; co + L <= oc; co += L) one(V{}, ci, co, L);
      for (; co < oc; ++co) one(0.0f, ci, co, 1);
    }
  });
}
// The same for p's tile form.
template <class Tap>
void filter_transform(CpuDevice& d, const Plan& p, Tap tap, int64_t c, int64_t oc, float* u) {
  with_tiles(p, [&]<int MH, int MW>() { filter_transform<MH, MW>(d, tap, c, oc, u); });
}

// The products of a chunk: y[rows, n] = a[rows, k] * b[k, n], and out[k, n]
// (+)= a^T * b' for b' [rows, n]. Baseline SSE2 broadcast loops lose to
// OpenBLAS at these sizes (as in conv.cpp), so there it is sgemm; both give
// the same bits for the same chunk, whatever the thread.
void product(const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* y) {
  if (rows == 0) return;
  if (simd::isa() == simd::Isa::base) return sgemm(false, false, rows, n, k, a, k, b, n, 0.0f, y, n);
  small_k_gemm(a, rows, k, b, n, y);
}
void product_tn(const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* out, bool accumulate) {
  if (rows == 0) {  // no live tiles: nothing to add (sgemm may leave out unset for k = 0)
    if (!accumulate) std::fill(out, out + k * n, 0.0f);
    return;
  }
  if (simd::isa() == simd::Isa::base)
    return sgemm(true, false, k, n, rows, a, k, b, n, accumulate ? 1.0f : 0.0f, out, n);
  small_k_gemm_tn(a, rows, k, b, n, out, accumulate);
}

// Tiles per chunk: its transformed inputs and outputs, points * tiles * (c +
// oc) floats, about 256 KiB, so they stay in L2 between transform and product.
int64_t chunk_tiles(const Plan& p) {
  return std::clamp<int64_t>((64 * 1024) / (p.points() * (p.c + p.oc)), 8, 256);
}

// Below this many multiply-adds a kernel runs on the calling thread alone.
constexpr int64_t kSerialMacs = 1 << 18;

// The convolution of x by the transformed filter u, each chunk's products
// handed to output(mm, t0, t1) (y = ep(...), or pooled).
template <class Output>
void convolve(CpuDevice& d, const Plan& p, const float* x, const float* u, Output output) {
  const int64_t tiles = p.tiles(), chunk = chunk_tiles(p), q_count = p.points();
  const bool parallel = tiles * q_count * p.c * p.oc >= kSerialMacs;
  const size_t floats = static_cast<size_t>(q_count * (point_stride(chunk, p.c) + point_stride(chunk, p.oc)));
  d.pool().for_tapered_ranges(tiles, chunk, parallel, [&](int t, int64_t, int64_t t0, int64_t t1) {
    const int64_t rows = p.live(t0, t1), sv = point_stride(rows, p.c), sm = point_stride(rows, p.oc);
    float* v = d.scratch(t, floats);
    float* mm = v + q_count * sv;
    input_transform(p, x, t0, t1, v);
    for (int64_t q = 0; q < q_count; ++q) product(v + q * sv, rows, p.c, u + q * p.c * p.oc, p.oc, mm + q * sm);
    output(mm, t0, t1);
  });
}

// The products of the filter gradient go to this many partial sums at most
// (a whole number of chunks each, fixed by the shapes), added in order.
constexpr int64_t kGradientGroups = 16;

// Whether the input gradient runs as the adjoint of the forward's tiles
// (adjoint_backprop_input) rather than as the convolution of dy with the
// turned filter: where that one needs more tiles (an unpadded convolution's
// input gradient is the convolution of dy padded by 2 on each side: 7 x 7
// tiles for the CNN's conv2, whose forward has 6 x 6) and an image's tiles
// fit a thread's scratch.
constexpr int64_t kAdjointTiles = 256;
bool adjoint_input_gradient(const ConvGeometry& g) {
  const int64_t forward = ((g.oh + kM - 1) / kM) * ((g.ow + kM - 1) / kM);
  const int64_t turned = ((g.h + kM - 1) / kM) * ((g.w + kM - 1) / kM);
  return forward < turned && forward <= kAdjointTiles;
}

// dx by the adjoint of the forward's tiles, an image per task: Z = A dy A^T
// per tile, N_q[tiles, C] = Z_q[tiles, OC] * U_q^T (the forward's transformed
// filter, stored [OC, C] per point), and each tile's B N B^T added into the
// image's input gradient in tile order (patches of neighbouring tiles
// overlap), so every value has one order of sums whatever the thread count.
void adjoint_backprop_input(CpuDevice& d, const ConvGeometry& g, const Gradient& dy, const float* w, float* dx,
                            bool accumulate) {
  const Plan p = dy.live_in(make_plan(g.n, g.h, g.w, g.c, g.oh, g.ow, g.oc, g.pad_h, g.pad_w));
  const int64_t c = g.c, oc = g.oc, q_count = p.points(), per_image = p.th * p.tw, live = p.lh * p.lw;
  float* ut = d.partials(static_cast<size_t>(q_count * c * oc));
  auto tap = [&](int kh, int kw, int64_t o, int64_t ci) { return w[((kh * 3 + kw) * c + ci) * oc + o]; };
  filter_transform(d, p, tap, oc, c, ut);
  const int64_t sz = point_stride(live, oc), sn = point_stride(live, c);
  const int64_t wa = p.tw * kM + 2, ha = p.th * kM + 2, reach = std::clamp<int64_t>(wa - p.pad_l, 0, g.w);
  const size_t floats = static_cast<size_t>(q_count * (sz + sn) + ha * wa * c);
  const bool parallel = g.n * per_image * q_count * c * oc >= kSerialMacs;
  d.pool().for_ranges(g.n, 1, parallel, [&](int t, int64_t b, int64_t e) {
    float* z = d.scratch(t, floats);
    float* nn = z + q_count * sz;
    float* acc = nn + q_count * sn;
    for (int64_t n = b; n < e; ++n) {
      const int64_t t0 = n * per_image, t1 = t0 + per_image;
      transform_gradient(p, dy, t0, t1, z);
      for (int64_t q = 0; q < q_count; ++q) product(z + q * sz, live, oc, ut + q * oc * c, c, nn + q * sn);
      std::fill(acc, acc + ha * wa * c, 0.0f);
      scatter_transform(p, nn, t0, t1, acc);
      // dx's pixel (ih, iw) is acc's (ih + pad_t, iw + pad_l); pixels no tile
      // reaches get 0 (accumulating: + 0, as AddN would add it).
      float* out = dx + n * g.h * g.w * c;
      for (int64_t ih = 0; ih < g.h; ++ih) {
        float* row = out + ih * g.w * c;
        const int64_t ia = ih + p.pad_t, got = ia < ha ? reach : 0;
        const float* from = got > 0 ? acc + (ia * wa + p.pad_l) * c : acc;
        if (accumulate) {
          for (int64_t i = 0; i < got * c; ++i) row[i] += from[i];
          for (int64_t i = got * c; i < g.w * c; ++i) row[i] += 0.0f;
          continue;
        }
        if (got > 0) std::copy(from, from + got * c, row);
        std::fill(row + got * c, row + g.w * c, 0.0f);
      }
    }
  });
}

}  // namespace

// Measured on one thread, batch 64, AVX-512 (plugins/cpu/README.md has the
// figures): F(2x2, 3x3) runs the ResNet's 3x3 layers (16-64 channels, 28x28
// to 7x7 SAME) 1.3-1.9x faster than im2col in all three passes, and the
// guide CNN's conv2 (32 -> 64 channels, 11x11 VALID output) 1.3x faster
// forward and in the filter gradient; its input gradient, as the adjoint
// of the forward's 6x6 tiles, 1.5-1.6x (the turned convolution of dy padded
// by 2 needs 7x7 tiles and lost: 0.85x). It loses where the tiles waste
// much: the CNN's conv3 (a 3x3 output in four 2x2 tiles: 0.4-0.6x). AVX2 and the baseline
// gain alike at the ResNet's shapes (1.3-1.9x). Fewer than 16 channels
// were not measured faster (the transforms would run a few floats at a
// time); the channel product cap keeps the transformed filter (16 C OC
// floats) small. Tiles of 4x2 (tile_height) ran the forward and the input
// gradient of 28x28x16 -> 16 and 7x7x64 -> 64 another 11-13% faster, and
// the filter gradient of 28x28x16 -> 16 11% (two threads, AVX-512 EPYC).
bool use_winograd(const ConvGeometry& g, ConvPass pass) {
  if (g.kh != 3 || g.kw != 3 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1) return false;
  if (g.c < 16 || g.oc < 16 || g.c * g.oc > (int64_t{1} << 20)) return false;
  if (g.n == 0 || g.oh < 7 || g.ow < 7) return false;
  return pass != ConvPass::input_gradient || (g.pad_h_total > 0 && g.pad_w_total > 0) || adjoint_input_gradient(g);
}

namespace {

// Rows of the tiles for an output of `rows` rows: F(4x2, 3x3) needs a
// quarter fewer products and transform points per output than F(2x2), where
// its tiles cover no more rows (28x28x16 -> 16 at batch 64: 11% faster in
// either pass; 14 rows in 4 tiles of 4 ran 5% slower than in 7 of 2).
constexpr int kRows = 4;
int tile_height(int64_t rows) { return (rows + kRows - 1) / kRows * kRows <= (rows + 1) / 2 * 2 ? kRows : kM; }

// The forward's filter transformed for p's tiles, U_q[C, OC] per point, in d's partials.
const float* forward_filter(CpuDevice& d, const Plan& p, const ConvGeometry& g, const float* w) {
  float* u = d.partials(static_cast<size_t>(p.points() * g.c * g.oc));
  const int64_t c = g.c, oc = g.oc;
  auto tap = [&](int kh, int kw, int64_t ci, int64_t co) { return w[((kh * 3 + kw) * c + ci) * oc + co]; };
  filter_transform(d, p, tap, c, oc, u);
  return u;
}

}  // namespace

void winograd_conv2d(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, float* y,
                     const Epilogue& ep, const OutputReach& reach) {
  const Plan p = with_reach(make_plan(g.n, g.h, g.w, g.c, g.oh, g.ow, g.oc, g.pad_h, g.pad_w, tile_height(g.oh)),
                            reach.rows < 0 ? g.oh : reach.rows, reach.cols < 0 ? g.ow : reach.cols);
  const float* u = forward_filter(d, p, g, w);
  convolve(d, p, x, u,
           [&](const float* mm, int64_t t0, int64_t t1) { output_transform(p, mm, t0, t1, y, ep, false); });
}

bool winograd_pools_output(const ConvGeometry& g, const PoolGeometry& pool) {
  return tiles_may_be_skipped() && use_winograd(g, ConvPass::forward) && pool.kh == 2 && pool.kw == 2 &&
         pool.sh == 2 && pool.sw == 2 && pool.pad_h_total == 0 && pool.pad_w_total == 0;
}
void winograd_conv2d_max_pool(CpuDevice& d, const ConvGeometry& g, const float* x, const float* w, const Epilogue& ep,
                              const PooledOutput& out) {
  const Plan p =
      with_reach(make_plan(g.n, g.h, g.w, g.c, g.oh, g.ow, g.oc, g.pad_h, g.pad_w, tile_height(g.oh)), out.ph * 2,
                 out.pw * 2);
  const float* u = forward_filter(d, p, g, w);
  convolve(d, p, x, u,
           [&](const float* mm, int64_t t0, int64_t t1) { pooled_output_transform(p, mm, t0, t1, out, ep); });
}

void winograd_backprop_input(CpuDevice& d, const ConvGeometry& g, const float* dy, const float* w, float* dx,
                             bool accumulate) {
  if (adjoint_input_gradient(g)) return adjoint_backprop_input(d, g, Gradient{dy, nullptr}, w, dx, accumulate);
  // dx[ih] = sum over kh of dy[ih + pad_h - kh] w[kh]: the convolution of dy
  // with w[2 - kh] from row 2 - pad_h before dx's first.
  const Plan p = make_plan(g.n, g.oh, g.ow, g.oc, g.h, g.w, g.c, 2 - g.pad_h, 2 - g.pad_w, tile_height(g.h));
  float* u = d.partials(static_cast<size_t>(p.points() * g.c * g.oc));
  const int64_t c = g.c, oc = g.oc;
  auto tap = [&](int kh, int kw, int64_t o, int64_t ci) { return w[(((2 - kh) * 3 + 2 - kw) * c + ci) * oc + o]; };
  filter_transform(d, p, tap, oc, c, u);
  convolve(d, p, dy, u,
           [&](const float* mm, int64_t t0, int64_t t1) { output_transform(p, mm, t0, t1, dx, {}, accumulate); });
}

namespace {

// Transform points of a tile at most, F(4x2)'s.
constexpr int kMaxPoints = (kRows + 2) * (kM + 2);
// The filter gradient takes tiles of 4x2 (tile_height) from a dense dy of
// at least this many rows, else 2x2. Its rounding follows the tiles'
// magnitudes while S shrinks with dy's zeros: with 90% of dy zero at
// random, F(4x2) kept within 5.4 u S from 16 rows on (four draws of the
// kernel tests' data), but reached 7.6 at 12 rows and 9-13.5 at 7 and 8
// (F(2x2): 4.4 at most); from a pooled dy 15.5, so that keeps 2x2 tiles.
constexpr int64_t kGradientRows4x2 = 16;

// dw[(kh * 3 + kw) * size + i] = (G_h^T S G_w)[kh][kw] for i in [0, len), S_q
// at sum[q * block + i]. Sixteen at a time as one vector type (SSE2 in this
// file's build, as filter_transform): the same operations lane by lane as one float.
template <int MH, int MW>
void inverse_filter_transform(const float* sum, int64_t block, int64_t len, float* dw, int64_t size) {
  constexpr int AH = MH + 2, AW = MW + 2;
  auto inverse = [&](auto tag, int64_t i) {
    using T = decltype(tag);
    T t[AH][AW], o[3][3];
    for (int q = 0; q < AH * AW; ++q) std::memcpy(&t[q / AW][q % AW], sum + q * block + i, sizeof(T));
    auto gh = [](int k, int q) { return Matrices<MH>::g[q][k]; };
    auto gw = [](int k, int q) { return Matrices<MW>::g[q][k]; };
    sandwich<3, 3>(gh, gw, t, o);
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw) std::memcpy(dw + (kh * 3 + kw) * size + i, &o[kh][kw], sizeof(T));
  };
  int64_t i = 0;
  for (; i + 16 <= len; i += 16) inverse(simd::Vec<16>::f{}, i);
  for (; i < len; ++i) inverse(0.0f, i);
}

void backprop_filter(CpuDevice& d, const ConvGeometry& g, const float* x, const Gradient& dy, float* dw) {
  // Chunks and groups in the whole grid's numbering, so skipping the tiles
  // without gradient leaves every sum's terms in the same order.
  const int mh = dy.pooled == nullptr && g.oh >= kGradientRows4x2 ? tile_height(g.oh) : kM;
  const Plan p = dy.live_in(make_plan(g.n, g.h, g.w, g.c, g.oh, g.ow, g.oc, g.pad_h, g.pad_w, mh));
  const int64_t tiles = p.tiles(), chunk = chunk_tiles(p), q_count = p.points(), size = g.c * g.oc;
  const int64_t group = (tiles + kGradientGroups * chunk - 1) / (kGradientGroups * chunk) * chunk;
  const int64_t groups = (tiles + group - 1) / group;
  const bool parallel = tiles * q_count * size >= kSerialMacs;
  float* partials = d.partials(static_cast<size_t>(groups * q_count * size));
  const size_t floats = static_cast<size_t>(q_count * (point_stride(chunk, p.c) + point_stride(chunk, p.oc)));
  d.pool().for_ranges(tiles, group, parallel, [&](int t, int64_t g0, int64_t g1) {
    float* s = partials + g0 / group * q_count * size;
    float* v = d.scratch(t, floats);
    for (int64_t t0 = g0; t0 < g1; t0 += chunk) {
      const int64_t t1 = std::min(g1, t0 + chunk), rows = p.live(t0, t1);
      const int64_t sv = point_stride(rows, p.c), sz = point_stride(rows, p.oc);
      float* z = v + q_count * sv;
      input_transform(p, x, t0, t1, v);
      transform_gradient(p, dy, t0, t1, z);
      for (int64_t q = 0; q < q_count; ++q)
        product_tn(v + q * sv, rows, p.c, z + q * sz, p.oc, s + q * size, t0 > g0);
    }
  });
  // dW = G^T S G per (ci, co), S the groups' sums added in order: a block of
  // (ci, co) at a time, each sum a contiguous (vectorised) pass.
  constexpr int64_t kBlock = 256;
  d.pool().for_ranges(size, kBlock, parallel, [&](int, int64_t b, int64_t e) {
    float sum[kMaxPoints * kBlock];
    const int64_t len = e - b;
    for (int64_t q = 0; q < q_count; ++q) {
      float* acc = sum + q * kBlock;
      const float* first = partials + q * size + b;
      for (int64_t i = 0; i < len; ++i) acc[i] = first[i];
      for (int64_t gi = 1; gi < groups; ++gi) {
        const float* part = partials + (gi * q_count + q) * size + b;
        for (int64_t i = 0; i < len; ++i) acc[i] += part[i];
      }
    }
    with_tiles(p, [&]<int MH, int MW>() { inverse_filter_transform<MH, MW>(sum, kBlock, len, dw + b, size); });
  });
}

}  // namespace

void winograd_backprop_filter(CpuDevice& d, const ConvGeometry& g, const float* x, const float* dy, float* dw) {
  backprop_filter(d, g, x, Gradient{dy, nullptr}, dw);
}

bool winograd_takes_pooled_gradient(const ConvGeometry& g, bool input_gradient) {
  return tiles_may_be_skipped() && use_winograd(g, ConvPass::filter_gradient) &&
         (!input_gradient || adjoint_input_gradient(g));
}
void winograd_backprop_filter(CpuDevice& d, const ConvGeometry& g, const float* x, const PooledGradient& dy,
                              float* dw) {
  backprop_filter(d, g, x, Gradient{nullptr, &dy}, dw);
}
void winograd_backprop_input(CpuDevice& d, const ConvGeometry& g, const PooledGradient& dy, const float* w,
                             float* dx) {
  adjoint_backprop_input(d, g, Gradient{nullptr, &dy}, w, dx, false);
}

}  // namespace axon::cpu
