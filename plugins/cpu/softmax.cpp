// Softmax and its gradient over the last dimension, and the sparse softmax
// cross-entropy, one row at a time, rows in fixed chunks over the device's
// threads. A row's sum is in double,
// in 16 running sums (element j into sum j % 16) added in a fixed order:
// the same sums on every instruction set and thread count. Softmax: the row's
// maximum, e^(x - max) into y (vec_math.hpp), then y times 1 / sum.
// SoftmaxGrad: dx = (dy - sum(dy * y)) * y, the products exact in double.
// SparseSoftmaxCrossEntropyWithLogits: e = e^(x - max) for a whole block of
// rows in one vector pass (a row of 10 classes would fill a vector of 16
// lanes once, padded), then per row loss = log(sum) - (x[label] - max) in
// double and dlogits = e * (1 / sum) - onehot.
#include "elementwise.hpp"
#include "kernels.hpp"
#include "vec_math.hpp"

#include <algorithm>
#include <cmath>

namespace axon::cpu {
namespace {

constexpr int kSums = 16;

// sum of p[0 .. n) in double, kSums running sums combined in order. Inlined
// into each instruction set's body: a call from AVX code to a baseline copy
// would run it in SSE with the vectors' upper halves dirty (no vzeroupper is
// emitted there), several times slower.
__attribute__((always_inline)) inline double row_sum(const float* p, int64_t n) {
  double s[kSums] = {};
  int64_t j = 0;
  for (; j + kSums <= n; j += kSums)
    for (int k = 0; k < kSums; ++k) s[k] += p[j + k];
  for (int k = 0; j + k < n; ++k) s[k] += p[j + k];
  double total = 0.0;
  for (double v : s) total += v;
  return total;
}

// sum of a[j] * b[j] in double (each product exact), as row_sum.
__attribute__((always_inline)) inline double row_dot(const float* a, const float* b, int64_t n) {
  double s[kSums] = {};
  int64_t j = 0;
  for (; j + kSums <= n; j += kSums)
    for (int k = 0; k < kSums; ++k) s[k] += double(a[j + k]) * b[j + k];
  for (int k = 0; j + k < n; ++k) s[k] += double(a[j + k]) * b[j + k];
  double total = 0.0;
  for (double v : s) total += v;
  return total;
}

// The largest element of x[0 .. n), n >= 1 (NaN lanes are passed over: a
// NaN then reaches the sum through e^(NaN - max), and the whole row is NaN).
template <int W>
__attribute__((always_inline)) inline float row_max(const float* x, int64_t n) {
  using F = typename simd::Vec<W>::f;
  float best = x[0];
  int64_t j = 0;
  if (n >= W) {
    F m = simd::load<F>(x);
    for (j = W; j + W <= n; j += W) {
      const F v = simd::load<F>(x + j);
      m = v > m ? v : m;
    }
    for (int k = 0; k < W; ++k) best = m[k] > best ? m[k] : best;
  }
  for (; j < n; ++j) best = x[j] > best ? x[j] : best;
  return best;
}

template <int W>
__attribute__((always_inline)) inline void softmax_rows_body(const float* x, float* y, int64_t rows, int64_t classes) {
  using F = typename simd::Vec<W>::f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * classes;
    float* yr = y + r * classes;
    const float mx = row_max<W>(xr, classes);
    map_unary<W>([mx](F v) __attribute__((always_inline)) { return vmath::exp(v - mx); }, xr, yr, classes);
    const float inv = static_cast<float>(1.0 / row_sum(yr, classes));
    map_unary<W>([inv](F v) __attribute__((always_inline)) { return v * inv; }, yr, yr, classes);
  }
}

AXON_CPU_DISPATCH(softmax_rows, (const float* x, float* y, int64_t rows, int64_t classes), (x, y, rows, classes))

template <int W>
__attribute__((always_inline)) inline void softmax_grad_rows_body(const float* dy, const float* y, float* dx,
                                                                  int64_t rows, int64_t classes) {
  using F = typename simd::Vec<W>::f;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = r * classes;
    const float s = static_cast<float>(row_dot(dy + o, y + o, classes));
    map_binary<W>([s](F g, F yv) __attribute__((always_inline)) { return (g - s) * yv; }, dy + o, y + o, dx + o,
                  classes);
  }
}

AXON_CPU_DISPATCH(softmax_grad_rows, (const float* dy, const float* y, float* dx, int64_t rows, int64_t classes),
                  (dy, y, dx, rows, classes))

// The loss's rows, kXentBlockRows at a time: per row its maximum, e = e^(x -
// max) into g for the whole block in one vector pass, the row's sum s in
// double and g = e * (1 / s) - onehot; the block's sums and x[label] - max
// go back for the log, which runs outside the vector code (the library's log
// is SSE code).
constexpr int64_t kXentBlockRows = 64;

template <int W>
__attribute__((always_inline)) inline void xent_block_body(const float* x, const int32_t* labels, float* g,
                                                           int64_t rows, int64_t classes, double* sums,
                                                           double* label_shift) {
  using F = typename simd::Vec<W>::f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * classes;
    const float mx = row_max<W>(xr, classes);
    for (int64_t j = 0; j < classes; ++j) g[r * classes + j] = xr[j] - mx;
    label_shift[r] = double(xr[labels[r]]) - mx;
  }
  map_unary<W>([](F v) __attribute__((always_inline)) { return vmath::exp(v); }, g, g, rows * classes);
  for (int64_t r = 0; r < rows; ++r) {
    float* gr = g + r * classes;
    sums[r] = row_sum(gr, classes);
    const float inv = static_cast<float>(1.0 / sums[r]);
    for (int64_t j = 0; j < classes; ++j) gr[j] *= inv;
    gr[labels[r]] -= 1.0f;
  }
}

AXON_CPU_DISPATCH(xent_block,
                  (const float* x, const int32_t* labels, float* g, int64_t rows, int64_t classes, double* sums,
                   double* label_shift),
                  (x, labels, g, rows, classes, sums, label_shift))

// loss = log(s) - (x[label] - max) over rows [0, rows).
void xent_rows(const float* x, const int32_t* labels, float* loss, float* g, int64_t rows, int64_t classes) {
  double sums[kXentBlockRows], label_shift[kXentBlockRows];
  for (int64_t r0 = 0; r0 < rows; r0 += kXentBlockRows) {
    const int64_t n = std::min(kXentBlockRows, rows - r0);
    xent_block(x + r0 * classes, labels + r0, g + r0 * classes, n, classes, sums, label_shift);
    for (int64_t r = 0; r < n; ++r) loss[r0 + r] = static_cast<float>(std::log(sums[r]) - label_shift[r]);
  }
}

// f(first row, rows) over whole rows in chunks of about kElementwiseChunk elements.
template <class F>
void for_rows(CpuDevice& d, int64_t rows, int64_t classes, F&& f) {
  const int64_t per_chunk = std::max<int64_t>(1, kElementwiseChunk / classes);
  d.pool().for_ranges(rows, per_chunk, rows * classes >= kElementwiseSerial,
                      [&](int, int64_t b, int64_t e) { f(b, e - b); });
}

void softmax(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const int64_t classes = x.dim(-1);  // >= 1 (the op table's rule)
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for_rows(d, x.numel() / classes, classes,
           [&](int64_t r0, int64_t n) { softmax_rows(xp + r0 * classes, yp + r0 * classes, n, classes); });
}

void softmax_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  const int64_t classes = dy.dim(-1);
  if (classes == 0) return;
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  for_rows(d, dy.numel() / classes, classes, [&](int64_t r0, int64_t n) {
    softmax_grad_rows(g + r0 * classes, yp + r0 * classes, out + r0 * classes, n, classes);
  });
}

void sparse_softmax_xent(CpuDevice& d, const KernelCall& c) {
  TensorRef logits = c.input(0), labels = c.input(1), loss = c.output(0), grad = c.output(1);
  const int64_t n = logits.dim(0), k = logits.dim(1);  // k >= 1 (the op table's rule)
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  for (int64_t i = 0; i < n; ++i)
    AXON_CHECK(lb[i] >= 0 && lb[i] < k, "%s: label %d at index %lld is outside [0, %lld)", c.op(), lb[i],
                                            static_cast<long long>(i), static_cast<long long>(k));
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  for_rows(d, n, k, [&](int64_t r0, int64_t rows) { xent_rows(lg + r0 * k, lb + r0, lo + r0, g + r0 * k, rows, k); });
}

}  // namespace

void add_softmax_kernels(sdk::KernelTable& t) {
  add<OpId::Softmax, softmax>(t);
  add<OpId::SoftmaxGrad, softmax_grad>(t);
  add<OpId::SparseSoftmaxCrossEntropyWithLogits, sparse_softmax_xent>(t);
}

}  // namespace axon::cpu
