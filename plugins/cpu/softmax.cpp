// Softmax and its gradient over the last dimension, one row at a time,
// rows in fixed chunks over the device's threads. A row's sum is in double,
// in 16 running sums (element j into sum j % 16) added in a fixed order:
// the same sums on every instruction set and thread count. Softmax: the row's
// maximum, e^(x - max) into y (vec_math.hpp), then y times 1 / sum.
// SoftmaxGrad: dx = (dy - sum(dy * y)) * y, the products exact in double.
#include "elementwise.hpp"
#include "kernels.hpp"
#include "vec_math.hpp"

#include <algorithm>

namespace axon::cpu {
namespace {

constexpr int kSums = 16;

// sum of p[0 .. n) in double, kSums running sums combined in order.
double row_sum(const float* p, int64_t n) {
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
double row_dot(const float* a, const float* b, int64_t n) {
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

}  // namespace

void add_softmax_kernels(sdk::KernelTable& t) {
  add<OpId::Softmax, softmax>(t);
  add<OpId::SoftmaxGrad, softmax_grad>(t);
}

}  // namespace axon::cpu
