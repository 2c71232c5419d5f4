// Naive, obviously correct kernels for every op of plugin_abi.h. Each one
// checks ranks, shapes and dtypes first and names the op and the shapes when
// they are wrong; sums are accumulated in double. Speed is not a goal: this is
// the oracle the real backends are tested against.
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

// ------------------------------------------------------------------ checks

std::string dims_string(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) (s += (i ? "," : "")) += std::to_string(d[i]);
  return s + "]";
}

// Dtype, optional rank (-1: any) and a usable data pointer.
void want(const KernelCall& c, const TensorRef& t, const char* what, axon_dtype dt, int rank = -1) {
  require(t.dtype() == dt, format("%s: %s must be %s, got %s", c.op(), what, dtype_name(dt), dtype_name(t.dtype())));
  require(t.rank() >= 0 && t.rank() <= AXON_MAX_RANK, format("%s: %s has invalid rank %d", c.op(), what, t.rank()));
  if (rank >= 0)
    require(t.rank() == rank,
            format("%s: %s must have rank %d, got shape %s", c.op(), what, rank, t.shape_string().c_str()));
  for (int i = 0; i < t.rank(); ++i)
    require(t.dim(i) >= 0, format("%s: %s has a negative dimension %s", c.op(), what, t.shape_string().c_str()));
  require(t.numel() == 0 || t.raw() != nullptr, format("%s: %s has no data", c.op(), what));
}

void want_shape(const KernelCall& c, const TensorRef& t, const char* what, const std::vector<int64_t>& dims) {
  bool same = t.rank() == static_cast<int>(dims.size());
  for (int i = 0; same && i < t.rank(); ++i) same = t.dim(i) == dims[i];
  require(same, format("%s: %s has shape %s, expected %s", c.op(), what, t.shape_string().c_str(),
                       dims_string(dims).c_str()));
}

void want_same_shape(const KernelCall& c, const TensorRef& t, const char* what, const TensorRef& like) {
  std::vector<int64_t> d(like.c().dims, like.c().dims + like.rank());
  want_shape(c, t, what, d);
}

// ------------------------------------------------------------------ window geometry (TensorFlow's rules)

struct Axis {
  int64_t out;  // output size
  int64_t pad;  // padding before the first element
};

// VALID: out = ceil((in - effective_k + 1) / stride).
// SAME:  out = ceil(in / stride); total padding = max((out-1)*stride + effective_k - in, 0), the smaller half before.
Axis window_axis(const KernelCall& c, const char* axis, int64_t in, int64_t k, int64_t stride, int64_t dilation,
                 axon_padding padding) {
  int64_t eff = (k - 1) * dilation + 1;
  require(k >= 1, format("%s: %s window size must be >= 1, got %lld", c.op(), axis, static_cast<long long>(k)));
  if (padding == AXON_PADDING_VALID) {
    require(in >= eff, format("%s: %s window %lld (dilated %lld) is larger than the input %lld with VALID padding",
                              c.op(), axis, static_cast<long long>(k), static_cast<long long>(eff),
                              static_cast<long long>(in)));
    return {(in - eff) / stride + 1, 0};
  }
  int64_t out = (in + stride - 1) / stride;
  int64_t total = std::max<int64_t>((out - 1) * stride + eff - in, 0);
  return {out, total / 2};
}

void check_padding(const KernelCall& c, axon_padding p) {
  require(p == AXON_PADDING_VALID || p == AXON_PADDING_SAME, format("%s: unknown padding %d", c.op(), static_cast<int>(p)));
}

// Geometry of a convolution: x [N,H,W,C], filter [KH,KW,C,OC], y [N,OH,OW,OC].
struct Conv {
  int64_t n, h, w, c, kh, kw, oc, oh, ow, pad_h, pad_w, sh, sw, dh, dw;
};

// `x` is the input-image shape (x itself, or dx), `f` the filter shape.
Conv conv_geometry(const KernelCall& c, const TensorRef& x, const TensorRef& f) {
  const auto& a = c.attrs<axon_conv2d_attrs>(AXON_STRUCT_SIZE(axon_conv2d_attrs, padding));
  require(a.stride_h >= 1 && a.stride_w >= 1, format("%s: strides must be >= 1, got %d,%d", c.op(), a.stride_h, a.stride_w));
  require(a.dilation_h >= 1 && a.dilation_w >= 1,
          format("%s: dilations must be >= 1, got %d,%d", c.op(), a.dilation_h, a.dilation_w));
  check_padding(c, a.padding);
  require(f.dim(2) == x.dim(3), format("%s: filter %s has %lld input channels, image %s has %lld", c.op(),
                                       f.shape_string().c_str(), static_cast<long long>(f.dim(2)),
                                       x.shape_string().c_str(), static_cast<long long>(x.dim(3))));
  Conv g{};
  g.n = x.dim(0), g.h = x.dim(1), g.w = x.dim(2), g.c = x.dim(3);
  g.kh = f.dim(0), g.kw = f.dim(1), g.oc = f.dim(3);
  g.sh = a.stride_h, g.sw = a.stride_w, g.dh = a.dilation_h, g.dw = a.dilation_w;
  Axis ah = window_axis(c, "height", g.h, g.kh, g.sh, g.dh, a.padding);
  Axis aw = window_axis(c, "width", g.w, g.kw, g.sw, g.dw, a.padding);
  g.oh = ah.out, g.pad_h = ah.pad, g.ow = aw.out, g.pad_w = aw.pad;
  return g;
}

// Calls f(n, oh, ow, kh, kw, x_index_base) for every (output pixel, tap) that
// reads a real (not padded) input pixel; x_index_base indexes x[n,ih,iw,0].
template <class F>
void for_each_tap(const Conv& g, F&& f) {
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
  c.expect_arity(2, 1);
  TensorRef x = c.input(0), f = c.input(1), y = c.output(0);
  want(c, x, "input", AXON_FLOAT32, 4);
  want(c, f, "filter", AXON_FLOAT32, 4);
  want(c, y, "output", AXON_FLOAT32, 4);
  Conv g = conv_geometry(c, x, f);
  want_shape(c, y, "output", {g.n, g.oh, g.ow, g.oc});
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
void conv2d_backprop_input(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef dy = c.input(0), f = c.input(1), dx = c.output(0);
  want(c, dy, "out_backprop", AXON_FLOAT32, 4);
  want(c, f, "filter", AXON_FLOAT32, 4);
  want(c, dx, "input gradient", AXON_FLOAT32, 4);
  Conv g = conv_geometry(c, dx, f);
  want_shape(c, dy, "out_backprop", {g.n, g.oh, g.ow, g.oc});
  const float* dyp = dy.data<float>();
  const float* fp = f.data<float>();
  std::vector<double> acc(static_cast<size_t>(dx.numel()), 0.0);
  for_each_tap(g, [&](int64_t n, int64_t oh, int64_t ow, int64_t kh, int64_t kw, int64_t xi) {
    const float* d = dyp + ((n * g.oh + oh) * g.ow + ow) * g.oc;
    for (int64_t ci = 0; ci < g.c; ++ci)
      for (int64_t o = 0; o < g.oc; ++o) acc[static_cast<size_t>(xi + ci)] += double(d[o]) * fp[((kh * g.kw + kw) * g.c + ci) * g.oc + o];
  });
  store(acc, dx.data<float>());
}

// dfilter[tap, ci, o] += x[pixel read by the tap] * dy[output pixel].
void conv2d_backprop_filter(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef x = c.input(0), dy = c.input(1), df = c.output(0);
  want(c, x, "input", AXON_FLOAT32, 4);
  want(c, dy, "out_backprop", AXON_FLOAT32, 4);
  want(c, df, "filter gradient", AXON_FLOAT32, 4);
  Conv g = conv_geometry(c, x, df);
  want_shape(c, dy, "out_backprop", {g.n, g.oh, g.ow, g.oc});
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

struct Pool {
  int64_t n, h, w, c, kh, kw, oh, ow, pad_h, pad_w, sh, sw;
};

Pool pool_geometry(const KernelCall& c, const TensorRef& x) {
  const auto& a = c.attrs<axon_pool_attrs>(AXON_STRUCT_SIZE(axon_pool_attrs, padding));
  require(a.stride_h >= 1 && a.stride_w >= 1, format("%s: strides must be >= 1, got %d,%d", c.op(), a.stride_h, a.stride_w));
  check_padding(c, a.padding);
  Pool p{};
  p.n = x.dim(0), p.h = x.dim(1), p.w = x.dim(2), p.c = x.dim(3);
  p.kh = a.window_h, p.kw = a.window_w, p.sh = a.stride_h, p.sw = a.stride_w;
  Axis ah = window_axis(c, "height", p.h, p.kh, p.sh, 1, a.padding);
  Axis aw = window_axis(c, "width", p.w, p.kw, p.sw, 1, a.padding);
  p.oh = ah.out, p.pad_h = ah.pad, p.ow = aw.out, p.pad_w = aw.pad;
  return p;
}

// Index into x of the first maximum (row-major scan) of the window of y[n,oh,ow,ch];
// padded positions take no part. A window always holds at least one real pixel.
// `tap`, when given, receives that maximum's place in the window, kh * window_w
// + kw, counted from the window's unclipped top-left corner.
int64_t argmax_in_window(const Pool& p, const float* x, int64_t n, int64_t oh, int64_t ow, int64_t ch,
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
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want(c, x, "input", AXON_FLOAT32, 4);
  want(c, y, "output", AXON_FLOAT32, 4);
  Pool p = pool_geometry(c, x);
  want_shape(c, y, "output", {p.n, p.oh, p.ow, p.c});
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
  c.expect_arity(3, 1);
  TensorRef x = c.input(0), y = c.input(1), dy = c.input(2), dx = c.output(0);
  want(c, x, "orig_input", AXON_FLOAT32, 4);
  want(c, y, "orig_output", AXON_FLOAT32, 4);
  want(c, dy, "grad", AXON_FLOAT32, 4);
  want(c, dx, "output", AXON_FLOAT32, 4);
  Pool p = pool_geometry(c, x);
  want_shape(c, y, "orig_output", {p.n, p.oh, p.ow, p.c});
  want_shape(c, dy, "grad", {p.n, p.oh, p.ow, p.c});
  want_same_shape(c, dx, "output", x);
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
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want(c, x, "features", AXON_FLOAT32);
  want(c, y, "activations", AXON_FLOAT32);
  want_same_shape(c, y, "activations", x);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] > 0.0f ? xp[i] : 0.0f;
}

void relu_grad(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef dy = c.input(0), y = c.input(1), dx = c.output(0);
  want(c, dy, "gradients", AXON_FLOAT32);
  want(c, y, "features", AXON_FLOAT32);
  want(c, dx, "backprops", AXON_FLOAT32);
  want_same_shape(c, y, "features", dy);
  want_same_shape(c, dx, "backprops", dy);
  const float* g = dy.data<float>();
  const float* yp = y.data<float>();
  float* out = dx.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) out[i] = yp[i] > 0.0f ? g[i] : 0.0f;
}

void scale(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want(c, x, "x", AXON_FLOAT32);
  want(c, y, "y", AXON_FLOAT32);
  want_same_shape(c, y, "y", x);
  float alpha = c.attrs<axon_scale_attrs>(AXON_STRUCT_SIZE(axon_scale_attrs, alpha)).alpha;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = alpha * xp[i];
}

void add_n(Device&, const KernelCall& c) {
  require(c.num_inputs() >= 1 && c.num_outputs() == 1,
          format("%s: expected at least 1 input and 1 output, got %d and %d", c.op(), c.num_inputs(), c.num_outputs()));
  TensorRef y = c.output(0);
  want(c, y, "sum", AXON_FLOAT32);
  for (int k = 0; k < c.num_inputs(); ++k) {
    want(c, c.input(k), "input", AXON_FLOAT32);
    want_same_shape(c, c.input(k), "input", y);
  }
  std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
  for (int k = 0; k < c.num_inputs(); ++k) {
    const float* xp = c.input(k).data<float>();
    for (size_t i = 0; i < acc.size(); ++i) acc[i] += xp[i];
  }
  store(acc, y.data<float>());
}

void fill(Device&, const KernelCall& c) {
  c.expect_arity(0, 1);
  TensorRef y = c.output(0);
  want(c, y, "output", AXON_FLOAT32);
  float v = c.attrs<axon_fill_attrs>(AXON_STRUCT_SIZE(axon_fill_attrs, value)).value;
  float* yp = y.data<float>();
  for (int64_t i = 0; i < y.numel(); ++i) yp[i] = v;
}

void normalize_image(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want(c, x, "image", AXON_UINT8);
  want(c, y, "output", AXON_FLOAT32);
  want_same_shape(c, y, "output", x);
  const uint8_t* xp = x.data<uint8_t>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = static_cast<float>(xp[i] / 255.0);
}

void identity(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want(c, x, "input", x.dtype());
  want(c, y, "output", x.dtype());
  want_same_shape(c, y, "output", x);
  if (x.numel() > 0 && x.raw() != y.raw())
    std::memmove(y.raw(), x.raw(), static_cast<size_t>(x.numel()) * dtype_size(x.dtype()));
}

// ------------------------------------------------------------------ matmul and bias

void mat_mul(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef a = c.input(0), b = c.input(1), out = c.output(0);
  want(c, a, "a", AXON_FLOAT32, 2);
  want(c, b, "b", AXON_FLOAT32, 2);
  want(c, out, "product", AXON_FLOAT32, 2);
  const auto& at = c.attrs<axon_matmul_attrs>(AXON_STRUCT_SIZE(axon_matmul_attrs, transpose_b));
  bool ta = at.transpose_a != 0, tb = at.transpose_b != 0;
  int64_t m = ta ? a.dim(1) : a.dim(0), k = ta ? a.dim(0) : a.dim(1);
  int64_t kb = tb ? b.dim(1) : b.dim(0), n = tb ? b.dim(0) : b.dim(1);
  require(k == kb, format("%s: inner dimensions differ: a %s%s, b %s%s", c.op(), a.shape_string().c_str(),
                          ta ? "^T" : "", b.shape_string().c_str(), tb ? "^T" : ""));
  want_shape(c, out, "product", {m, n});
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
  c.expect_arity(2, 1);
  TensorRef x = c.input(0), bias = c.input(1), y = c.output(0);
  want(c, x, "value", AXON_FLOAT32);
  want(c, bias, "bias", AXON_FLOAT32, 1);
  want(c, y, "output", AXON_FLOAT32);
  require(x.rank() >= 2, format("%s: value must be at least 2-D, got shape %s", c.op(), x.shape_string().c_str()));
  require(bias.dim(0) == x.dim(-1), format("%s: bias %s does not match the last dimension of value %s", c.op(),
                                           bias.shape_string().c_str(), x.shape_string().c_str()));
  want_same_shape(c, y, "output", x);
  int64_t ch = bias.dim(0);
  const float* xp = x.data<float>();
  const float* bp = bias.data<float>();
  float* yp = y.data<float>();
  for (int64_t i = 0; i < x.numel(); ++i) yp[i] = xp[i] + bp[i % ch];
}

void bias_add_grad(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef dy = c.input(0), db = c.output(0);
  want(c, dy, "out_backprop", AXON_FLOAT32);
  want(c, db, "output", AXON_FLOAT32, 1);
  require(dy.rank() >= 2, format("%s: out_backprop must be at least 2-D, got shape %s", c.op(), dy.shape_string().c_str()));
  want_shape(c, db, "output", {dy.dim(-1)});
  int64_t ch = dy.dim(-1);
  std::vector<double> acc(static_cast<size_t>(ch), 0.0);
  const float* g = dy.data<float>();
  for (int64_t i = 0; i < dy.numel(); ++i) acc[static_cast<size_t>(i % ch)] += g[i];
  store(acc, db.data<float>());
}

// ------------------------------------------------------------------ fused ops
// Compositions of the kernels above (the oracle for fast fused kernels): each
// step runs as a call of its own, named after the fused op so errors read right.

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

int32_t activation(const KernelCall& c, int32_t a) {
  require(a == AXON_ACTIVATION_NONE || a == AXON_ACTIVATION_RELU,
          format("%s: unknown activation %d (0 none, 1 relu)", c.op(), static_cast<int>(a)));
  return a;
}

void fused_conv2d(Device& d, const KernelCall& c) {
  c.expect_arity(3, 1);
  const auto& a = c.attrs<axon_fused_conv2d_attrs>(AXON_STRUCT_SIZE(axon_fused_conv2d_attrs, activation));
  const int32_t act = activation(c, a.activation);
  TensorRef y = c.output(0);
  run_step<conv2d>(d, c, {c.input(0).c(), c.input(1).c()}, y.c(), &a.conv);
  run_step<bias_add>(d, c, {y.c(), c.input(2).c()}, y.c(), nullptr);
  if (act == AXON_ACTIVATION_RELU) relu_in_place(y);
}

void fused_mat_mul(Device& d, const KernelCall& c) {
  c.expect_arity(3, 1);
  const auto& a = c.attrs<axon_fused_matmul_attrs>(AXON_STRUCT_SIZE(axon_fused_matmul_attrs, activation));
  const int32_t act = activation(c, a.activation);
  TensorRef y = c.output(0);
  run_step<mat_mul>(d, c, {c.input(0).c(), c.input(1).c()}, y.c(), &a.matmul);
  run_step<bias_add>(d, c, {y.c(), c.input(2).c()}, y.c(), nullptr);
  if (act == AXON_ACTIVATION_RELU) relu_in_place(y);
}

void fused_relu_grad_bias_add_grad(Device& d, const KernelCall& c) {
  c.expect_arity(2, 2);
  TensorRef dx = c.output(0);
  run_step<relu_grad>(d, c, {c.input(0).c(), c.input(1).c()}, dx.c(), nullptr);
  run_step<bias_add_grad>(d, c, {dx.c()}, c.output(1).c(), nullptr);
}

// ------------------------------------------------------------------ convolution + max pooling (ABI 1.2)
// The forward is _FusedConv2D into a full-size z, then MaxPool; the argmax is
// the tap MaxPool's (and MaxPoolGrad's) first-maximum scan picks. The backward
// routes dy to those taps and runs the three gradient kernels above on dz.

// A call of the same op carrying only `attrs`: the geometry helpers read their
// conv or pool attrs from the call they are given.
struct AttrsCall {
  axon_kernel_call s{};
  AttrsCall(const KernelCall& c, const void* attrs) {
    s.struct_size = sizeof s;
    s.op = c.op();
    s.attrs = attrs;
  }
  KernelCall call() const { return KernelCall(s); }
};

axon_tensor float_tensor(std::vector<float>& buf, const std::vector<int64_t>& dims) {
  axon_tensor t{};
  t.data = buf.empty() ? nullptr : buf.data();
  t.dtype = AXON_FLOAT32;
  t.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
  return t;
}

const axon_fused_conv2d_max_pool_attrs& conv_pool_attrs(const KernelCall& c) {
  const auto& a = c.attrs<axon_fused_conv2d_max_pool_attrs>(AXON_STRUCT_SIZE(axon_fused_conv2d_max_pool_attrs, pool));
  activation(c, a.activation);
  // The argmax is one byte and 255 means "none": at most 255 taps.
  const int64_t taps = int64_t(a.pool.window_h) * a.pool.window_w;
  require(taps <= AXON_ARGMAX_NONE, format("%s: pool window %dx%d has %lld taps, more than the %d a uint8 argmax can name",
                                           c.op(), a.pool.window_h, a.pool.window_w, static_cast<long long>(taps),
                                           AXON_ARGMAX_NONE));
  return a;
}

struct ConvPool {
  Conv conv;  // x -> z
  Pool pool;  // z -> y
};

ConvPool conv_pool_geometry(const KernelCall& c, const axon_fused_conv2d_max_pool_attrs& a, const TensorRef& x,
                            const TensorRef& f) {
  ConvPool g{};
  AttrsCall cc(c, &a.conv);
  g.conv = conv_geometry(cc.call(), x, f);
  axon_tensor z{};
  z.dtype = AXON_FLOAT32;
  z.rank = 4;
  z.dims[0] = g.conv.n, z.dims[1] = g.conv.oh, z.dims[2] = g.conv.ow, z.dims[3] = g.conv.oc;
  AttrsCall pc(c, &a.pool);
  g.pool = pool_geometry(pc.call(), TensorRef(z));
  return g;
}

void fused_conv2d_max_pool(Device& d, const KernelCall& c) {
  c.expect_arity(3, 2);
  const auto& a = conv_pool_attrs(c);
  TensorRef x = c.input(0), f = c.input(1), b = c.input(2), y = c.output(0), am = c.output(1);
  want(c, x, "input", AXON_FLOAT32, 4);
  want(c, f, "filter", AXON_FLOAT32, 4);
  want(c, b, "bias", AXON_FLOAT32, 1);
  want(c, y, "output", AXON_FLOAT32, 4);
  want(c, am, "argmax", AXON_UINT8, 4);
  const ConvPool g = conv_pool_geometry(c, a, x, f);
  const Pool& p = g.pool;
  want_shape(c, b, "bias", {g.conv.oc});
  want_shape(c, y, "output", {p.n, p.oh, p.ow, p.c});
  want_shape(c, am, "argmax", {p.n, p.oh, p.ow, p.c});

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
  require(c.num_inputs() == 4 && (c.num_outputs() == 2 || c.num_outputs() == 3),
          format("%s: expected 4 inputs (x, filter, dy, argmax) and 2 or 3 outputs (dfilter, dbias[, dx]), got %d and %d",
                 c.op(), c.num_inputs(), c.num_outputs()));
  const auto& a = conv_pool_attrs(c);
  TensorRef x = c.input(0), f = c.input(1), dy = c.input(2), am = c.input(3);
  TensorRef df = c.output(0), db = c.output(1);
  want(c, x, "input", AXON_FLOAT32, 4);
  want(c, f, "filter", AXON_FLOAT32, 4);
  want(c, dy, "out_backprop", AXON_FLOAT32, 4);
  want(c, am, "argmax", AXON_UINT8, 4);
  want(c, df, "filter gradient", AXON_FLOAT32, 4);
  want(c, db, "bias gradient", AXON_FLOAT32, 1);
  const ConvPool g = conv_pool_geometry(c, a, x, f);
  const Pool& p = g.pool;
  want_shape(c, dy, "out_backprop", {p.n, p.oh, p.ow, p.c});
  want_shape(c, am, "argmax", {p.n, p.oh, p.ow, p.c});
  want_same_shape(c, df, "filter gradient", f);
  want_shape(c, db, "bias gradient", {p.c});
  if (c.num_outputs() == 3) {
    TensorRef dx = c.output(2);
    want(c, dx, "input gradient", AXON_FLOAT32, 4);
    want_same_shape(c, dx, "input gradient", x);
  }

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

// Checks logits [N,C] and int32 labels [N]; returns N and C.
std::pair<int64_t, int64_t> logits_and_labels(const KernelCall& c, const TensorRef& logits, const TensorRef& labels) {
  want(c, logits, "logits", AXON_FLOAT32, 2);
  want(c, labels, "labels", AXON_INT32, 1);
  require(labels.dim(0) == logits.dim(0), format("%s: labels %s do not match logits %s", c.op(),
                                                 labels.shape_string().c_str(), logits.shape_string().c_str()));
  require(logits.dim(1) >= 1, format("%s: logits %s have no classes", c.op(), logits.shape_string().c_str()));
  return {logits.dim(0), logits.dim(1)};
}

// loss = logsumexp(logits) - logits[label]; dlogits = softmax - onehot.
void sparse_softmax_xent(Device&, const KernelCall& c) {
  c.expect_arity(2, 2);
  TensorRef logits = c.input(0), labels = c.input(1), loss = c.output(0), grad = c.output(1);
  auto [n, k] = logits_and_labels(c, logits, labels);
  want(c, loss, "loss", AXON_FLOAT32);
  want_shape(c, loss, "loss", {n});
  want(c, grad, "backprop", AXON_FLOAT32);
  want_same_shape(c, grad, "backprop", logits);
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

// TensorFlow's InTopK with k = 1: the label's logit is finite and no logit
// of the row is greater (a tie counts); any NaN or infinity in the row, or a
// label outside [0, C), gives 0.
void in_top_k(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef logits = c.input(0), labels = c.input(1), out = c.output(0);
  auto [n, k] = logits_and_labels(c, logits, labels);
  want(c, out, "precision", AXON_FLOAT32);
  want_shape(c, out, "precision", {n});
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* row = lg + i * k;
    bool in_top = lb[i] >= 0 && lb[i] < k;
    for (int64_t j = 0; in_top && j < k; ++j) in_top = std::isfinite(row[j]) && !(row[j] > row[lb[i]]);
    o[i] = in_top ? 1.0f : 0.0f;
  }
}

// Keras' sparse_categorical_accuracy: 1 where the label is the lowest index
// holding the row's largest logit (tf.argmax's tie rule).
void sparse_categorical_accuracy(Device&, const KernelCall& c) {
  c.expect_arity(2, 1);
  TensorRef logits = c.input(0), labels = c.input(1), out = c.output(0);
  auto [n, k] = logits_and_labels(c, logits, labels);
  want(c, out, "accuracy", AXON_FLOAT32);
  want_shape(c, out, "accuracy", {n});
  const float* lg = logits.data<float>();
  const int32_t* lb = labels.data<int32_t>();
  float* o = out.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    const float* row = lg + i * k;
    o[i] = lb[i] == std::max_element(row, row + k) - row ? 1.0f : 0.0f;  // max_element: the first largest
  }
}

void sum(Device&, const KernelCall& c) {
  c.expect_arity(1, 1);
  TensorRef x = c.input(0), y = c.output(0);
  want(c, x, "input", AXON_FLOAT32);
  want(c, y, "output", AXON_FLOAT32);
  require(y.numel() == 1 && y.rank() <= 1,
          format("%s: output must be a scalar ([] or [1]), got shape %s", c.op(), y.shape_string().c_str()));
  const float* xp = x.data<float>();
  double s = 0.0;
  for (int64_t i = 0; i < x.numel(); ++i) s += xp[i];
  *y.data<float>() = static_cast<float>(s);
}

// Keras Adam: lr_t = lr*sqrt(1-b2^t)/(1-b1^t); m,v moving averages; var -= lr_t*m/(sqrt(v)+eps).
void apply_adam(Device&, const KernelCall& c) {
  c.expect_arity(4, 0);
  TensorRef var = c.input(0), m = c.input(1), v = c.input(2), g = c.input(3);
  want(c, var, "var", AXON_FLOAT32);
  want(c, m, "m", AXON_FLOAT32);
  want(c, v, "v", AXON_FLOAT32);
  want(c, g, "grad", AXON_FLOAT32);
  want_same_shape(c, m, "m", var);
  want_same_shape(c, v, "v", var);
  want_same_shape(c, g, "grad", var);
  const auto& a = c.attrs<axon_adam_attrs>(AXON_STRUCT_SIZE(axon_adam_attrs, step));
  require(a.step >= 1, format("%s: step must be >= 1, got %lld", c.op(), static_cast<long long>(a.step)));
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

template <void (*F)(Device&, const KernelCall&)>
constexpr axon_kernel_fn k = &kernel<Device, F>;

}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = [] {
    KernelTable t;
    t.add("Conv2D", AXON_FLOAT32, k<conv2d>)
        .add("Conv2DBackpropInput", AXON_FLOAT32, k<conv2d_backprop_input>)
        .add("Conv2DBackpropFilter", AXON_FLOAT32, k<conv2d_backprop_filter>)
        .add("MaxPool", AXON_FLOAT32, k<max_pool>)
        .add("MaxPoolGrad", AXON_FLOAT32, k<max_pool_grad>)
        .add("Relu", AXON_FLOAT32, k<relu>)
        .add("ReluGrad", AXON_FLOAT32, k<relu_grad>)
        .add("MatMul", AXON_FLOAT32, k<mat_mul>)
        .add("BiasAdd", AXON_FLOAT32, k<bias_add>)
        .add("BiasAddGrad", AXON_FLOAT32, k<bias_add_grad>)
        .add("SparseSoftmaxCrossEntropyWithLogits", AXON_FLOAT32, k<sparse_softmax_xent>)
        .add("ApplyAdam", AXON_FLOAT32, k<apply_adam>)
        .add("InTopK", AXON_FLOAT32, k<in_top_k>)
        .add("_SparseCategoricalAccuracy", AXON_FLOAT32, k<sparse_categorical_accuracy>)
        .add("Sum", AXON_FLOAT32, k<sum>)
        .add("Fill", AXON_FLOAT32, k<fill>)
        .add("Scale", AXON_FLOAT32, k<scale>)
        .add("AddN", AXON_FLOAT32, k<add_n>)
        .add("NormalizeImage", AXON_UINT8, k<normalize_image>)
        .add("Identity", AXON_FLOAT32, k<identity>)
        .add("Identity", AXON_INT32, k<identity>)
        .add("Identity", AXON_UINT8, k<identity>)
        .add("Identity", AXON_INT64, k<identity>)
        .add("_FusedConv2D", AXON_FLOAT32, k<fused_conv2d>)
        .add("_FusedMatMul", AXON_FLOAT32, k<fused_mat_mul>)
        .add("_FusedReluGradBiasAddGrad", AXON_FLOAT32, k<fused_relu_grad_bias_add_grad>)
        .add("_FusedConv2DMaxPool", AXON_FLOAT32, k<fused_conv2d_max_pool>)
        .add("_FusedConv2DMaxPoolGrad", AXON_FLOAT32, k<fused_conv2d_max_pool_grad>);
    return t;
  }();
  return table;
}

}  // namespace ref
