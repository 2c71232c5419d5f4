// FusedBatchNormV3 and FusedBatchNormGradV3 over the last dimension of x,
// seen as [rows, C] whatever its rank, and _FusedBatchNormEx /
// _FusedBatchNormGradEx, the same with relu (applied as y is written; dy
// masked by relu's output as it is read), and _FusedBatchNormAddEx /
// _FusedBatchNormAddGradEx with a residual branch added before the relu
// (its gradient written by the first pass). Memory-bound: the forward reads x
// twice (the statistics, then y) and writes y once; the gradient reads dy and
// x twice and writes dx once. Per-channel sums are taken in double over
// blocks of rows summed in float, channels in the vector lanes and rows in
// order, in chunks of rows fixed by the channel count (BiasAddGrad's), added
// in chunk order: the results do not depend on the thread count, and since
// this file is compiled without FMA contraction (CMakeLists.txt) nor on the
// instruction set either.
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace axon::cpu {
namespace {

constexpr int64_t kSerialElements = 1 << 15;

// Rows summed in float before a double accumulator takes their sums: the
// conversions to double, not the memory, bounded the statistics' pass when
// every element was converted (18 GB/s against Relu's 84). A block's float
// sums of shifted values (the shift near the mean, below) round by a few u of
// the block's magnitudes, far within the double-summed tolerance
// (axon/tolerance_batch_norm.hpp with t = 1).
constexpr int64_t kFloatBlockRows = 4;
// The forward's shift: the mean of this many first rows.
constexpr int64_t kShiftRows = 8;

// Channels [c0, c0 + NV W) of channel_sums_rows (below): NV = 2 reads a
// row's whole cache line (AVX2) in one pass over the rows instead of two.
// Same: b is a and b_shift a_shift (the forward's variance), so b - b_shift
// is a - a_shift already (one load and one subtraction fewer, the same bits).
// Store: a, masked, is also written to a_out (the side input's gradient of
// _FusedBatchNormAddGradEx, which the second pass then reads unmasked).
template <int W, int NV, bool Masked, bool Same, bool Store>
__attribute__((always_inline)) inline void channel_sums_block(const float* a, const float* b, const float* mask,
                                                               float* a_out, int64_t r0, int64_t r1, int64_t ch,
                                                               int64_t c0, const float* a_shift, const float* b_shift,
                                                               double* s1, double* s2) {
  using F = typename simd::Vec<W>::f;
  F as[NV], bs[NV];
  for (int j = 0; j < NV; ++j) as[j] = simd::load<F>(a_shift + c0 + j * W), bs[j] = simd::load<F>(b_shift + c0 + j * W);
  auto row = [&](int64_t i, F(&f1)[NV], F(&f2)[NV]) __attribute__((always_inline)) {
    for (int j = 0; j < NV; ++j) {
      F av = simd::load<F>(a + i * ch + c0 + j * W);
      if constexpr (Masked) av = simd::load<F>(mask + i * ch + c0 + j * W) > F{} ? av : F{};
      if constexpr (Store) simd::store<F>(a_out + i * ch + c0 + j * W, av);
      const F da = av - as[j];
      f1[j] += da;
      if constexpr (Same)
        f2[j] += da * da;
      else
        f2[j] += da * (simd::load<F>(b + i * ch + c0 + j * W) - bs[j]);
    }
  };
  simd::DoubleSum<W> t1[NV], t2[NV];
  int64_t r = r0;
  // Two blocks at once (independent float chains), taken in block order.
  for (; r + 2 * kFloatBlockRows <= r1; r += 2 * kFloatBlockRows) {
    F f1[NV] = {}, f2[NV] = {}, g1[NV] = {}, g2[NV] = {};
    for (int64_t i = r; i < r + kFloatBlockRows; ++i) {
      row(i, f1, f2);
      row(i + kFloatBlockRows, g1, g2);
    }
    for (int j = 0; j < NV; ++j) {
      t1[j].add(f1[j]);
      t2[j].add(f2[j]);
      t1[j].add(g1[j]);
      t2[j].add(g2[j]);
    }
  }
  for (; r < r1; r += kFloatBlockRows) {
    const int64_t end = std::min(r + kFloatBlockRows, r1);
    F f1[NV] = {}, f2[NV] = {};
    for (int64_t i = r; i < end; ++i) row(i, f1, f2);
    for (int j = 0; j < NV; ++j) {
      t1[j].add(f1[j]);
      t2[j].add(f2[j]);
    }
  }
  for (int j = 0; j < NV; ++j) {
    t1[j].store(s1 + c0 + j * W);
    t2[j].store(s2 + c0 + j * W);
  }
}

// Per-channel sums over rows [r0, r1) of a [rows, ch] pair (a, b):
// s1[c] = sum(a - a_shift[c]), s2[c] = sum((a - a_shift[c]) * (b - b_shift[c])).
// The forward passes (x, x) with both shifts near the channel's mean (the
// variance of shifted data: no cancellation when the mean is far from 0),
// the gradient (dy, x) with the shifts 0 and the mean. With a mask (the
// gradient of batch normalization with relu: relu's output y), a is 0 where
// the mask is not positive, exactly as ReluGrad would have written it. Each
// lane does the same float operations in the same order on every
// instruction set, the scalar remainder too (blocks start at r0, which the
// caller's chunks fix by the shape).
template <int W, bool Masked, bool Same, bool Store>
__attribute__((always_inline)) inline void channel_sums_rows(const float* a, const float* b, const float* mask,
                                                              float* a_out, int64_t r0, int64_t r1, int64_t ch,
                                                              const float* a_shift, const float* b_shift, double* s1,
                                                              double* s2) {
  int64_t c0 = 0;
  for (; c0 + 2 * W <= ch; c0 += 2 * W)
    channel_sums_block<W, 2, Masked, Same, Store>(a, b, mask, a_out, r0, r1, ch, c0, a_shift, b_shift, s1, s2);
  for (; c0 + W <= ch; c0 += W)
    channel_sums_block<W, 1, Masked, Same, Store>(a, b, mask, a_out, r0, r1, ch, c0, a_shift, b_shift, s1, s2);
  for (; c0 < ch; ++c0) {
    double t1 = 0.0, t2 = 0.0;
    for (int64_t r = r0; r < r1; r += kFloatBlockRows) {
      const int64_t end = std::min(r + kFloatBlockRows, r1);
      float f1 = 0.0f, f2 = 0.0f;
      for (int64_t i = r; i < end; ++i) {
        float av = a[i * ch + c0];
        if constexpr (Masked) av = mask[i * ch + c0] > 0.0f ? av : 0.0f;
        if constexpr (Store) a_out[i * ch + c0] = av;
        const float da = av - a_shift[c0], db = b[i * ch + c0] - b_shift[c0];
        f1 += da;
        f2 += da * db;
      }
      t1 += f1;
      t2 += f2;
    }
    s1[c0] = t1;
    s2[c0] = t2;
  }
}
template <int W>
__attribute__((always_inline)) inline void channel_sums_body(const float* a, const float* b, const float* mask,
                                                              float* a_out, int64_t r0, int64_t r1, int64_t ch,
                                                              const float* a_shift, const float* b_shift, double* s1,
                                                              double* s2) {
  if (mask != nullptr && a_out != nullptr)
    return channel_sums_rows<W, true, false, true>(a, b, mask, a_out, r0, r1, ch, a_shift, b_shift, s1, s2);
  if (mask != nullptr)
    return channel_sums_rows<W, true, false, false>(a, b, mask, nullptr, r0, r1, ch, a_shift, b_shift, s1, s2);
  if (a_out != nullptr)
    return channel_sums_rows<W, false, false, true>(a, b, nullptr, a_out, r0, r1, ch, a_shift, b_shift, s1, s2);
  if (a == b && a_shift == b_shift)
    return channel_sums_rows<W, false, true, false>(a, b, nullptr, nullptr, r0, r1, ch, a_shift, b_shift, s1, s2);
  channel_sums_rows<W, false, false, false>(a, b, nullptr, nullptr, r0, r1, ch, a_shift, b_shift, s1, s2);
}

AXON_CPU_DISPATCH(channel_sums,
                  (const float* a, const float* b, const float* mask, float* a_out, int64_t r0, int64_t r1, int64_t ch,
                   const float* a_shift, const float* b_shift, double* s1, double* s2),
                  (a, b, mask, a_out, r0, r1, ch, a_shift, b_shift, s1, s2))

// out = ((x - m) * k + o) or, with dy, (k * ((dy - o) - (x - m) * q)), per
// channel constants, rows [r0, r1); each lane's float operations are the same
// on every instruction set. The forward adds the side input if there is one
// (a residual branch: AddN's sum), and with relu its result is max(out, 0)
// (NaN -> 0, as Relu); the gradient's dy is 0 where relu's output (mask)
// is not positive (as ReluGrad): the bits of the separate ops.
struct Affine {
  const float *m, *k, *o, *q;  // q null: the forward form
  bool relu = false;           // forward: relu on the result
  const float* mask = nullptr;  // gradient: relu's output, dy masked where it is not positive
  const float* side = nullptr;  // forward: [rows, ch] added before relu
};

// One element or vector of each form (T a float or a vector of floats): the
// forward's y, with the side input and relu if asked, and the gradient's dx
// from dy already masked.
template <bool Relu, bool Side, class T>
__attribute__((always_inline)) inline T affine_forward(T x, T m, T k, T o, [[maybe_unused]] const float* side) {
  T v = (x - m) * k + o;
  if constexpr (Side) v = v + simd::load<T>(side);
  if constexpr (Relu) return v > T{} ? v : T{};  // NaN -> 0, as Relu
  return v;
}
template <class T>
__attribute__((always_inline)) inline T affine_gradient(T x, T g, T m, T k, T o, T q) {
  return k * ((g - o) - (x - m) * q);
}

template <int W, bool Relu, bool Masked, bool Side>
__attribute__((always_inline)) inline void affine_rows_of(const float* x, const float* dy, const Affine& f, int64_t r0,
                                                           int64_t r1, int64_t ch, float* out) {
  using F = typename simd::Vec<W>::f;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t base = r * ch;
    int64_t c0 = 0;
    for (; c0 + W <= ch; c0 += W) {
      const F xv = simd::load<F>(x + base + c0), m = simd::load<F>(f.m + c0), k = simd::load<F>(f.k + c0),
              o = simd::load<F>(f.o + c0);
      if (f.q == nullptr) {
        simd::store<F>(out + base + c0, affine_forward<Relu, Side>(xv, m, k, o, Side ? f.side + base + c0 : nullptr));
      } else {
        F g = simd::load<F>(dy + base + c0);
        if constexpr (Masked) g = simd::load<F>(f.mask + base + c0) > F{} ? g : F{};
        simd::store<F>(out + base + c0, affine_gradient(xv, g, m, k, o, simd::load<F>(f.q + c0)));
      }
    }
    for (; c0 < ch; ++c0) {
      if (f.q == nullptr) {
        out[base + c0] =
            affine_forward<Relu, Side>(x[base + c0], f.m[c0], f.k[c0], f.o[c0], Side ? f.side + base + c0 : nullptr);
      } else {
        float g = dy[base + c0];
        if constexpr (Masked) g = f.mask[base + c0] > 0.0f ? g : 0.0f;
        out[base + c0] = affine_gradient(x[base + c0], g, f.m[c0], f.k[c0], f.o[c0], f.q[c0]);
      }
    }
  }
}

// The same where a row is exactly NV vectors: the per-channel constants are
// loaded once, not once a row (reloading them kept the load ports busier
// than the data: 28x28x16 inference at batch 64, AVX2, 112 -> 47 us).
template <int W, int NV, bool Relu, bool Masked, bool Side>
__attribute__((always_inline)) inline void affine_rows_fixed(const float* x, const float* dy, const Affine& f,
                                                              int64_t r0, int64_t r1, float* out) {
  using F = typename simd::Vec<W>::f;
  constexpr int64_t ch = NV * W;
  F m[NV], k[NV], o[NV], q[NV];
  for (int j = 0; j < NV; ++j) {
    m[j] = simd::load<F>(f.m + j * W);
    k[j] = simd::load<F>(f.k + j * W);
    o[j] = simd::load<F>(f.o + j * W);
    q[j] = f.q != nullptr ? simd::load<F>(f.q + j * W) : F{};
  }
  if (f.q == nullptr) {
    for (int64_t r = r0; r < r1; ++r)
      for (int j = 0; j < NV; ++j) {
        const float* side = Side ? f.side + r * ch + j * W : nullptr;
        simd::store<F>(out + r * ch + j * W,
                       affine_forward<Relu, Side>(simd::load<F>(x + r * ch + j * W), m[j], k[j], o[j], side));
      }
    return;
  }
  for (int64_t r = r0; r < r1; ++r)
    for (int j = 0; j < NV; ++j) {
      F g = simd::load<F>(dy + r * ch + j * W);
      if constexpr (Masked) g = simd::load<F>(f.mask + r * ch + j * W) > F{} ? g : F{};
      const F xv = simd::load<F>(x + r * ch + j * W);
      simd::store<F>(out + r * ch + j * W, affine_gradient(xv, g, m[j], k[j], o[j], q[j]));
    }
}

template <int W, bool Relu, bool Masked, bool Side = false>
__attribute__((always_inline)) inline void affine_rows_any(const float* x, const float* dy, const Affine& f,
                                                            int64_t r0, int64_t r1, int64_t ch, float* out) {
  if (ch == W) return affine_rows_fixed<W, 1, Relu, Masked, Side>(x, dy, f, r0, r1, out);
  if (ch == 2 * W) return affine_rows_fixed<W, 2, Relu, Masked, Side>(x, dy, f, r0, r1, out);
  if (ch == 4 * W) return affine_rows_fixed<W, 4, Relu, Masked, Side>(x, dy, f, r0, r1, out);
  if (ch == 8 * W) return affine_rows_fixed<W, 8, Relu, Masked, Side>(x, dy, f, r0, r1, out);
  affine_rows_of<W, Relu, Masked, Side>(x, dy, f, r0, r1, ch, out);
}

template <int W>
__attribute__((always_inline)) inline void affine_rows_body(const float* x, const float* dy, const Affine& f,
                                                             int64_t r0, int64_t r1, int64_t ch, float* out) {
  if (f.side != nullptr && f.relu) return affine_rows_any<W, true, false, true>(x, dy, f, r0, r1, ch, out);
  if (f.side != nullptr) return affine_rows_any<W, false, false, true>(x, dy, f, r0, r1, ch, out);
  if (f.relu) return affine_rows_any<W, true, false>(x, dy, f, r0, r1, ch, out);
  if (f.mask != nullptr) return affine_rows_any<W, false, true>(x, dy, f, r0, r1, ch, out);
  affine_rows_any<W, false, false>(x, dy, f, r0, r1, ch, out);
}

AXON_CPU_DISPATCH(affine_rows,
                  (const float* x, const float* dy, const Affine& f, int64_t r0, int64_t r1, int64_t ch, float* out),
                  (x, dy, f, r0, r1, ch, out))

// The per-channel totals of channel_sums over all rows: chunk partials in
// scratch, added in chunk order. t1, t2: [ch] doubles; a_out: see
// channel_sums_block.
void total_sums(CpuDevice& d, const float* a, const float* b, const float* mask, float* a_out, int64_t rows,
                int64_t ch, const float* a_shift, const float* b_shift, double* t1, double* t2) {
  const int64_t per_chunk = bias_grad_rows_per_chunk(ch), chunks = chunk_count(rows, per_chunk);
  double* acc = d.partials_f64(static_cast<size_t>(std::max<int64_t>(chunks, 1) * 2 * ch));
  d.pool().for_ranges(rows, per_chunk, rows * ch >= kSerialElements, [&](int, int64_t r0, int64_t r1) {
    double* part = acc + (r0 / per_chunk) * 2 * ch;
    channel_sums(a, b, mask, a_out, r0, r1, ch, a_shift, b_shift, part, part + ch);
  });
  for (int64_t c = 0; c < ch; ++c) {
    double s1 = 0.0, s2 = 0.0;
    for (int64_t t = 0; t < chunks; ++t) {
      s1 += acc[t * 2 * ch + c];
      s2 += acc[t * 2 * ch + ch + c];
    }
    t1[c] = s1;
    t2[c] = s2;
  }
}

void affine(CpuDevice& d, const float* x, const float* dy, const Affine& f, int64_t rows, int64_t ch, float* out) {
  // From each run's end: the sums' pass just read these rows in order, so
  // its last ones are still in the core's L2 (plugins/cpu/README.md).
  d.pool().for_ranges_backward(rows, bias_grad_rows_per_chunk(ch), rows * ch >= kSerialElements,
                               [&](int, int64_t r0, int64_t r1) { affine_rows(x, dy, f, r0, r1, ch, out); });
}

// Per-channel arrays in the device's intermediate scratch (nothing else of
// these kernels uses it): `doubles` arrays of ch doubles, then `floats` of ch floats.
struct ChannelScratch {
  double* d;
  float* f;
  int64_t ch;
  ChannelScratch(CpuDevice& dev, int64_t channels, int doubles, int floats) : ch(channels) {
    d = reinterpret_cast<double*>(dev.intermediate(static_cast<size_t>(ch * (2 * doubles + floats))));
    f = reinterpret_cast<float*>(d + ch * doubles);
  }
  double* dbl(int i) const { return d + i * ch; }
  float* flt(int i) const { return f + i * ch; }
};

// TensorFlow's FusedBatchNormV3 (the reference plugin's kernels_layers.cpp
// states the semantics); y = (x - mean) * (scale / sqrt(var + epsilon)) + offset,
// plus the side input (_FusedBatchNormAddEx) and with relu (_FusedBatchNormEx)
// max(y, 0) in the same pass.
void batch_norm(CpuDevice& d, const KernelCall& c, const axon_batch_norm_attrs& a, bool relu, const float* side) {
  TensorRef x = c.input(0), y = c.output(0);
  const int64_t ch = x.dim(-1), rows = ch > 0 ? x.numel() / ch : 0;
  if (ch == 0) return;
  const float* xp = x.data<float>();
  const float* scale = c.input(1).data<float>();
  const float* offset = c.input(2).data<float>();
  const float* old_mean = c.input(3).data<float>();
  const float* old_var = c.input(4).data<float>();
  const ChannelScratch s(d, ch, 3, 3);
  double *mean = s.dbl(0), *var = s.dbl(1), *sq = s.dbl(2);
  if (a.is_training && rows > 0) {
    // The shift: the mean of the first rows, so that the shifted values the
    // float blocks sum are about the channel's spread, not its mean.
    float* shift = s.flt(2);
    const int64_t first = std::min<int64_t>(rows, kShiftRows);
    for (int64_t k = 0; k < ch; ++k) {
      double t = 0.0;
      for (int64_t r = 0; r < first; ++r) t += xp[r * ch + k];
      shift[k] = static_cast<float>(t / double(first));
    }
    total_sums(d, xp, xp, nullptr, nullptr, rows, ch, shift, shift, mean, sq);
    for (int64_t k = 0; k < ch; ++k) {
      const double m = mean[k] / double(rows);  // the mean of x - shift
      mean[k] = shift[k] + m;
      var[k] = std::max(sq[k] / double(rows) - m * m, 0.0);
    }
  } else {
    for (int64_t k = 0; k < ch; ++k) mean[k] = old_mean[k], var[k] = old_var[k];
  }
  if (rows > 0) {
    float *m = s.flt(0), *k = s.flt(1);
    for (int64_t i = 0; i < ch; ++i) {
      m[i] = static_cast<float>(mean[i]);
      k[i] = static_cast<float>(scale[i] / std::sqrt(var[i] + double(a.epsilon)));
    }
    affine(d, xp, nullptr, Affine{m, k, offset, nullptr, relu, nullptr, side}, rows, ch, y.data<float>());
  }
  if (c.num_outputs() == 1) return;
  float* batch_mean = c.output(1).data<float>();
  float* batch_var = c.output(2).data<float>();
  float* saved_mean = c.output(3).data<float>();
  float* saved_var = c.output(4).data<float>();
  const double f = a.exponential_avg_factor;
  const double unbias = double(rows) / double(rows > 1 ? rows - 1 : 1);
  for (int64_t k = 0; k < ch; ++k) {
    if (rows == 0) {
      batch_mean[k] = batch_var[k] = std::numeric_limits<float>::quiet_NaN();
      saved_mean[k] = saved_var[k] = 0.0f;
    } else if (a.is_training) {
      batch_mean[k] = static_cast<float>(f == 1.0 ? mean[k] : (1.0 - f) * old_mean[k] + f * mean[k]);
      batch_var[k] = static_cast<float>(f == 1.0 ? var[k] * unbias : (1.0 - f) * old_var[k] + f * unbias * var[k]);
      saved_mean[k] = static_cast<float>(mean[k]);
      saved_var[k] = static_cast<float>(var[k]);
    } else {
      batch_mean[k] = saved_mean[k] = old_mean[k];
      batch_var[k] = saved_var[k] = old_var[k];
    }
  }
}

// TensorFlow's FusedBatchNormGradV3: one pass for sum(dy) and
// sum(dy (x - mean)), one for dx = scale r ((dy - mean(dy)) - (x - mean) q)
// with q = r^2 mean(dy (x - mean)) in training, 0 in inference. With relu
// (_FusedBatchNormGradEx) dy is masked by relu's output in both passes, so
// ReluGrad's output is never written. With a side input's gradient to write
// (_FusedBatchNormAddGradEx: dy, masked with relu) the first pass writes it
// and the second reads it in place of dy.
void batch_norm_grad(CpuDevice& d, const KernelCall& c, const axon_batch_norm_attrs& a, const float* mask,
                     float* side_grad) {
  TensorRef dy = c.input(0), x = c.input(1), dx = c.output(0);
  const int64_t ch = x.dim(-1), rows = ch > 0 ? x.numel() / ch : 0;
  if (ch == 0) return;
  const float* g = dy.data<float>();
  const float* xp = x.data<float>();
  const float* scale = c.input(2).data<float>();
  const float* mean = c.input(3).data<float>();
  const float* var = c.input(4).data<float>();
  const ChannelScratch s(d, ch, 2, 5);
  double *sum_dy = s.dbl(0), *sum_dy_xc = s.dbl(1);
  float* zero = s.flt(4);
  for (int64_t k = 0; k < ch; ++k) zero[k] = 0.0f, sum_dy[k] = 0.0, sum_dy_xc[k] = 0.0;
  if (rows > 0) total_sums(d, g, xp, mask, side_grad, rows, ch, zero, mean, sum_dy, sum_dy_xc);  // no rows: zero sums
  if (side_grad != nullptr) g = side_grad, mask = nullptr;
  float* dscale = c.output(1).data<float>();
  float* doffset = c.output(2).data<float>();
  float *m = s.flt(0), *k = s.flt(1), *o = s.flt(2), *q = s.flt(3);
  for (int64_t i = 0; i < ch; ++i) {
    const double r = 1.0 / std::sqrt(double(var[i]) + double(a.epsilon));
    dscale[i] = static_cast<float>(sum_dy_xc[i] * r);
    doffset[i] = static_cast<float>(sum_dy[i]);
    m[i] = mean[i];
    k[i] = static_cast<float>(scale[i] * r);
    o[i] = a.is_training ? static_cast<float>(sum_dy[i] / double(rows)) : 0.0f;
    q[i] = a.is_training ? static_cast<float>(r * r * sum_dy_xc[i] / double(rows)) : 0.0f;
  }
  if (rows > 0) affine(d, xp, g, Affine{m, k, o, q, false, mask}, rows, ch, dx.data<float>());
}

void fused_batch_norm(CpuDevice& d, const KernelCall& c) {
  batch_norm(d, c, c.attrs<axon_batch_norm_attrs>(), false, nullptr);
}
void fused_batch_norm_grad(CpuDevice& d, const KernelCall& c) {
  batch_norm_grad(d, c, c.attrs<axon_batch_norm_attrs>(), nullptr, nullptr);
}
void fused_batch_norm_ex(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU, nullptr);
}
void fused_batch_norm_grad_ex(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm_grad(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU ? c.input(5).data<float>() : nullptr,
                  nullptr);
}
void fused_batch_norm_add_ex(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU, c.input(5).data<float>());
}
void fused_batch_norm_add_grad_ex(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_batch_norm_attrs>();
  batch_norm_grad(d, c, a.batch_norm, a.activation == AXON_ACTIVATION_RELU ? c.input(5).data<float>() : nullptr,
                  c.output(3).data<float>());
}

}  // namespace

void add_batch_norm_kernels(sdk::KernelTable& t) {
  add<OpId::FusedBatchNormV3, fused_batch_norm>(t);
  add<OpId::FusedBatchNormGradV3, fused_batch_norm_grad>(t);
  add<OpId::FusedBatchNormEx, fused_batch_norm_ex>(t);
  add<OpId::FusedBatchNormGradEx, fused_batch_norm_grad_ex>(t);
  add<OpId::FusedBatchNormAddEx, fused_batch_norm_add_ex>(t);
  add<OpId::FusedBatchNormAddGradEx, fused_batch_norm_add_grad_ex>(t);
}

}  // namespace axon::cpu
