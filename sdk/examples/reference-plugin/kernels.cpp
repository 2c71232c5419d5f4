// Naive, obviously correct kernels for every op of plugin_abi.h. Each call is
// checked against the op table first (the SDK's validator names the op and the
// tensor that is wrong); sums are accumulated in double. Speed is not a goal:
// this is the oracle the real backends are tested against.
#include "kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace ref {
namespace {

using namespace axon::sdk;

using axon::ConvGeometry;
using axon::PoolGeometry;

// Calls f(n, oh, ow, kh, kw, x_index_base) for every (output pixel, tap) that
// reads a real (not padded) input pixel; x_index_base indexes x[n,ih,iw,0].
template <class F>
void for_each_tap(const ConvGeometry& g, F&& f) {
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oh = 0; oh < g.oh; ++oh)
      for (int64_t ow = 0; ow < g.ow; ++ow)
        for (int64_t kh = 0; kh < g.kh; ++kh) {
          int64_t ih = oh * g.sh - g.pad_h + kh * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          for (int64_t kw = 0; kw < g.kw; ++kw) {
            int64_t iw = ow * g.sw - g.pad_w + kw * g.dw;
            if (iw < 0 || iw >= g.w) continue;
            f(n, oh, ow, kh, kw, ((n * g.h + ih) * g.w + iw) * g.c);
          }
        }
}

void store(const std::vector<double>& acc, float* out) {
  for (size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
}

// ------------------------------------------------------------------ convolution

void conv2d(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), f = c.input(1), y = c.output(0);
  const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), f.c());
  const float* xp = x.data<float>();
  const float* fp = f.data<float>();
  std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
  for_each_tap(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t xi) {
    double* out = &acc[static_cast<size_t>(((n * g.oh + oh) * g.ow + ow) * g.oc)];
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t o = 0; o < g.oc; ++o) out[o] += double(xp[xi + ci]) * fp[((kh * g.kw + kw) * g.c + ci) * g.oc + o];
  });
  store(acc, y.data<float>());
}

// dx[x pixel] += dy[y pixel] * filter for every tap that read that pixel.
// _Conv2DBackpropInputAccumulate (dx its first input, updated in place) adds
// that gradient, rounded to float, to dx in float: Conv2DBackpropInput then
// AddN, the ops it stands for.
void conv2d_backprop_input(Device&, const KernelCall& c) {
  const bool accumulate = c.num_outputs() == 0;
  const int first = accumulate ? 1 : 0;  // dy's input
  TensorRef dy = c.input(first), f = c.input(first + 1), dx = accumulate ? c.input(0) : c.output(0);
  const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), dx.c(), f.c());
  const float* dyp = dy.data<float>();
  const float* fp = f.data<float>();
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  for_each_tap(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t xi) {
    const float* d = dyp + ((n * g.oh + oh) * g.ow + ow) * g.oc;
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t o = 0; o < g.oc; ++o) acc[static_cast<size_t>(xi + ci)] += double(d[o]) * fp[((kh * g.kw + kw) * g.c + ci) * g.oc + o];
  });
  float* out = dx.data<float>();
  if (!accumulate) return store(acc, out);
  for (size_t i = 0; i < acc.size(); ++i) out[i] += static_cast<float>(acc[i]);
}

// dfilter[tap, ci, o] += x[pixel read by the tap] * dy[output pixel].
void conv2d_backprop_filter(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), dy = c.input(1), df = c.output(0);
  const ConvGeometry g = axon::conv_geometry(c.attrs<axon_conv2d_attrs>(), x.c(), df.c());
  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  std::vector<double> acc(static_cast<size_t>(df.numel()), 0.0);
  for_each_tap(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t xi) {
    const float* d = dyp + ((n * g.oh + oh) * g.ow + ow) * g.oc;
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t o = 0; o < g.oc; ++o) acc[static_cast<size_t>(((kh * g.kw + kw) * g.c + ci) * g.oc + o)] += double(xp[xi + ci]) * d[o];
  });
  store(acc, df.data<float>());
}

// ------------------------------------------------------------------ max pooling

// Index into x of the first maximum (row-major scan) of the window of y[n,oh,ow,ch];
// padded positions take no part. A window always holds at least one real pixel.
// `tap`, when given, receives that maximum's place in the window, kh * window_w
// + kw, counted from the window's unclipped top-left corner.
int64_t argmax_in_window(const PoolGeometry& p, const float* x, int64_t n, int64_t oh, int64_t ow, int64_t ch,
                         int64_t* tap = nullptr) {
  int64_t best = -1;
  for (int64_t kh = 0; kh < p.kh; ++kh) {
    int64_t ih = oh * p.sh - p.pad_h + kh;
    if (ih < 0 || ih >= p.h) continue;
    for (int64_t kw = 0; kw < p.kw; ++kw) {
      int64_t iw = ow * p.sw - p.pad_w + kw;
      if (iw < 0 || iw >= p.w) continue;
      int64_t i = ((n * p.h + ih) * p.w + iw) * p.c + ch;
      if (best < 0 || x[i] > x[best]) {
        best = i;
        if (tap != nullptr) *tap = kh * p.kw + kw;
      }
    }
  }
  return best;
}

void max_pool(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const PoolGeometry p = axon::pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow)
        for (int64_t ch = 0; ch < p.c; ++ch)
          yp[((n * p.oh + oh) * p.ow + ow) * p.c + ch] = xp[argmax_in_window(p, xp, n, oh, ow, ch)];
}

// The whole gradient of each window goes to its first maximum, as in TensorFlow.
void max_pool_grad(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), dy = c.input(2), dx = c.output(0);
  const PoolGeometry p = axon::pool_geometry(c.attrs<axon_pool_attrs>(), x.c());
  const float* xp = x.data<float>();
  const float* dyp = dy.data<float>();
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow)
        for (int64_t ch = 0; ch < p.c; ++ch)
          acc[static_cast<size_t>(argmax_in_window(p, xp, n, oh, ow, ch))] += dyp[((n * p.oh + oh) * p.ow + ow) * p.c + ch];
  store(acc, dx.data<float>());
}

// ------------------------------------------------------------------ elementwise

void relu(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] > 0.0f ? xp[i] : 0.0f;
}

void relu_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) out[i] = yp[i] > 0.0f ? g[i] : 0.0f;
}

void scale(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  float alpha = c.attrs<axon_scale_attrs>().alpha;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = alpha * xp[i];
}

void add_n(Device&, const KernelCall& c) {
  TensorRef y = c.output(0);
  std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
  for (int k = 0; k < c.num_inputs(); ++k) {
    const float* xp = c.input(k).data<float>();
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += xp[i];
  }
  store(acc, y.data<float>());
}

void fill(Device&, const KernelCall& c) {
  TensorRef y = c.output(0);
  float v = c.attrs<axon_fill_attrs>().value;
  float* yp = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) yp[i] = v;
}

void normalize_image(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const uint8_t* xp = x.data<uint8_t>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = static_cast<float>(xp[i] / 255.0);
}

void identity(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  if (x.numel() > 0 && x.raw() != y.raw())
    std::memmove(y.raw(), x.raw(), static_cast<size_t>(x.numel()) * dtype_size(x.dtype()));
}

// ------------------------------------------------------------------ matmul and bias

void mat_mul(Device&, const KernelCall& c) {
  TensorRef a = c.input(0), b = c.input(1), out = c.output(0);
  const auto& at = c.attrs<axon_matmul_attrs>();
  bool ta = at.transpose_a != 0, tb = at.transpose_b != 0;
  int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  int64_t n = tb ? b.dim(0) : b.dim(1);
  const float* ap = a.data<float>();
  const float* bp = b.data<float>();
  float* cp = out.data<float>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0.0;
      for (int64_t p = 0; p < k; ++p) s += double(ta ? ap[p * m + i] : ap[i * k + p]) * (tb ? bp[j * k + p] : bp[p * n + j]);
      cp[i * n + j] = static_cast<float>(s);
    }
}

void bias_add(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), bias = c.input(1), y = c.output(0);
  int64_t ch = bias.dim(0);
  const float* xp = x.data<float>();
  const float* bp = bias.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] + bp[i % ch];
}

void bias_add_grad(Device&, const KernelCall& c) {
  TensorRef dy = c.input(0), db = c.output(0);
  int64_t ch = dy.dim(-1);
  std::vector<double> acc(static_cast<size_t>(ch), 0.0);
  const float* g = dy.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) acc[static_cast<size_t>(i % ch)] += g[i];
  store(acc, db.data<float>());
}

// ------------------------------------------------------------------ fused ops
// Compositions of the kernels above (the oracle for fast fused kernels): each
// step runs as a call of its own, well-formed since the fused call is.

// Runs kernel f on (inputs..., output) as its own call.
template <void (*F)(Device&, const KernelCall&)>
void run_step(Device& d, const KernelCall& c, std::vector<axon_tensor> in, axon_tensor out, const void* attrs) {
  axon_kernel_call s{};
  s.struct_size = sizeof s;
  s.op = c.op();
  s.num_inputs = static_cast<int32_t>(in.size());
  s.inputs = in.data();
  s.num_outputs = 1;
  s.outputs = &out;
  s.attrs = attrs;
  F(d, KernelCall(s));
}

void relu_in_place(const TensorRef& y) {
  float* p = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) p[i] = p[i] > 0.0f ? p[i] : 0.0f;
}

void fused_conv2d(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_conv2d_attrs>();
  TensorRef y = c.output(0);
  run_step<conv2d>(d, c, {c.input(0).c(), c.input(1).c()}, y.c(), &a.conv);
  run_step<bias_add>(d, c, {y.c(), c.input(2).c()}, y.c(), nullptr);
  if (a.activation == AXON_ACTIVATION_RELU) relu_in_place(y);
}

void fused_mat_mul(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_matmul_attrs>();
  TensorRef y = c.output(0);
  run_step<mat_mul>(d, c, {c.input(0).c(), c.input(1).c()}, y.c(), &a.matmul);
  run_step<bias_add>(d, c, {y.c(), c.input(2).c()}, y.c(), nullptr);
  if (a.activation == AXON_ACTIVATION_RELU) relu_in_place(y);
}

void fused_relu_grad_bias_add_grad(Device& d, const KernelCall& c) {
  TensorRef dx = c.output(0);
  run_step<relu_grad>(d, c, {c.input(0).c(), c.input(1).c()}, dx.c(), nullptr);
  run_step<bias_add_grad>(d, c, {dx.c()}, c.output(1).c(), nullptr);
}

// ------------------------------------------------------------------ convolution + max pooling (ABI 1.2)
// The forward is _FusedConv2D into a full-size z, then MaxPool; the argmax is
// the tap MaxPool's (and MaxPoolGrad's) first-maximum scan picks. The backward
// routes dy to those taps and runs the three gradient kernels above on dz.

axon_tensor float_tensor(std::vector<float>& buf, const std::vector<int64_t>& dims) {
  axon_tensor t{};
  t.data = buf.empty() ? nullptr : buf.data();
  t.dtype = AXON_FLOAT32;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
  return t;
}

// The pooling z -> y of the fused ops, z being the convolution's output.
PoolGeometry fused_pool_geometry(const axon_fused_conv2d_max_pool_attrs& a, const TensorRef& x, const TensorRef& f) {
  const ConvGeometry g = axon::conv_geometry(a.conv, x.c(), f.c());
  return axon::pool_geometry(a.pool, g.n, g.oh, g.ow, g.oc);
}

void fused_conv2d_max_pool(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_conv2d_max_pool_attrs>();
  TensorRef x = c.input(0), f = c.input(1), b = c.input(2), y = c.output(0), am = c.output(1);
  const PoolGeometry p = fused_pool_geometry(a, x, f);

  // z lives in ordinary host memory, which is what this device's memory is.
  std::vector<float> zbuf(static_cast<size_t>(p.n * p.h * p.w * p.c));
  const axon_tensor z = float_tensor(zbuf, {p.n, p.h, p.w, p.c});
  const axon_fused_conv2d_attrs fa{sizeof(axon_fused_conv2d_attrs), a.conv, a.activation};
  run_step<fused_conv2d>(d, c, {x.c(), f.c(), b.c()}, z, &fa);
  run_step<max_pool>(d, c, {z}, y.c(), &a.pool);

  const bool relu = a.activation == AXON_ACTIVATION_RELU;
  const float* yp = y.data<float>();
  uint8_t* ap = am.data<uint8_t>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow)
        for (int64_t ch = 0; ch < p.c; ++ch) {
          const int64_t i = ((n * p.oh + oh) * p.ow + ow) * p.c + ch;
          int64_t tap = 0;
          argmax_in_window(p, zbuf.data(), n, oh, ow, ch, &tap);
          // Under relu a maximum <= 0 is a clamped zero: relu passes no gradient there.
          ap[i] = relu && yp[i] <= 0.0f ? uint8_t{AXON_ARGMAX_NONE} : static_cast<uint8_t>(tap);
        }
}

void fused_conv2d_max_pool_grad(Device& d, const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_conv2d_max_pool_attrs>();
  TensorRef x = c.input(0), f = c.input(1), dy = c.input(2), am = c.input(3);
  TensorRef df = c.output(0), db = c.output(1);
  const PoolGeometry p = fused_pool_geometry(a, x, f);

  // dz: each window's dy added at its argmax tap, windows in row-major order
  // (float adds, so that a backend routing the same way matches bit for bit).
  std::vector<float> zbuf(static_cast<size_t>(p.n * p.h * p.w * p.c), 0.0f);
  const uint8_t* ap = am.data<uint8_t>();
  const float* dyp = dy.data<float>();
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t oh = 0; oh < p.oh; ++oh)
      for (int64_t ow = 0; ow < p.ow; ++ow)
        for (int64_t ch = 0; ch < p.c; ++ch) {
          const int64_t i = ((n * p.oh + oh) * p.ow + ow) * p.c + ch;
          if (ap[i] == AXON_ARGMAX_NONE) continue;
          require(ap[i] < p.kh * p.kw, format("%s: argmax %d at index %lld is neither a tap of the %lldx%lld pool window nor %d",
                                              c.op(), ap[i], static_cast<long long>(i), static_cast<long long>(p.kh),
                                              static_cast<long long>(p.kw), AXON_ARGMAX_NONE));
          const int64_t ih = oh * p.sh - p.pad_h + ap[i] / p.kw, iw = ow * p.sw - p.pad_w + ap[i] % p.kw;
          // A forward never picks padding; writing there would leave z.
          require(ih >= 0 && ih < p.h && iw >= 0 && iw < p.w,
                  format("%s: argmax %d at index %lld points into the pool window's padding", c.op(), ap[i],
                         static_cast<long long>(i)));
          zbuf[static_cast<size_t>(((n * p.h + ih) * p.w + iw) * p.c + ch)] += dyp[i];
        }
  const axon_tensor dz = float_tensor(zbuf, {p.n, p.h, p.w, p.c});
  run_step<bias_add_grad>(d, c, {dz}, db.c(), nullptr);
  run_step<conv2d_backprop_filter>(d, c, {x.c(), dz}, df.c(), &a.conv);
  if (c.num_outputs() == 3) run_step<conv2d_backprop_input>(d, c, {dz, f.c()}, c.output(2).c(), &a.conv);
}

// ------------------------------------------------------------------ loss, metrics, reductions

// loss = logsumexp(logits) - logits[label]; dlogits = softmax - onehot.
void sparse_softmax_xent(Device&, const KernelCall& c) {
  TensorRef logits = c.input(0), labels = c.input(1), loss = c.output(0), grad = c.output(1);
  const int64_t n = logits.dim(0), k = logits.dim(1);
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  for (int64_t i = 0; i < n; ++i)
    require(lb[i] >= 0 && lb[i] < k, format("%s: label %d at index %lld is outside [0, %lld)", c.op(), lb[i],
                                            static_cast<long long>(i), static_cast<long long>(k)));
  float* lo = loss.data<float>();
  float* g = grad.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* row = lg + i * k;
    double mx = row[0];
    for (int64_t j = 1; j < k; ++j) mx = std::max(mx, double(row[j]));
    double se = 0.0;
    for (int64_t j = 0; j < k; ++j) se += std::exp(row[j] - mx);
    double lse = mx + std::log(se);
    lo[i] = static_cast<float>(lse - row[lb[i]]);
    for (int64_t j = 0; j < k; ++j) g[i * k + j] = static_cast<float>(std::exp(row[j] - lse) - (j == lb[i] ? 1.0 : 0.0));
  }
}

// TensorFlow's InTopK (k = 1) and InTopKV2: the label's logit is finite and
// fewer than k logits of the row are greater (a tie counts); any NaN or
// infinity in the row, or a label outside [0, C), gives 0.
void in_top_k_rows(const KernelCall& c, int64_t top) {
  TensorRef logits = c.input(0), labels = c.input(1), out = c.output(0);
  const int64_t n = logits.dim(0), k = logits.dim(1);
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* row = lg + i * k;
    bool in_top = lb[i] >= 0 && lb[i] < k;
    int64_t greater = 0;
    for (int64_t j = 0; in_top && j < k; ++j) {
      in_top = std::isfinite(row[j]);
      if (row[j] > row[lb[i]]) ++greater;
    }
    o[i] = in_top && greater < top ? 1.0f : 0.0f;
  }
}

void in_top_k(Device&, const KernelCall& c) { in_top_k_rows(c, 1); }
void in_top_k_v2(Device&, const KernelCall& c) { in_top_k_rows(c, c.attrs<axon_in_top_k_attrs>().k); }

// Keras' sparse_categorical_accuracy: 1 where the label is the lowest index
// holding the row's largest logit (tf.argmax's tie rule).
void sparse_categorical_accuracy(Device&, const KernelCall& c) {
  TensorRef logits = c.input(0), labels = c.input(1), out = c.output(0);
  const int64_t n = logits.dim(0), k = logits.dim(1);
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* row = lg + i * k;
    o[i] = lb[i] == std::max_element(row, row + k) - row ? 1.0f : 0.0f;  // max_element: the first largest
  }
}

void sum(Device&, const KernelCall& c) {
  TensorRef x = c.input(0), y = c.output(0);
  const float* xp = x.data<float>();
  double s = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) s += xp[i];
  *y.data<float>() = static_cast<float>(s);
}

// Keras Adam: lr_t = lr*sqrt(1-b2^t)/(1-b1^t); m,v moving averages; var -= lr_t*m/(sqrt(v)+eps).
void apply_adam(Device&, const KernelCall& c) {
  TensorRef var = c.input(0), m = c.input(1), v = c.input(2), g = c.input(3);
  const auto& a = c.attrs<axon_adam_attrs>();
  double b1 = a.beta_1, b2 = a.beta_2, t = double(a.step);
  double lr_t = a.learning_rate * std::sqrt(1.0 - std::pow(b2, t)) / (1.0 - std::pow(b1, t));
  float* vp = var.data<float>();
  float* mp = m.data<float>();
  float* vv = v.data<float>();
  const float* gp = g.data<float>();
  for (int64_t i = 0; i < var.numel(); ++i) {
    double mi = b1 * mp[i] + (1.0 - b1) * gp[i];
    double vi = b2 * vv[i] + (1.0 - b2) * double(gp[i]) * gp[i];
    mp[i] = static_cast<float>(mi);
    vv[i] = static_cast<float>(vi);
    vp[i] = static_cast<float>(vp[i] - lr_t * mi / (std::sqrt(vi) + a.epsilon));
  }
}

// ------------------------------------------------------------------ optimizers of ABI 1.6 (Keras 3's rules)

void apply_sgd(Device&, const KernelCall& c) {
  TensorRef var = c.input(0), vel = c.input(1), g = c.input(2);
  const auto& a = c.attrs<axon_sgd_attrs>();
  float* w = var.data<float>();
  float* u = vel.data<float>();
  const float* gp = g.data<float>();
  const double lr = a.learning_rate, mu = a.momentum;
  for (int64_t i = 0; i < var.numel(); ++i) {
    if (a.momentum == 0) {
      w[i] = static_cast<float>(w[i] - lr * gp[i]);
      continue;
    }
    const double ui = mu * u[i] - lr * gp[i];
    u[i] = static_cast<float>(ui);
    w[i] = static_cast<float>(w[i] + (a.nesterov ? mu * ui - lr * gp[i] : ui));
  }
}

void apply_rmsprop(Device&, const KernelCall& c) {
  TensorRef var = c.input(0), vel = c.input(1), mom = c.input(2), avg = c.input(3), g = c.input(4);
  const auto& a = c.attrs<axon_rmsprop_attrs>();
  float* w = var.data<float>();
  float* vp = vel.data<float>();
  float* mp = mom.data<float>();
  float* ap = avg.data<float>();
  const float* gp = g.data<float>();
  const double rho = a.rho;
  for (int64_t i = 0; i < var.numel(); ++i) {
    const double gi = gp[i];
    const double v = rho * vp[i] + (1 - rho) * gi * gi;
    vp[i] = static_cast<float>(v);
    double denominator = v + a.epsilon;
    if (a.centered) {
      const double avg_i = rho * ap[i] + (1 - rho) * gi;
      ap[i] = static_cast<float>(avg_i);
      denominator = v - avg_i * avg_i + a.epsilon;
    }
    const double increment = a.learning_rate * gi / std::sqrt(denominator);
    if (a.momentum > 0) {
      const double m = a.momentum * double(mp[i]) + increment;
      mp[i] = static_cast<float>(m);
      w[i] = static_cast<float>(w[i] - m);
    } else {
      w[i] = static_cast<float>(w[i] - increment);
    }
  }
}

// Keras' Adam with amsgrad: m += (g - m)(1 - b1), v += (g^2 - v)(1 - b2), vhat = max(vhat, v).
void apply_adam_with_amsgrad(Device&, const KernelCall& c) {
  TensorRef var = c.input(0), m = c.input(1), v = c.input(2), vhat = c.input(3), g = c.input(4);
  const auto& a = c.attrs<axon_adam_attrs>();
  const double b1 = a.beta_1, b2 = a.beta_2, t = double(a.step);
  const double lr_t = a.learning_rate * std::sqrt(1.0 - std::pow(b2, t)) / (1.0 - std::pow(b1, t));
  float* w = var.data<float>();
  float* mp = m.data<float>();
  float* vp = v.data<float>();
  float* hp = vhat.data<float>();
  const float* gp = g.data<float>();
  for (int64_t i = 0; i < var.numel(); ++i) {
    const double gi = gp[i];
    const double mi = mp[i] + (gi - mp[i]) * (1 - b1);
    const double vi = vp[i] + (gi * gi - vp[i]) * (1 - b2);
    const double hi = std::max<double>(hp[i], vi);
    mp[i] = static_cast<float>(mi);
    vp[i] = static_cast<float>(vi);
    hp[i] = static_cast<float>(hi);
    w[i] = static_cast<float>(w[i] - lr_t * mi / (std::sqrt(hi) + a.epsilon));
  }
}

void apply_adagrad(Device&, const KernelCall& c) {
  TensorRef var = c.input(0), acc = c.input(1), g = c.input(2);
  const auto& a = c.attrs<axon_adagrad_attrs>();
  float* w = var.data<float>();
  float* ap = acc.data<float>();
  const float* gp = g.data<float>();
  for (int64_t i = 0; i < var.numel(); ++i) {
    const double gi = gp[i];
    const double acc_i = ap[i] + gi * gi;
    ap[i] = static_cast<float>(acc_i);
    w[i] = static_cast<float>(w[i] - a.learning_rate * gi / std::sqrt(acc_i + a.epsilon));
  }
}

void apply_nadam(Device&, const KernelCall& c) {
  TensorRef var = c.input(0), m = c.input(1), v = c.input(2), g = c.input(3);
  const auto& a = c.attrs<axon_nadam_attrs>();
  const double b1 = a.beta_1, b2 = a.beta_2, t = double(a.step);
  const double u_t = b1 * (1 - 0.5 * std::pow(0.96, t)), u_t1 = b1 * (1 - 0.5 * std::pow(0.96, t + 1));
  const double u_product = a.u_product, u_product_t1 = u_product * u_t1;
  const double v_scale = 1 - std::pow(b2, t);
  float* w = var.data<float>();
  float* mp = m.data<float>();
  float* vp = v.data<float>();
  const float* gp = g.data<float>();
  for (int64_t i = 0; i < var.numel(); ++i) {
    const double gi = gp[i];
    const double mi = mp[i] + (gi - mp[i]) * (1 - b1);
    const double vi = vp[i] + (gi * gi - vp[i]) * (1 - b2);
    mp[i] = static_cast<float>(mi);
    vp[i] = static_cast<float>(vi);
    const double m_hat = u_t1 * mi / (1 - u_product_t1) + (1 - u_t) * gi / (1 - u_product);
    w[i] = static_cast<float>(w[i] - m_hat * a.learning_rate / (std::sqrt(vi / v_scale) + a.epsilon));
  }
}

void apply_weight_decay(Device&, const KernelCall& c) {
  TensorRef var = c.input(0);
  const auto& a = c.attrs<axon_weight_decay_attrs>();
  float* w = var.data<float>();
  for (int64_t i = 0; i < var.numel(); ++i)
    w[i] = static_cast<float>(w[i] - double(w[i]) * a.weight_decay * a.learning_rate);
}

// Keras' clipping; norms summed in double over each variable's span.
void clip_gradients(Device&, const KernelCall& c) {
  TensorRef grad = c.input(0), ends = c.input(1);
  const auto& a = c.attrs<axon_clip_attrs>();
  float* g = grad.data<float>();
  const int64_t* e = ends.data<int64_t>();
  const int64_t n = grad.numel(), segments = ends.numel();
  for (int64_t s = 0; s < segments; ++s)
    if (e[s] < (s > 0 ? e[s - 1] : 0) || e[s] > n || (s == segments - 1 && e[s] != n))
      fail(AXON_INVALID_ARGUMENT, "ClipGradients: segment_ends must rise from 0 to grad's size " + std::to_string(n) +
                                      ", got " + std::to_string(e[s]) + " at " + std::to_string(s));
  const double clip = a.clip;
  if (a.mode == AXON_CLIP_VALUE) {
    for (int64_t i = 0; i < n; ++i) g[i] = std::min(std::max(g[i], -a.clip), a.clip);
    return;
  }
  std::vector<double> squares(static_cast<size_t>(segments), 0.0);
  for (int64_t s = 0, i = 0; s < segments; ++s)
    for (; i < e[s]; ++i) squares[static_cast<size_t>(s)] += double(g[i]) * g[i];
  if (a.mode == AXON_CLIP_NORM) {
    for (int64_t s = 0, i = 0; s < segments; ++s) {
      const double norm = std::sqrt(squares[static_cast<size_t>(s)]);
      for (; i < e[s]; ++i) g[i] = static_cast<float>(g[i] * clip / std::max(norm, clip));
    }
    return;
  }
  double total = 0;
  for (double q : squares) total += q;
  const double norm = std::sqrt(total);
  const double scale = clip * std::min(1 / norm, 1 / clip) + (norm - norm);
  for (int64_t i = 0; i < n; ++i) g[i] = static_cast<float>(g[i] * scale);
}

}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    using axon::OpId;
    KernelTable t;
    add<OpId::Conv2D, conv2d>(t);
    add<OpId::Conv2DBackpropInput, conv2d_backprop_input>(t);
    add<OpId::Conv2DBackpropInputAccumulate, conv2d_backprop_input>(t);
    add<OpId::Conv2DBackpropFilter, conv2d_backprop_filter>(t);
    add<OpId::MaxPool, max_pool>(t);
    add<OpId::MaxPoolGrad, max_pool_grad>(t);
    add<OpId::Relu, relu>(t);
    add<OpId::ReluGrad, relu_grad>(t);
    add<OpId::MatMul, mat_mul>(t);
    add<OpId::BiasAdd, bias_add>(t);
    add<OpId::BiasAddGrad, bias_add_grad>(t);
    add<OpId::SparseSoftmaxCrossEntropyWithLogits, sparse_softmax_xent>(t);
    add<OpId::ApplyAdam, apply_adam>(t);
    add<OpId::ApplySGD, apply_sgd>(t);
    add<OpId::ApplyRMSprop, apply_rmsprop>(t);
    add<OpId::ApplyAdamWithAmsgrad, apply_adam_with_amsgrad>(t);
    add<OpId::ApplyAdagrad, apply_adagrad>(t);
    add<OpId::ApplyNadam, apply_nadam>(t);
    add<OpId::ApplyWeightDecay, apply_weight_decay>(t);
    add<OpId::ClipGradients, clip_gradients>(t);
    add<OpId::InTopK, in_top_k>(t);
    add<OpId::InTopKV2, in_top_k_v2>(t);
    add<OpId::SparseCategoricalAccuracy, sparse_categorical_accuracy>(t);
    add<OpId::Sum, sum>(t);
    add<OpId::Fill, fill>(t);
    add<OpId::Scale, scale>(t);
    add<OpId::AddN, add_n>(t);
    add<OpId::NormalizeImage, normalize_image>(t);
    add<OpId::Identity, identity>(t);
    add<OpId::FusedConv2D, fused_conv2d>(t);
    add<OpId::FusedMatMul, fused_mat_mul>(t);
    add<OpId::FusedReluGradBiasAddGrad, fused_relu_grad_bias_add_grad>(t);
    add<OpId::FusedConv2DMaxPool, fused_conv2d_max_pool>(t);
    add<OpId::FusedConv2DMaxPoolGrad, fused_conv2d_max_pool_grad>(t);
    add_layer_kernels(t);
    add_elementwise_kernels(t);
    add_loss_kernels(t);
    add_random_kernels(t);
    add_reduce_kernels(t);
    return t;
  }();
  return table;
}

}  // namespace ref
