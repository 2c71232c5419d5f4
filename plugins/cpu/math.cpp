// Everything but convolution and pooling: MatMul on sgemm, the elementwise
// ops, reductions (accumulated in double, per thread, added in thread order),
// the loss, InTopK and the accuracy metric, and the Adam update.
#include "blas.hpp"
#include "device.hpp"
#include "flush_denormals.hpp"
#include "kernels.hpp"
#include "simd.hpp"
#include "small_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace axon::cpu {
namespace {

// Loops below kSerialElements run on the calling thread; larger ones are cut
// into chunks of kChunkElements (fixed, so reductions are reproducible).
constexpr int64_t kSerialElements = 1 << 15;
constexpr int64_t kChunkElements = 1 << 14;
// A MatMul's blocks of C (below): about 10 us of one core at sgemm's rate.
constexpr int64_t kMatMulChunkMacs = 1 << 19;
constexpr int64_t kMatMulBlocks = 64;

template <class F>
void elementwise(CpuDevice& d, int64_t n, F&& f) {
  d.pool().for_ranges(n, kChunkElements, n >= kSerialElements, [&](int, int64_t b, int64_t e) { f(b, e); });
}

// ------------------------------------------------------------------ MatMul

// c = ep(op(a) * op(b)); the epilogue (bias, relu) runs on each block of rows
// right after its sgemm, while it is in cache.
void mat_mul_into(CpuDevice& d, const KernelCall& c, const axon_matmul_attrs& at, const Epilogue& ep) {
  TensorRef a = c.input(0), b = c.input(1), out = c.output(0);
  const bool ta = at.transpose_a != 0, tb = at.transpose_b != 0;
  const int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  const int64_t n = tb ? b.dim(0) : b.dim(1);
  AXON_CHECK(m < (int64_t{1} << 31) && n < (int64_t{1} << 31) && k < (int64_t{1} << 31),
             "%s: dimensions of a %s and b %s exceed the BLAS limit of 2^31-1", c.op(), a.shape_string().c_str(),
             b.shape_string().c_str());
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* cp = out.data<float>();
  if (m * n == 0) return;
  if (k == 0) {
    std::memset(cp, 0, sizeof(float) * static_cast<size_t>(m * n));
    return apply_epilogue(cp, m, n, ep);
  }
  // A short inner dimension (a Dense layer's input gradient dy * W^T, K its
  // units): the register-blocked kernel against op(B) laid out [k, n], as the
  // pointwise convolutions take it, instead of sgemm's packing.
  const bool small_k = !ta && k < kSmallK && simd::isa() != simd::Isa::base;
  const float* b_kn = !small_k ? nullptr : tb ? transposed(d, bp, n, k) : bp;
  const bool parallel = m * n * k >= (1 << 18);
  if (small_k) {
    const int64_t rows = std::max<int64_t>(16, (1 << 16) / (n * k));
    return d.pool().for_ranges(m, rows, parallel, [&](int, int64_t r0, int64_t r1) {
      small_k_gemm(ap + r0 * k, r1 - r0, k, b_kn, n, cp + r0 * n, ep);
    });
  }
  // C split over threads in blocks of about kMatMulChunkMacs multiply-adds:
  // sgemm packs the whole of one operand for each block, so blocks of rows
  // where op(B) [k, n] is the smaller, of columns where op(A) [m, k] is, and
  // at most kMatMulBlocks of them (a large product packs it that often at most).
  // Rows of op(A) start at row i of A, or at column i when A is transposed;
  // columns of op(B) at column j of B, or at row j when B is transposed.
  const bool by_rows = n <= m;
  const int64_t extent = by_rows ? m : n, other = by_rows ? n : m;
  const int64_t blocks = std::clamp<int64_t>(extent * other * k / kMatMulChunkMacs, 1, kMatMulBlocks);
  const int64_t block = ((extent + blocks - 1) / blocks + 15) / 16 * 16;
  d.pool().for_ranges(extent, block, parallel, [&](int, int64_t i0, int64_t i1) {
    if (by_rows) {
      const float* a0 = ta ? ap + i0 : ap + i0 * k;
      sgemm(ta, tb, i1 - i0, n, k, a0, ta ? m : k, bp, tb ? k : n, 0.0f, cp + i0 * n, n);
      return apply_epilogue(cp + i0 * n, i1 - i0, n, ep);
    }
    const float* b0 = tb ? bp + i0 * k : bp + i0;
    sgemm(ta, tb, m, i1 - i0, k, ap, ta ? m : k, b0, tb ? k : n, 0.0f, cp + i0, n);
    if (!ep.any()) return;
    Epilogue part = ep;
    if (part.bias != nullptr) part.bias += i0;
    for (int64_t r = 0; r < m; ++r) apply_epilogue(cp + r * n + i0, 1, i1 - i0, part);
  });
}

void mat_mul(CpuDevice& d, const KernelCall& c) { mat_mul_into(d, c, c.attrs<axon_matmul_attrs>(), Epilogue{}); }

void fused_mat_mul(CpuDevice& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_matmul_attrs>();
  TensorRef bias = c.input(2);
  Epilogue ep;
  ep.bias = bias.numel() > 0 ? bias.data<float>() : nullptr;
  ep.relu = a.activation == AXON_ACTIVATION_RELU;
  mat_mul_into(d, c, a.matmul, ep);
}

// ------------------------------------------------------------------ elementwise

// y = x > 0 ? x : 0 (NaN -> 0), W lanes at a time: the loop GCC vectorised
// for the baseline on its own ran 40 us at 28x28x16 in one build of the
// plugin and 58 us in the next, its source unchanged (axon-bench-layers,
// alternated); this runs 41-44 us in that second build.
template <int W>
__attribute__((always_inline)) inline void relu_range_body(const float* x, float* y, int64_t n) {
  using F = typename simd::Vec<W>::f;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const F v = simd::load<F>(x + i);
    simd::store<F>(y + i, v > F{} ? v : F{});
  }
  for (; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
AXON_CPU_DISPATCH(relu_range, (const float* x, float* y, int64_t n), (x, y, n))

void relu(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  elementwise(d, x.numel(), [&](int64_t b, int64_t e) { relu_range(xp + b, yp + b, e - b); });
}

void relu_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  elementwise(d, dy.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float gi = g[i];  // loaded unconditionally: a select, not a branch
      out[i] = yp[i] > 0.0f ? gi : 0.0f;
    }
  });
}

void bias_add(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), bias = c.input(1), y = c.output(0);
  const int64_t ch = bias.dim(0);
  if (ch == 0) return;
  const float* xp = x.data<float>();
  const float* bp = bias.data<float>();
  float* yp = y.data<float>();
  d.pool().for_ranges(x.numel() / ch, kChunkElements / ch + 1, x.numel() >= kSerialElements, [&](int, int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t i = 0; i < ch; ++i) yp[r * ch + i] = xp[r * ch + i] + bp[i];
  });
}

void bias_add_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), db = c.output(0);
  const int64_t ch = dy.dim(-1);
  if (ch == 0) return;
  const int64_t rows = dy.numel() / ch;
  const float* g = dy.data<float>();
  float* out = db.data<float>();
  // Double sums per chunk of rows, added in chunk order.
  const int64_t rows_per_chunk = bias_grad_rows_per_chunk(ch), chunks = chunk_count(rows, rows_per_chunk);
  double* acc = d.partials_f64(static_cast<size_t>(std::max<int64_t>(chunks, 1) * ch));
  d.pool().for_ranges(rows, rows_per_chunk, dy.numel() >= kSerialElements, [&](int, int64_t b, int64_t e) {
    double* a = acc + (b / rows_per_chunk) * ch;
    // Eight channels at a time down the rows: the sums stay in registers
    // (a loop over all channels per row would store and reload each one).
    int64_t c0 = 0;
    for (; c0 + 8 <= ch; c0 += 8) {
      double s8[8] = {};
      for (int64_t r = b; r < e; ++r)
        for (int j = 0; j < 8; ++j) s8[j] += g[r * ch + c0 + j];
      for (int j = 0; j < 8; ++j) a[c0 + j] = s8[j];
    }
    for (; c0 < ch; ++c0) {
      double s1 = 0.0;
      for (int64_t r = b; r < e; ++r) s1 += g[r * ch + c0];
      a[c0] = s1;
    }
  });
  for (int64_t i = 0; i < ch; ++i) {
    double s = 0.0;
    for (int64_t t = 0; t < chunks; ++t) s += acc[t * ch + i];
    out[i] = static_cast<float>(s);
  }
}

// Rows [r0, r1) of dx = ReluGrad(dy, y) for channels [c0, c0 + L), with
// their per-channel sums (in double, rows in order: the same sums
// BiasAddGrad makes) written to a[c0 ...]. The selects as vector blends (a
// scalar loop here turns the select into a mispredicted branch).
template <int L>
__attribute__((always_inline)) inline void relu_grad_sums_lanes(const float* g, const float* y, float* out, int64_t r0,
                                                                 int64_t r1, int64_t ch, int64_t c0, double* a) {
  using F = typename simd::Vec<L>::f;
  simd::DoubleSum<L> s;  // two native-width halves: one 2L-wide double vector went through the stack
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t i = r * ch + c0;
    const F gv = simd::load<F>(g + i), yv = simd::load<F>(y + i);
    const F v = yv > F{} ? gv : F{};
    simd::store<F>(out + i, v);
    s.add(v);
  }
  s.store(a + c0);
}

// One vector of channels at a time down the rows; few channels (an Inception
// branch's 4 or 8) in half and quarter vectors, since each channel's double
// sum is a chain as long as the rows: one chain per lane, not per channel.
template <int W>
__attribute__((always_inline)) inline void relu_grad_sums_body(const float* g, const float* y, float* out, int64_t r0,
                                                                int64_t r1, int64_t ch, double* a) {
  int64_t c0 = 0;
  for (; c0 + W <= ch; c0 += W) relu_grad_sums_lanes<W>(g, y, out, r0, r1, ch, c0, a);
  if constexpr (W >= 8)
    if (c0 + W / 2 <= ch) relu_grad_sums_lanes<W / 2>(g, y, out, r0, r1, ch, c0, a), c0 += W / 2;
  if constexpr (W >= 16)
    if (c0 + W / 4 <= ch) relu_grad_sums_lanes<W / 4>(g, y, out, r0, r1, ch, c0, a), c0 += W / 4;
  for (; c0 < ch; ++c0) {
    double s1 = 0.0;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t i = r * ch + c0;
      const float gi = g[i];
      const float v = y[i] > 0.0f ? gi : 0.0f;
      out[i] = v;
      s1 += v;
    }
    a[c0] = s1;
  }
}

AXON_CPU_DISPATCH(relu_grad_sums,
                  (const float* g, const float* y, float* out, int64_t r0, int64_t r1, int64_t ch, double* a),
                  (g, y, out, r0, r1, ch, a))

// dx = ReluGrad(dy, y) and dbias = BiasAddGrad(dx) in one pass over dy and y:
// the same chunks and double sums as BiasAddGrad, so the results are
// bit-identical to the two ops run apart.
void relu_grad_bias_add_grad(CpuDevice& d, const KernelCall& c) {
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0), db = c.output(1);
  const int64_t ch = dy.dim(-1);
  if (ch == 0) return;
  const int64_t rows = dy.numel() / ch;
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  float* bias_out = db.data<float>();
  const int64_t rows_per_chunk = bias_grad_rows_per_chunk(ch), chunks = chunk_count(rows, rows_per_chunk);
  double* acc = d.partials_f64(static_cast<size_t>(std::max<int64_t>(chunks, 1) * ch));
  d.pool().for_ranges(rows, rows_per_chunk, dy.numel() >= kSerialElements, [&](int, int64_t b, int64_t e) {
    relu_grad_sums(g, yp, out, b, e, ch, acc + (b / rows_per_chunk) * ch);
  });
  for (int64_t i = 0; i < ch; ++i) {
    double s = 0.0;
    for (int64_t t = 0; t < chunks; ++t) s += acc[t * ch + i];
    bias_out[i] = static_cast<float>(s);
  }
}

void scale(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float alpha = c.attrs<axon_scale_attrs>().alpha;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  elementwise(d, x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) yp[i] = alpha * xp[i];
  });
}

// Sums in float, inputs in order (the rounding of adding them one by one),
// a vector of every input loaded before its sum is stored: the output may be
// the very buffer of any input.
template <int W>
__attribute__((always_inline)) inline void add_n_range_body(const float* const* xs, int inputs, float* y, int64_t b,
                                                             int64_t e) {
  using F = typename simd::Vec<W>::f;
  int64_t i = b;
  for (; i + W <= e; i += W) {
    F v = simd::load<F>(xs[0] + i);
    for (int k = 1; k < inputs; ++k) v += simd::load<F>(xs[k] + i);
    simd::store<F>(y + i, v);
  }
  for (; i < e; ++i) {
    float v = xs[0][i];
    for (int k = 1; k < inputs; ++k) v += xs[k][i];
    y[i] = v;
  }
}

AXON_CPU_DISPATCH(add_n_range, (const float* const* xs, int inputs, float* y, int64_t b, int64_t e),
                  (xs, inputs, y, b, e))

void add_n(CpuDevice& d, const KernelCall& c) {
  TensorRef y = c.output(0);
  const int inputs = c.num_inputs();
  std::vector<const float*> xs(static_cast<size_t>(inputs));
  for (int k = 0; k < inputs; ++k) xs[static_cast<size_t>(k)] = c.input(k).data<float>();
  float* yp = y.data<float>();
  elementwise(d, y.numel(), [&](int64_t b, int64_t e) { add_n_range(xs.data(), inputs, yp, b, e); });
}

void fill(CpuDevice& d, const KernelCall& c) {
  TensorRef y = c.output(0);
  const float v = c.attrs<axon_fill_attrs>().value;
  float* yp = y.data<float>();
  elementwise(d, y.numel(), [&](int64_t b, int64_t e) { std::fill(yp + b, yp + e, v); });
}

void normalize_image(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const uint8_t* xp = x.data<uint8_t>();
  float* yp = y.data<float>();
  // x / 255 with one correctly rounded float division: exactly the reference.
  elementwise(d, x.numel(), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) yp[i] = static_cast<float>(xp[i]) / 255.0f;
  });
}

void identity(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  if (x.numel() == 0 || x.raw() == y.raw()) return;
  const auto* src = static_cast<const char*>(x.raw());
  auto* dst = static_cast<char*>(y.raw());
  const int64_t bytes = x.numel() * static_cast<int64_t>(sdk::dtype_size(x.dtype()));
  d.pool().for_ranges(bytes, 1 << 18, bytes >= (1 << 20), [&](int, int64_t b, int64_t e) {
    std::memmove(dst + b, src + b, static_cast<size_t>(e - b));
  });
}

// ------------------------------------------------------------------ reductions, loss, metric

void sum(CpuDevice& d, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  const int64_t n = x.numel();
  const int64_t chunks = chunk_count(n, kChunkElements);
  double* acc = d.partials_f64(static_cast<size_t>(std::max<int64_t>(chunks, 1)));
  d.pool().for_ranges(n, kChunkElements, n >= kSerialElements, [&](int, int64_t b, int64_t e) {
    double s = 0.0;
    for (int64_t i = b; i < e; ++i) s += xp[i];
    acc[b / kChunkElements] = s;
  });
  double s = 0.0;
  for (int64_t t = 0; t < chunks; ++t) s += acc[t];
  *y.data<float>() = static_cast<float>(s);
}

// TensorFlow's InTopK (k = 1) and InTopKV2: 1 where the label's logit is
// finite and fewer than k logits of the row are greater (ties count); a NaN
// or infinity anywhere in the row, or a label outside [0, C), gives 0.
void in_top_k_rows(const KernelCall& c, int64_t top) {
  TensorRef logits = c.input(0), labels = c.input(1), out = c.output(0);
  const int64_t n = logits.dim(0), k = logits.dim(1);
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* row = lg + i * k;
    if (lb[i] < 0 || lb[i] >= k) {
      o[i] = 0.0f;
      continue;
    }
    const float target = row[lb[i]];
    bool finite = true;
    int64_t greater = 0;
    for (int64_t j = 0; j < k; ++j) {
      finite = finite && std::isfinite(row[j]);
      greater += row[j] > target;
    }
    o[i] = finite && greater < top ? 1.0f : 0.0f;
  }
}

void in_top_k(CpuDevice&, const KernelCall& c) { in_top_k_rows(c, 1); }
void in_top_k_v2(CpuDevice&, const KernelCall& c) { in_top_k_rows(c, c.attrs<axon_in_top_k_attrs>().k); }

// Keras' accuracy: 1 where the label is the first index of the row's
// largest logit (tf.argmax's tie rule); out-of-range labels give 0.
void sparse_categorical_accuracy(CpuDevice&, const KernelCall& c) {
  TensorRef logits = c.input(0), labels = c.input(1), out = c.output(0);
  const int64_t n = logits.dim(0), k = logits.dim(1);
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < k; ++j)
      if (lg[i * k + j] > lg[i * k + best]) best = j;
    o[i] = lb[i] == best ? 1.0f : 0.0f;
  }
}

// ------------------------------------------------------------------ ApplyAdam

struct AdamStep {
  float lr_t, b1, b2, eps;
};

// The update loop, vectorised by the compiler for each instruction set
// (sqrt and divide dominate; AVX-512 does 16 at a time).
template <int W>
__attribute__((always_inline)) inline void adam_update_body(const AdamStep& s, float* __restrict var, float* __restrict m,
                                                             float* __restrict v, const float* __restrict g, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = s.b1 * m[i] + (1.0f - s.b1) * gi;
    const float vi = s.b2 * v[i] + (1.0f - s.b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    var[i] -= s.lr_t * mi / (std::sqrt(vi) + s.eps);
  }
}

AXON_CPU_DISPATCH(adam_update, (const AdamStep& s, float* var, float* m, float* v, const float* g, int64_t n),
                  (s, var, m, v, g, n))

// Keras Adam in float: lr_t = lr*sqrt(1-b2^t)/(1-b1^t) (computed in double once);
// m = b1*m + (1-b1)*g; v = b2*v + (1-b2)*g^2; var -= lr_t*m/(sqrt(v)+eps).
void apply_adam(CpuDevice& d, const KernelCall& c) {
  TensorRef var = c.input(0), m = c.input(1), v = c.input(2), g = c.input(3);
  const auto& a = c.attrs<axon_adam_attrs>();
  const double t = double(a.step);
  const float lr_t = static_cast<float>(a.learning_rate * std::sqrt(1.0 - std::pow(double(a.beta_2), t)) /
                                        (1.0 - std::pow(double(a.beta_1), t)));
  const float b1 = a.beta_1, b2 = a.beta_2, eps = a.epsilon;
  float* vp = var.data<float>();
  float* mp = m.data<float>();
  float* vv = v.data<float>();
  const float* gp = g.data<float>();
  const AdamStep step{lr_t, b1, b2, eps};
  elementwise(d, var.numel(), [&](int64_t b, int64_t e) {
    const FlushDenormals flush;
    adam_update(step, vp + b, mp + b, vv + b, gp + b, e - b);
  });
}

}  // namespace

void add_math_kernels(sdk::KernelTable& t) {
  add<OpId::Relu, relu>(t);
  add<OpId::ReluGrad, relu_grad>(t);
  add<OpId::MatMul, mat_mul>(t);
  add<OpId::FusedMatMul, fused_mat_mul>(t);
  add<OpId::FusedReluGradBiasAddGrad, relu_grad_bias_add_grad>(t);
  add<OpId::BiasAdd, bias_add>(t);
  add<OpId::BiasAddGrad, bias_add_grad>(t);
  add<OpId::ApplyAdam, apply_adam>(t);
  add<OpId::InTopK, in_top_k>(t);
  add<OpId::InTopKV2, in_top_k_v2>(t);
  add<OpId::SparseCategoricalAccuracy, sparse_categorical_accuracy>(t);
  add<OpId::Sum, sum>(t);
  add<OpId::Fill, fill>(t);
  add<OpId::Scale, scale>(t);
  add<OpId::AddN, add_n>(t);
  add<OpId::NormalizeImage, normalize_image>(t);
  add<OpId::Identity, identity>(t);
}

void add_range(float* y, const float* x, int64_t n) {
  const float* xs[] = {y, x};
  add_n_range(xs, 2, y, 0, n);
}

}  // namespace axon::cpu
