#include "small_gemm.hpp"

#include "simd.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace axon::cpu {
namespace {

// The left matrix a[rows, k], dense or gathered from an image. Its rows come
// in taps() runs of run() contiguous floats (dense: one run of k; gathered: a
// filter row's KW*C floats, or a tap's C where columns are dilated), so
// nn_rows keeps one pointer per row and steps through a run with one shared
// index: no address arithmetic per row and value (measured: a 3x3
// convolution of 16 channels into 16, 1.6 -> 1.3 ms at batch 64 on one
// thread). Short runs (a 3x3 filter over a grey image: 3 floats) go value by
// value through the tap offsets instead (at()); the transposed product (tn)
// reads a block of P values of one run through one pointer per row too.
// K > 0 fixes the row length when compiling (the Winograd products of 32
// channels): a block's rows then lie at fixed offsets from its first, so one
// pointer reaches them all where a run-time length takes one per row
// (axon-bench-products, 32 x 32 over 64 rows: 129 -> 140 GFLOP/s, the best
// of 8 alternated runs; 64 channels gained nothing).
template <int K = 0>
struct DenseRows {
  const float* a;
  int64_t k = K;
  int64_t len() const { return K > 0 ? K : k; }
  int64_t taps() const { return 1; }
  int64_t run() const { return len(); }
  const float* row(int64_t r, int64_t) const { return a + r * len(); }
  const float* at(int64_t r, int64_t p) const { return a + r * len() + p; }
  DenseRows from(int64_t r) const { return {a + r * len(), k}; }  // rows r...
};
using Dense = DenseRows<>;
struct Gathered {
  Gather g;
  int64_t taps() const { return g.run > 0 ? g.k / g.run : 0; }
  int64_t run() const { return g.run; }
  const float* row(int64_t r, int64_t t) const { return g.row[r] + g.off[t * g.run]; }
  const float* at(int64_t r, int64_t p) const { return g.row[r] + g.off[p]; }
  Gathered from(int64_t r) const { return {Gather{g.row + r, g.off, g.k, g.run}}; }
};

// Runs shorter than this go value by value.
constexpr int64_t kMinRun = 8;

// The epilogue on R x NV accumulators, then their store into y's rows
// [r0, r0 + R), columns from c0.
template <int W, int NV, int R, class F>
__attribute__((always_inline)) inline void finish_rows(F (&acc)[R][NV], int64_t r0, int64_t n, float* y, int64_t c0,
                                                       const Epilogue& ep) {
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

// Columns [c0, c0 + NV*W) of y, R rows at a time: R*NV independent
// accumulators keep the FMA pipes busy (one chain would wait on latency).
// Every y value is its products summed in p order, whatever the blocking.
template <int W, int NV, int R, class A>
__attribute__((always_inline)) inline void nn_rows(const A& a, int64_t r0, int64_t k, const float* b, int64_t n, float* y,
                                                   int64_t c0, const Epilogue& ep) {
  using F = typename simd::Vec<W>::f;
  F acc[R][NV] = {};
  const int64_t run = a.run();
  if (run >= kMinRun) {
    const float* bp = b + c0;
    for (int64_t t = 0, taps = a.taps(); t < taps; ++t) {
      const float* q[R];
      for (int i = 0; i < R; ++i) q[i] = a.row(r0 + i, t);
      for (int64_t ci = 0; ci < run; ++ci, bp += n) {
        F bv[NV];
        for (int j = 0; j < NV; ++j) bv[j] = simd::load<F>(bp + j * W);
        for (int i = 0; i < R; ++i) {
          if constexpr (NV == 1) {
            acc[i][0] = simd::fma_broadcast<F>(acc[i][0], q[i] + ci, bv[0]);
          } else {
            const F s = simd::broadcast<F>(q[i] + ci);
            for (int j = 0; j < NV; ++j) acc[i][j] += s * bv[j];
          }
        }
      }
    }
  } else {
    for (int64_t p = 0; p < k; ++p) {
      F bv[NV];
      for (int j = 0; j < NV; ++j) bv[j] = simd::load<F>(b + p * n + c0 + j * W);
      for (int i = 0; i < R; ++i) {
        const F s = simd::broadcast<F>(a.at(r0 + i, p));
        for (int j = 0; j < NV; ++j) acc[i][j] += s * bv[j];
      }
    }
  }
  finish_rows<W, NV, R>(acc, r0, n, y, c0, ep);
}

// Rows per block: with one vector per row, 8 (the row pointers and the loop
// need the general registers: 12 spill them, measured 20% slower).
template <int W, int NV>
constexpr int kRowsPerBlock = NV == 1 ? 8 : std::min(12, simd::kAccumulators<W> / NV);

template <int W, int NV, class A>
__attribute__((always_inline)) inline void nn_block(const A& a, int64_t rows, int64_t k, const float* b, int64_t n,
                                                    float* y, int64_t c0, const Epilogue& ep) {
  constexpr int R = kRowsPerBlock<W, NV>;
  int64_t r = 0;
  for (; r + R <= rows; r += R) nn_rows<W, NV, R, A>(a, r, k, b, n, y, c0, ep);
  if (R > 4 && r + 4 <= rows) nn_rows<W, NV, 4, A>(a, r, k, b, n, y, c0, ep), r += 4;
  if (R > 2 && r + 2 <= rows) nn_rows<W, NV, 2, A>(a, r, k, b, n, y, c0, ep), r += 2;
  for (; r < rows; ++r) nn_rows<W, NV, 1, A>(a, r, k, b, n, y, c0, ep);
}

// A dense a with k = 16 against 16 columns of b at a time (AVX-512: the
// Winograd products of 16 channels into 16): the 16 vectors of b stay in
// registers across all rows, so a multiply-add loads only its broadcast
// value, where nn_rows loads a vector of b per 8 of them. The same sums in
// the same order. (axon-bench-products, 16 x 16 over 128 rows on one core
// of an AVX-512 Xeon, the best of 8 alternated runs: 109 -> 135 GFLOP/s;
// on an AVX-512 EPYC, the broadcast folded into the multiply-add
// (fma_broadcast): 82 -> 111.)
constexpr int kRegisterK = 16;  // the k this path takes: b's rows, a's row length
template <int W, int R>
__attribute__((always_inline)) inline void k16_rows(const float* a, int64_t r0, const typename simd::Vec<W>::f (&bv)[16],
                                                    int64_t n, float* y, int64_t c0, const Epilogue& ep) {
  using F = typename simd::Vec<W>::f;
  F acc[R][1] = {};
  const float* q = a + r0 * kRegisterK;
#pragma GCC unroll 16
  for (int p = 0; p < kRegisterK; ++p)
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) acc[i][0] = simd::fma_broadcast<F>(acc[i][0], q + i * kRegisterK + p, bv[p]);
  finish_rows<W, 1, R>(acc, r0, n, y, c0, ep);
}
template <int W>
__attribute__((always_inline)) inline void nn_k16(const float* a, int64_t rows, const float* b, int64_t n, float* y,
                                                  const Epilogue& ep) {
  using F = typename simd::Vec<W>::f;
  for (int64_t c0 = 0; c0 < n; c0 += W) {
    F bv[kRegisterK];
    for (int p = 0; p < kRegisterK; ++p) bv[p] = simd::load<F>(b + p * n + c0);
    int64_t r = 0;
    for (; r + 12 <= rows; r += 12) k16_rows<W, 12>(a, r, bv, n, y, c0, ep);
    if (r + 4 <= rows) k16_rows<W, 4>(a, r, bv, n, y, c0, ep), r += 4;
    if (r + 2 <= rows) k16_rows<W, 2>(a, r, bv, n, y, c0, ep), r += 2;
    for (; r < rows; ++r) k16_rows<W, 1>(a, r, bv, n, y, c0, ep);
  }
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
  // AVX-512: the vectors left (up to 3) as blocks of one, whose multiply-adds
  // take a's value as an embedded broadcast (fma_broadcast): 32 x 32 over 64
  // rows 93-96 -> 105 GFLOP/s (axon-bench-products, one core of an AVX-512
  // EPYC); the transposed product gained nothing so, nor did 4 vectors.
  // But two vectors of a gathered a (a convolution into 32 channels) stay
  // one block of 12 rows: a gathers its rows once, not once a vector, and a
  // Xeon's two multiply-add pipes get 24 chains, not 8 (the ResNet's
  // 28x28x16 -> 32 at stride 2, two threads of an AVX-512 Xeon: 530 -> 460
  // us, axon-bench-layers).
  constexpr bool gathered = std::is_same_v<A, Gathered>;
  if constexpr (W == 16)
    if (!(gathered && c0 + 2 * W == n))
      for (; c0 + W <= n; c0 += W) nn_block<W, 1, A>(a, rows, k, b, n, y, c0, ep);
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
// Contiguous: columns [p0, p0 + P) of a lie in one run, so a row's P values
// are read through one pointer (one load per FMA, not an offset and a value).
template <int W, int NV, int P, class A, bool Contiguous>
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
    [[maybe_unused]] const float* q = Contiguous ? a.at(r, p0) : nullptr;
    for (int i = 0; i < P; ++i) {
      const float* at = Contiguous ? q + i : a.at(r, p0 + i);
      if constexpr (NV == 1) {
        acc[i][0] = simd::fma_broadcast<F>(acc[i][0], at, bv[0]);
      } else {
        const F s = simd::broadcast<F>(at);
        for (int j = 0; j < NV; ++j) acc[i][j] += s * bv[j];
      }
    }
  }
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < NV; ++j) simd::store<F>(out + (p0 + i) * n + c0 + j * W, acc[i][j]);
}

// tn_block with P = rest (1 <= rest < sizeof...(Ps)), chosen at run time.
template <int W, int NV, class A, bool Contiguous, int... Ps>
__attribute__((always_inline)) inline void tn_rest(const A& a, int64_t rows, const float* b, int64_t n, float* out,
                                                   int64_t p0, int64_t c0, bool accumulate, int rest,
                                                   std::integer_sequence<int, Ps...>) {
  ((Ps > 0 && Ps == rest
        ? (tn_block<W, NV, (Ps > 0 ? Ps : 1), A, Contiguous>(a, rows, b, n, out, p0, c0, accumulate), 0)
        : 0),
   ...);
}

// Rows [s, e) of out in blocks of P, the rest in one block of exactly e - p
// rows: every block is a pass over all rows of a and b, and for small K (9
// for a 3x3 filter on a grey image) those rows are megabytes, so a second
// pass costs more than the FMAs.
template <int W, int NV, int P, class A, bool Contiguous>
__attribute__((always_inline)) inline void tn_span(const A& a, int64_t rows, int64_t s, int64_t e, const float* b,
                                                   int64_t n, float* out, int64_t c0, bool accumulate) {
  int64_t p = s;
  for (; p + P <= e; p += P) tn_block<W, NV, P, A, Contiguous>(a, rows, b, n, out, p, c0, accumulate);
  if (p < e)
    tn_rest<W, NV, A, Contiguous>(a, rows, b, n, out, p, c0, accumulate, static_cast<int>(e - p),
                                  std::make_integer_sequence<int, P>{});
}

// Runs of at least P values (a dense row, a filter row's KW*C floats) are
// cut into blocks run by run, each read through a pointer per row; shorter
// runs in blocks across them, value by value. Each out value is the same sum
// over the rows in order either way.
template <int W, int NV, class A>
__attribute__((always_inline)) inline void tn_columns(const A& a, int64_t rows, int64_t k, const float* b, int64_t n,
                                                      float* out, int64_t c0, bool accumulate) {
  // One vector of columns: 16 rows of out a pass, so the Winograd filter
  // gradient's 16 x 16 products take one pass, not 12 rows then 4 (whose 4
  // accumulators leave two FMA pipes waiting on latency; axon-bench-products,
  // 16 x 16 over 128 rows: 98 -> 122 GFLOP/s, the best of 8 alternated runs).
  constexpr int P = std::min(NV == 1 ? 16 : 12, simd::kAccumulators<W> / NV);
  const int64_t run = a.run();
  if (run < std::min(P, 12)) return tn_span<W, NV, P, A, false>(a, rows, 0, k, b, n, out, c0, accumulate);
  for (int64_t s = 0; s < k; s += run)
    tn_span<W, NV, P, A, true>(a, rows, s, std::min(k, s + run), b, n, out, c0, accumulate);
}

// Four columns (n = N = 4) in whole vectors of W lanes, where the column
// blocks below would run them in quarter vectors of a 16-lane machine (a
// 5x5 filter gradient over 4 channels into 4 ran at 80 GFLOP/s). Vector j
// sums, in lane i = o L + q, out[p0 + j L + q, o] (L = W / N): the L values
// of a row of a from p0 + j L repeated N times (one block broadcast from
// memory) times the row's N values of b, each repeated L times (one
// permute a row). The rows are summed in order, as the column blocks sum
// them: the same bits. Vector j covers out's W floats from row p0 + j L,
// permuted into place as it is stored. (N = 8 the same way, L = 2, ran
// slower than the column blocks at the Inception cell's shapes.)
template <class F, size_t... I>
__attribute__((always_inline)) inline F permuted(F v, std::index_sequence<I...>, auto lane_of) {
  return __builtin_shufflevector(v, v, static_cast<int>(lane_of(I))...);
}

template <int W, int N, int NVEC, class A>
__attribute__((always_inline)) inline void tn_spread_block(const A& a, int64_t rows, const float* b, float* out,
                                                           int64_t p0, bool accumulate) {
  using F = typename simd::Vec<W>::f;
  constexpr int L = W / N;
  constexpr auto lanes = std::make_index_sequence<W>{};
  // out's layout (lane m = q N + o) from the sums' (lane i = o L + q) and back.
  constexpr auto to_out = [](size_t m) { return (m % N) * L + m / N; };
  constexpr auto to_sums = [](size_t i) { return (i % L) * N + i / L; };
  F acc[NVEC];
#pragma GCC unroll 32
  for (int j = 0; j < NVEC; ++j)
    acc[j] = accumulate ? permuted(simd::load<F>(out + (p0 + j * L) * N), lanes, to_sums) : F{};
  for (int64_t r = 0; r < rows; ++r) {
    // lane i = b[r, i / L]
    const F bv = permuted(simd::broadcast_block<F, N>(b + r * N), lanes, [](size_t i) { return i / L; });
#pragma GCC unroll 32
    for (int j = 0; j < NVEC; ++j) acc[j] += simd::broadcast_block<F, L>(a.at(r, p0 + j * L)) * bv;
  }
#pragma GCC unroll 32
  for (int j = 0; j < NVEC; ++j) simd::store<F>(out + (p0 + j * L) * N, permuted(acc[j], lanes, to_out));
}

// out's k rows in passes of the most vectors the registers hold, then of 8,
// then one each of 4, 2 and 1 (each pass reads all rows; the tile keeps them
// in cache). A group of L values of p lies in one run of a: the caller
// checks run % L.
template <int W, int N, class A>
__attribute__((always_inline)) inline void tn_spread(const A& a, int64_t rows, int64_t k, const float* b, float* out,
                                                     bool accumulate) {
  constexpr int L = W / N, J = simd::kAccumulators<W>;
  int64_t p0 = 0;
  for (; p0 + J * L <= k; p0 += J * L) tn_spread_block<W, N, J, A>(a, rows, b, out, p0, accumulate);
  for (; p0 + 8 * L <= k; p0 += 8 * L) tn_spread_block<W, N, 8, A>(a, rows, b, out, p0, accumulate);
  if (p0 + 4 * L <= k) tn_spread_block<W, N, 4, A>(a, rows, b, out, p0, accumulate), p0 += 4 * L;
  if (p0 + 2 * L <= k) tn_spread_block<W, N, 2, A>(a, rows, b, out, p0, accumulate), p0 += 2 * L;
  if (p0 + L <= k) tn_spread_block<W, N, 1, A>(a, rows, b, out, p0, accumulate);
}

template <int W, class A>
__attribute__((always_inline)) inline void tn_tile(const A& a, int64_t rows, int64_t k, const float* b, int64_t n,
                                                   float* out, bool accumulate) {
  if constexpr (W >= 8)
    if (n == 4 && a.run() % (W / 4) == 0) return tn_spread<W, 4, A>(a, rows, k, b, out, accumulate);
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
__attribute__((always_inline)) inline void tn(const A& a, int64_t rows, int64_t k, const float* b, int64_t n, float* out,
                                              bool accumulate) {
  const int64_t tile = std::max<int64_t>(16, 4096 / std::max<int64_t>(n, 1));
  int64_t r0 = 0;
  do {
    const int64_t r1 = std::min(rows, r0 + tile);
    tn_tile<W>(a.from(r0), r1 - r0, k, b + r0 * n, n, out, accumulate || r0 > 0);
    r0 = r1;
  } while (r0 < rows);
}

template <int W>
__attribute__((always_inline)) inline void small_k_gemm_body(const float* a, int64_t rows, int64_t k, const float* b,
                                                              int64_t n, float* y, const Epilogue& ep) {
  if constexpr (W == 16)
    if (k == kRegisterK && n % W == 0) return nn_k16<W>(a, rows, b, n, y, ep);
  if (k == 32) return nn<W>(DenseRows<32>{a}, rows, k, b, n, y, ep);
  nn<W>(Dense{a, k}, rows, k, b, n, y, ep);
}
template <int W>
__attribute__((always_inline)) inline void small_k_gemm_tn_body(const float* a, int64_t rows, int64_t k, const float* b,
                                                                 int64_t n, float* out, bool accumulate) {
  tn<W>(Dense{a, k}, rows, k, b, n, out, accumulate);
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
                                                                 int64_t n, float* out, bool accumulate) {
  tn<W>(Gathered{a}, rows, k, b, n, out, accumulate);
}

}  // namespace

AXON_CPU_DISPATCH(small_k_gemm,
                  (const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* y, const Epilogue& ep),
                  (a, rows, k, b, n, y, ep))

AXON_CPU_DISPATCH(small_k_gemm_tn,
                  (const float* a, int64_t rows, int64_t k, const float* b, int64_t n, float* out, bool accumulate),
                  (a, rows, k, b, n, out, accumulate))

AXON_CPU_DISPATCH(small_k_conv,
                  (const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* y, const Epilogue& ep),
                  (a, rows, k, b, n, y, ep))

AXON_CPU_DISPATCH(apply_epilogue, (float* y, int64_t rows, int64_t n, const Epilogue& ep), (y, rows, n, ep))

AXON_CPU_DISPATCH(small_k_conv_tn,
                  (const Gather& a, int64_t rows, int64_t k, const float* b, int64_t n, float* out, bool accumulate),
                  (a, rows, k, b, n, out, accumulate))

}  // namespace axon::cpu
