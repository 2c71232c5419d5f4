// LayerNorm and LayerNormGrad: each row of x [R, K] normalised over its own
// K values. A row is one thread's work, its sums taken in double over
// kLanes running sums combined in order, so a row's results do not depend on
// the thread count; the rows' loops are compiled once per instruction set
// (simd.hpp's dispatch), each element taking the same operations in the same
// order in every copy (no FMA contraction in this file: CMakeLists.txt), so
// the results do not depend on the instruction set either. The gradient's
// per-column sums (scale and offset) keep one partial per chunk of rows,
// chunks fixed by the shape, added in chunk order.
#include "device.hpp"
#include "kernels.hpp"
#include "simd.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace axon::cpu {
namespace {

constexpr int kLanes = 8;
// Rows per chunk: about this many elements (fewer rows run on one thread).
constexpr int64_t kChunkElements = 1 << 14;
constexpr int64_t kSerialElements = 1 << 15;

int64_t chunk_rows(int64_t k) { return std::max<int64_t>(1, kChunkElements / k); }

// sum over j < k of f(j) in double, kLanes running sums combined in order.
template <class F>
__attribute__((always_inline)) inline double lane_sum(int64_t k, F f) {
  double s[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= k; j += kLanes)
    for (int l = 0; l < kLanes; ++l) s[l] += f(j + l);
  for (int l = 0; j + l < k; ++l) s[l] += f(j + l);
  double total = 0.0;
  for (double v : s) total += v;
  return total;
}

// Rows [r0, r1) of the forward. W: the instruction set's width, for the
// dispatch only (the loops are the compiler's to vectorise).
template <int W>
__attribute__((always_inline)) inline void forward_rows_body(const float* xp, const float* scale, const float* offset,
                                                             double eps, int64_t k, int64_t r0, int64_t r1, float* yp,
                                                             float* mean_out, float* inv_std_out) {
  for (int64_t i = r0; i < r1; ++i) {
    const float* row = xp + i * k;
    const double mean = lane_sum(k, [&](int64_t j) __attribute__((always_inline)) { return double(row[j]); }) / double(k);
    const double var =
        lane_sum(k, [&](int64_t j) __attribute__((always_inline)) { return (row[j] - mean) * (row[j] - mean); }) /
        double(k);
    const float m = static_cast<float>(mean), r = static_cast<float>(1.0 / std::sqrt(var + eps));
    float* y = yp + i * k;
    for (int64_t j = 0; j < k; ++j) y[j] = (row[j] - m) * r * scale[j] + offset[j];
    mean_out[i] = m;
    inv_std_out[i] = r;
  }
}
AXON_CPU_DISPATCH(forward_rows,
                  (const float* xp, const float* scale, const float* offset, double eps, int64_t k, int64_t r0,
                   int64_t r1, float* yp, float* mean_out, float* inv_std_out),
                  (xp, scale, offset, eps, k, r0, r1, yp, mean_out, inv_std_out))

// Rows [r0, r1) of the gradient: dx, and the chunk's column sums of dy xhat
// (ds) and dy (dof), added to in row order.
template <int W>
__attribute__((always_inline)) inline void gradient_rows_body(const float* dy, const float* xp, const float* scale,
                                                              const float* mean, const float* inv_std, int64_t k,
                                                              int64_t r0, int64_t r1, float* dx, double* ds,
                                                              double* dof) {
  for (int64_t i = r0; i < r1; ++i) {
    const float* g = dy + i * k;
    const float* row = xp + i * k;
    const double m = mean[i], r = inv_std[i];
    auto xhat = [&](int64_t j) __attribute__((always_inline)) { return (row[j] - m) * r; };
    const double sum_g = lane_sum(k, [&](int64_t j) __attribute__((always_inline)) { return double(g[j]) * scale[j]; });
    const double sum_gx =
        lane_sum(k, [&](int64_t j) __attribute__((always_inline)) { return double(g[j]) * scale[j] * xhat(j); });
    const double mean_g = sum_g / double(k), mean_gx = sum_gx / double(k);
    float* out = dx + i * k;
    for (int64_t j = 0; j < k; ++j) {
      out[j] = static_cast<float>(r * (double(g[j]) * scale[j] - mean_g - xhat(j) * mean_gx));
      ds[j] += g[j] * xhat(j);
      dof[j] += g[j];
    }
  }
}
AXON_CPU_DISPATCH(gradient_rows,
                  (const float* dy, const float* xp, const float* scale, const float* mean, const float* inv_std,
                   int64_t k, int64_t r0, int64_t r1, float* dx, double* ds, double* dof),
                  (dy, xp, scale, mean, inv_std, k, r0, r1, dx, ds, dof))

void layer_norm(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0);
  const int64_t rows = x.dim(0), k = x.dim(1);
  const double eps = c.attrs<axon_layer_norm_attrs>().epsilon;
  const float* xp = x.data<float>();
  const float* scale = c.input(1).data<float>();
  const float* offset = c.input(2).data<float>();
  float* yp = c.output(0).data<float>();
  float* mean_out = c.output(1).data<float>();
  float* inv_std_out = c.output(2).data<float>();
  d.pool().for_ranges(rows, chunk_rows(k), rows * k >= kSerialElements, [&](int, int64_t r0, int64_t r1) {
    forward_rows(xp, scale, offset, eps, k, r0, r1, yp, mean_out, inv_std_out);
  });
}

void layer_norm_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(1);
  const int64_t rows = x.dim(0), k = x.dim(1);
  const float* dy = c.input(0).data<float>();
  const float* xp = x.data<float>();
  const float* scale = c.input(2).data<float>();
  const float* mean = c.input(3).data<float>();
  const float* inv_std = c.input(4).data<float>();
  float* dx = c.output(0).data<float>();
  const int64_t per_chunk = chunk_rows(k), chunks = (rows + per_chunk - 1) / per_chunk;
  // Per chunk: k sums of dy * xhat, then k sums of dy.
  std::vector<double> partial(static_cast<size_t>(chunks * 2 * k));
  d.pool().for_ranges(rows, per_chunk, rows * k >= kSerialElements, [&](int, int64_t r0, int64_t r1) {
    double* ds = partial.data() + (r0 / per_chunk) * 2 * k;
    gradient_rows(dy, xp, scale, mean, inv_std, k, r0, r1, dx, ds, ds + k);
  });
  float* dscale = c.output(1).data<float>();
  float* doffset = c.output(2).data<float>();
  for (int64_t j = 0; j < k; ++j) {
    double s = 0.0, o = 0.0;
    for (int64_t ch = 0; ch < chunks; ++ch) {
      s += partial[static_cast<size_t>(ch * 2 * k + j)];
      o += partial[static_cast<size_t>(ch * 2 * k + k + j)];
    }
    dscale[j] = static_cast<float>(s);
    doffset[j] = static_cast<float>(o);
  }
}

}  // namespace

void add_layer_norm_kernels(sdk::KernelTable& t) {
  add<OpId::LayerNorm, layer_norm>(t);
  add<OpId::LayerNormGrad, layer_norm_grad>(t);
}

}  // namespace axon::cpu
