#include "small_gemm.hpp"

#include "simd.hpp"

#include <algorithm>
#include <utility>

namespace axon::cpu {
namespace {

// Columns [c0, c0 + NV*W) of y, R rows at a time: R*NV independent
// accumulators keep the FMA pipes busy (one chain would wait on latency).
template <int W, int NV, int R, class A>
__attribute__((always_inline)) inline void nn_rows(const A& a, int64_t r0, int64_t k, const float* b, int64_t n, float* y,
                                                   int64_t c0, const Epilogue& ep) {
  using F = typename simd::Vec<W>::f;
  F acc[R][NV] = {};
  for (int64_t p = 0; p < k; ++p) {
    F bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = simd::load<F>(b + p * n + c0 + j * W);
    for (int i = 0; i < R; ++i) {
      const F s = simd::broadcast<F>(a.at(r0 + i, p));
      for (int j = 0; j < NV; ++j) acc[i][j] += s * bv[j];
    }
  }
  if (ep.bias != nullptr)
    for (int j = 0; j < NV; ++j) {
      const F bj = simd::load<F>(ep.bias + c0 + j * W);
      for (int i = 0; i < R; ++i) acc[i][j] += bj;
    }
  if (ep.relu)
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < NV; ++j) acc[i][j] = acc[i][j] > F{} ? acc[i][j] : F{};  // NaN -> 0, as Relu
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < NV; ++j) simd::store<F>(y + (r0 + i) * n + c0 + j * W, acc[i][j]);
}

template <int W, int NV, class A>
__attribute__((always_inline)) inline void nn_block(const A& a, int64_t rows, int64_t k, const float* b, int64_t n,
                                                    float* y, int64_t c0, const Epilogue& ep) {
  constexpr int R = std::min(12, simd::kAccumulators<W> / NV);
  int64_t r = 0;
  for (; r + R <= rows; r += R) nn_rows<W, NV, R, A>(a, r, k, b, n, y, c0, ep);
  if (R > 4 && r + 4 <= rows) nn_rows<W, NV, 4, A>(a, r, k, b, n, y, c0, ep), r += 4;
  if (R > 2 && r + 2 <= rows) nn_rows<W, NV, 2, A>(a, r, k, b, n, y, c0, ep), r += 2;
  for (; r < rows; ++r) nn_rows<W, NV, 1, A>(a, r, k, b, n, y, c0, ep);
}

inline float epilogue1(float v, const Epilogue& ep, int64_t col) {
  if (ep.bias != nullptr) v += ep.bias[col];
  if (ep.relu) v = v > 0.0f ? v : 0.0f;
  return v;
}

template <int W, class A>
__attribute__((always_inline)) inline void nn(const A& a, int64_t rows, int64_t k, const float* b, int64_t n, float* y,
                                              const Epilogue& ep) {
  int64_t c0 = 0;
  for (; c0 + 4 * W <= n; c0 += 4 * W) nn_block<W, 4, A>(a, rows, k, b, n, y, c0, ep);
  if (c0 + 2 * W <= n) nn_block<W, 2, A>(a, rows, k, b, n, y, c0, ep), c0 += 2 * W;
  if (c0 + W <= n) nn_block<W, 1, A>(a, rows, k, b, n, y, c0, ep), c0 += W;
  // Narrow outputs (n % W columns left) in half and quarter-width vectors.
  if constexpr (W >= 8)
    if (c0 + W / 2 <= n) nn_block<W / 2, 1, A>(a, rows, k, b, n, y, c0, ep), c0 += W / 2;
  if constexpr (W >= 16)
    if (c0 + W / 4 <= n) nn_block<W / 4, 1, A>(a, rows, k, b, n, y, c0, ep), c0 += W / 4;
  for (; c0 < n; ++c0)  // the last few columns
    for (int64_t r = 0; r < rows; ++r) {
      float s = 0.0f;
      for (int64_t p = 0; p < k; ++p) s += *a.at(r, p) * b[p * n + c0];
      y[r * n + c0] = epilogue1(s, ep, c0);
    }
}

// Rows [p0, p0 + P) of out, columns [c0, c0 + NV*W): sums over all rows of a
// and b, P*NV independent accumulators; each b vector is loaded once for P rows.
template <int W, int NV, int P, class A>
__attribute__((always_inline)) inline void tn_block(const A& a, int64_t rows, const float* b, int64_t n, float* out,
                                                    int64_t p0, int64_t c0, bool accumulate) {
  using F = typename simd::Vec<W>::f;
  F acc[P][NV] = {};
  if (accumulate)
    for (int i = 0; i < P; ++i)
      for (int j = 0; j < NV; ++j) acc[i][j] = simd::load<F>(out + (p0 + i) * n + c0 + j * W);
  for (int64_t r = 0; r < rows; ++r) {
    F bv[NV];
    for (int j = 0; j < NV; ++j) bv[j] = simd::load<F>(b + r * n + c0 + j * W);
    for (int i = 0; i < P; ++i) {
      const F s = simd::broadcast<F>(a.at(r, p0 + i));
      for (int j = 0; j < NV; ++j) acc[i][j] += s * bv[j];
    }
  }
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < NV; ++j) simd::store<F>(out + (p0 + i) * n + c0 + j * W, acc[i][j]);
}

// tn_block with P = rest (1 <= rest < sizeof...(Ps)), chosen at run time.
template <int W, int NV, class A, int... Ps>
__attribute__((always_inline)) inline void tn_rest(const A& a, int64_t rows, const float* b, int64_t n, float* out,
                                                   int64_t p0, int64_t c0, bool accumulate, int rest,
                                                   std::integer_sequence<int, Ps...>) {
  ((Ps > 0 && Ps == rest ? (tn_block<W, NV, (Ps > 0 ? Ps : 1), A>(a, rows, b, n, out, p0, c0, accumulate), 0) : 0),
   ...);
}

template <int W, int NV, class A>
__attribute__((always_inline)) inline void tn_columns(const A& a, int64_t rows, int64_t k, const float* b, int64_t n,
                                                      float* out, int64_t c0, bool accumulate) {
  constexpr int P = std::min(12, simd::kAccumulators<W> / NV);
  int64_t p = 0;
  for (; p + P <= k; p += P) tn_block<W, NV, P, A>(a, rows, b, n, out, p, c0, accumulate);
  // The rest in one block of exactly k - p rows of out: every block is a pass
  // over all rows of a and b, and for small K (9 for a 3x3 filter on a grey
  // image) those rows are megabytes, so a second pass costs more than the FMAs.
  if (p < k)
    tn_rest<W, NV, A>(a, rows, b, n, out, p, c0, accumulate, static_cast<int>(k - p), std::make_integer_sequence<int, P>{});
}

template <int W, class A>
__attribute__((always_inline)) inline void tn_tile(const A& a, int64_t rows, int64_t k, const float* b, int64_t n,
                                                   float* out, bool accumulate) {
  int64_t c0 = 0;
  for (; c0 + 4 * W <= n; c0 += 4 * W) tn_columns<W, 4, A>(a, rows, k, b, n, out, c0, accumulate);
  if (c0 + 2 * W <= n) tn_columns<W, 2, A>(a, rows, k, b, n, out, c0, accumulate), c0 += 2 * W;
  if (c0 + W <= n) tn_columns<W, 1, A>(a, rows, k, b, n, out, c0, accumulate), c0 += W;
  if constexpr (W >= 8)
    if (c0 + W / 2 <= n) tn_columns<W / 2, 1, A>(a, rows, k, b, n, out, c0, accumulate), c0 += W / 2;
  if constexpr (W >= 16)
    if (c0 + W / 4 <= n) tn_columns<W / 4, 1, A>(a, rows, k, b, n, out, c0, accumulate), c0 += W / 4;
  for (; c0 < n; ++c0)
    for (int64_t p = 0; p < k; ++p) {
      float s = accumulate ? out[p * n + c0] : 0.0f;
      for (int64_t r = 0; r < rows; ++r) s += *a.at(r, p) * b[r * n + c0];
      out[p * n + c0] = s;
    }
}

// Rows in tiles whose b rows (16 KiB) stay in L1 across the K / P passes
// over them; the sums carry from tile to tile through out, exactly (a float
// stored and reloaded is the same float), so the result does not depend on
// the tiling. (Measured, batch 64, three A/B runs: the first conv layer's
// Conv2DBackpropFilter 0.21-0.27 -> 0.13-0.18 ms; the K = 288 and 576 layers
// unchanged within the noise; 32 KiB tiles alike.)
template <int W, class A>
__attribute__((always_inline)) inline void tn(const A& a, int64_t rows, int64_t k, const float* b, int64_t n, float* out) {
  const int64_t tile = std::max<int64_t>(16, 4096 / std::max<int64_t>(n, 1));
  int64_t r0 = 0;
  do {
    const int64_t r1 = std::min(rows, r0 + tile);
    tn_tile<W>(a.from(r0), r1 - r0, k, b + r0 * n, n, out, r0 > 0);
    r0 = r1;
  } while (r0 < rows);
}

// A dense row-major [rows, k] matrix, or rows gathered from an image.
struct Dense {
  const float* a;
  int64_t k;
  const float* at(int64_t r, int64_t p) const { return a + r * k + p; }
  Dense from(int64_t r) const { return {a + r * k, k}; }  // rows r...
};
struct Gathered {
  Gather g;
  const float* at(int64_t r, int64_t p) const { return g.x + g.base[r] + g.off[p]; }
  Gathered from(int64_t r) const { return {Gather{g.x, g.base + r, g.off}}; }
};

template <int W>
__attribute__((always_inline)) inline void small_k_gemm_body(const float* a, int64_t rows, int64_t k, const float* b,
                                                              int64_t n, float* y, const Epilogue& ep) {
  nn<W>(Dense{a, k}, rows, k, b, n, y, ep);
}
template <int W>
__attribute__((always_inline)) inline void small_k_gemm_tn_body(const float* a, int64_t rows, int64_t k, const float* b,
                                                                 int64_t n, float* out) {
  tn<W>(Dense{a, k}, rows, k, b, n, out);
}
template <int W>
__attribute__((always_inline)) inline void small_k_conv_body(const Gather& a, int64_t rows, int64_t k, const float* b,
                                                              int64_t n, float* y, const Epilogue& ep) {
  nn<W>(Gathered{a}, rows, k, b, n, y, ep);
}

template <int W>
__attribute__((always_inline)) inline void apply_epilogue_body(float* y, int64_t rows, int64_t n, const Epilogue& ep) {
  using F = typename simd::Vec<W>::f;
  if (!ep.any()) return;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * n;
    int64_t c = 0;
    for (; c + W <= n; c += W) {
      F v = simd::load<F>(row + c);
      if (ep.bias != nullptr) v += simd::load<F>(ep.bias + c);
      if (ep.relu) v = v > F{} ? v : F{};
      simd::store<F>(row + c, v);
    }
    for (; c < n; ++c) row[c] = epilogue1(row[c], ep, c);
  }
}
template <int W>
__attribute__((always_inline)) inline void small_k_conv_tn_body(const Gather& a, int64_t rows, int64_t k, const float* b,
                                                                 int64_t n, float* out) {
  tn<W>(Gathered{a}, rows, k, b, n, out);
}

}  // namespace

AXON_CPU_DISPATCH(small_k_gemm,
                  (const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* y, const Epilogue& ep),
                  (a, rows, k, b, n, y, ep))

AXON_CPU_DISPATCH(small_k_gemm_tn, (const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* out),
                  (a, rows, k, b, n, out))

AXON_CPU_DISPATCH(small_k_conv,
                  (const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* y, const Epilogue& ep),
                  (a, rows, k, b, n, y, ep))

AXON_CPU_DISPATCH(apply_epilogue, (float* y, int64_t rows, int64_t n, const Epilogue& ep), (y, rows, n, ep))

AXON_CPU_DISPATCH(small_k_conv_tn, (const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* out),
                  (a, rows, k, b, n, out))

}  // namespace axon::cpu
