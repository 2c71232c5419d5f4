// The convolution layer with its max pooling as one op pair (ABI 1.2):
// _FusedConv2DMaxPool and _FusedConv2DMaxPoolGrad.
//  - The reference plugin's pair equals its separate ops composed, bit for
//    bit: y = MaxPool(_FusedConv2D), the argmax is the first maximum of z in
//    the window (255 where relu left only zeros), and the Grad is
//    BiasAddGrad / Conv2DBackpropFilter / Conv2DBackpropInput of dz, routed
//    here on the host from dy and the argmax.
//  - The CPU plugin matches the reference within the tolerance of the
//    underlying sums (compare_sum; an argmax may differ only at a near-tie),
//    and equals its own separate ops bit for bit, so fusing never changes a
//    training run.
//  - Bad input is INVALID_ARGUMENT naming the op.
#include "kernel_test_util.hpp"

#include <algorithm>
#include <cstring>

using namespace axon::test;

namespace {

constexpr uint8_t kArgmaxNone = AXON_ARGMAX_NONE;
using Dims = std::vector<int64_t>;

// Input values: uniform [-1, 1], small integers (exact sums, so many exact
// ties), or an all-zero filter (z = bias: every tap of a window ties).
enum class Values { kRandom, kIntegers, kZeroFilter };

struct Case {
  const char* what;
  int64_t n, h, w, c, kh, kw, oc;
  int conv_stride;
  axon_padding conv_pad;
  int pool_h, pool_w, pool_stride;
  axon_padding pool_pad;
  int act;
  Values values = Values::kRandom;
};

// TensorFlow's window arithmetic: output size and padding before the first element.
struct Axis {
  int64_t out, pad;
};
Axis axis(int64_t in, int64_t k, int64_t stride, axon_padding pad) {
  if (pad == AXON_PADDING_VALID) return {(in - k) / stride + 1, 0};
  const int64_t out = (in + stride - 1) / stride;
  return {out, std::max<int64_t>((out - 1) * stride + k - in, 0) / 2};
}

// Shapes and attrs of one case: x -> z (the conv) -> y (the pool).
struct Geo {
  Dims xd, wd, bd, zd, yd;
  int64_t pool_pad_h, pool_pad_w;
  axon_conv2d_attrs conv;
  axon_pool_attrs pool;
  axon_fused_conv2d_attrs fused_conv;
  axon_fused_conv2d_max_pool_attrs attrs;
};

Geo geometry(const Case& k) {
  Geo g{};
  const Axis zh = axis(k.h, k.kh, k.conv_stride, k.conv_pad), zw = axis(k.w, k.kw, k.conv_stride, k.conv_pad);
  const Axis ph = axis(zh.out, k.pool_h, k.pool_stride, k.pool_pad), pw = axis(zw.out, k.pool_w, k.pool_stride, k.pool_pad);
  g.xd = {k.n, k.h, k.w, k.c};
  g.wd = {k.kh, k.kw, k.c, k.oc};
  g.bd = {k.oc};
  g.zd = {k.n, zh.out, zw.out, k.oc};
  g.yd = {k.n, ph.out, pw.out, k.oc};
  g.pool_pad_h = ph.pad, g.pool_pad_w = pw.pad;
  g.conv = {sizeof(axon_conv2d_attrs), k.conv_stride, k.conv_stride, 1, 1, k.conv_pad};
  g.pool = {sizeof(axon_pool_attrs), k.pool_h, k.pool_w, k.pool_stride, k.pool_stride, k.pool_pad};
  g.fused_conv = {sizeof(axon_fused_conv2d_attrs), g.conv, k.act};
  g.attrs = {sizeof(axon_fused_conv2d_max_pool_attrs), g.conv, k.act, g.pool};
  return g;
}

// Calls f(i, z index or -1 for padding, tap) for every pooled element i and
// every tap of its window, taps in row-major order.
template <class F>
void for_each_window_tap(const Case& k, const Geo& g, F&& f) {
  const int64_t zh = g.zd[1], zw = g.zd[2], ph = g.yd[1], pw = g.yd[2], ch = k.oc;
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t oh = 0; oh < ph; ++oh)
      for (int64_t ow = 0; ow < pw; ++ow)
        for (int64_t c = 0; c < ch; ++c) {
          const int64_t i = ((n * ph + oh) * pw + ow) * ch + c;
          for (int64_t th = 0; th < k.pool_h; ++th)
            for (int64_t tw = 0; tw < k.pool_w; ++tw) {
              const int64_t ih = oh * k.pool_stride - g.pool_pad_h + th, iw = ow * k.pool_stride - g.pool_pad_w + tw;
              const bool real = ih >= 0 && ih < zh && iw >= 0 && iw < zw;
              f(i, real ? ((n * zh + ih) * zw + iw) * ch + c : int64_t{-1}, th * k.pool_w + tw);
            }
        }
}

// z index of tap `tap` of pooled element i (-1: padding).
std::vector<int64_t> tap_index(const Case& k, const Geo& g, const std::vector<uint8_t>& argmax) {
  std::vector<int64_t> at(argmax.size(), -1);
  for_each_window_tap(k, g, [&](int64_t i, int64_t zi, int64_t tap) {
    if (argmax[static_cast<size_t>(i)] == tap) at[static_cast<size_t>(i)] = zi;
  });
  return at;
}

// dz: dy added at each window's argmax tap, windows in row-major order (the
// op's own rule, in float).
std::vector<float> route(const Case& k, const Geo& g, const std::vector<float>& dy, const std::vector<uint8_t>& argmax) {
  std::vector<float> dz(numel(g.zd), 0.0f);
  bool into_padding = false;
  for_each_window_tap(k, g, [&](int64_t i, int64_t zi, int64_t tap) {
    if (argmax[static_cast<size_t>(i)] != tap) return;
    if (zi < 0) into_padding = true;
    else dz[static_cast<size_t>(zi)] += dy[static_cast<size_t>(i)];
  });
  REQUIRE_FALSE(into_padding);  // checked against z before; a forward never picks padding
  return dz;
}

// The argmax rule against z and y: "" when every element keeps it, else the
// first element that breaks it. Counts the NONEs and argmaxes > 0 seen.
struct ArgmaxCheck {
  std::string problem;
  size_t none = 0, nonzero_tap = 0;
};

ArgmaxCheck check_argmax(const Case& k, const Geo& g, const std::vector<float>& z, const std::vector<float>& y,
                         const std::vector<uint8_t>& argmax) {
  ArgmaxCheck r;
  const int64_t taps = int64_t(k.pool_h) * k.pool_w;
  auto bad = [&](int64_t i, const std::string& why) {
    if (r.problem.empty()) {
      std::ostringstream s;
      s.precision(9);
      s << "pooled element " << i << " (y " << y[static_cast<size_t>(i)] << ", argmax " << int(argmax[static_cast<size_t>(i)])
        << "): " << why;
      r.problem = s.str();
    }
  };
  for (size_t i = 0; i < argmax.size(); ++i) {
    const bool none = k.act == kRelu && y[i] <= 0.0f;
    if (argmax[i] == kArgmaxNone) ++r.none;
    if (argmax[i] != kArgmaxNone && argmax[i] > 0) ++r.nonzero_tap;
    if (none != (argmax[i] == kArgmaxNone)) bad(int64_t(i), "255 must mark exactly relu with y <= 0");
    else if (!none && argmax[i] >= taps) bad(int64_t(i), "not a tap of the window");
  }
  for_each_window_tap(k, g, [&](int64_t i, int64_t zi, int64_t tap) {
    const size_t u = static_cast<size_t>(i);
    if (argmax[u] == kArgmaxNone || argmax[u] >= taps) return;
    if (tap == argmax[u] && zi < 0) bad(i, "points into padding");
    if (zi < 0) return;
    const float v = z[static_cast<size_t>(zi)];
    if (v > y[u]) bad(i, "a tap holds more than y");
    if (tap < argmax[u] && v == y[u]) bad(i, "an earlier tap " + std::to_string(tap) + " holds the maximum too");
    if (tap == argmax[u] && v != y[u]) bad(i, "z at the argmax is not y");
  });
  return r;
}

struct Data {
  HostTensor x, w, b, dy;
};

std::vector<float> integers(std::mt19937& rng, size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<float> v(n);
  for (auto& e : v) e = static_cast<float>(u(rng));
  return v;
}

Data make_data(const Case& k, const Geo& g, std::mt19937& rng) {
  Data d;
  if (k.values == Values::kIntegers) {
    d.x = {g.xd, integers(rng, numel(g.xd), -2, 2)};
    d.w = {g.wd, integers(rng, numel(g.wd), -1, 1)};
    d.b = {g.bd, integers(rng, numel(g.bd), -1, 1)};
  } else {
    d.x = {g.xd, random_floats(rng, numel(g.xd))};
    d.w = {g.wd, k.values == Values::kZeroFilter ? std::vector<float>(numel(g.wd), 0.0f) : random_floats(rng, numel(g.wd))};
    d.b = {g.bd, random_floats(rng, numel(g.bd))};
  }
  d.dy = {g.yd, random_floats(rng, numel(g.yd))};
  return d;
}

struct Forward {
  std::vector<float> y;
  std::vector<uint8_t> argmax;
};

Forward forward(TestDevice& dev, const Geo& g, const HostTensor& x, const HostTensor& w, const HostTensor& b) {
  auto out = run_host_mixed(dev, "_FusedConv2DMaxPool", {mixed(x), mixed(w), mixed(b)},
                            {{AXON_FLOAT32, g.yd}, {AXON_UINT8, g.yd}}, &g.attrs);
  return {out[0].values, out[1].bytes};
}

struct Backward {
  std::vector<float> dw, db, dx;
};

Backward backward(TestDevice& dev, const Geo& g, const HostTensor& x, const HostTensor& w, const HostTensor& dy,
                  const std::vector<uint8_t>& argmax, bool with_dx) {
  std::vector<std::pair<axon_dtype, Dims>> outs{{AXON_FLOAT32, g.wd}, {AXON_FLOAT32, g.bd}};
  if (with_dx) outs.push_back({AXON_FLOAT32, g.xd});
  auto out = run_host_mixed(dev, "_FusedConv2DMaxPoolGrad", {mixed(x), mixed(w), mixed(dy), mixed_u8(g.yd, argmax)},
                            outs, &g.attrs);
  return {out[0].values, out[1].values, with_dx ? out[2].values : std::vector<float>{}};
}

std::string describe(const Case& k) {
  std::ostringstream s;
  s << k.what << ": x [" << k.n << "," << k.h << "," << k.w << "," << k.c << "] filter " << k.kh << "x" << k.kw << "x"
    << k.c << "x" << k.oc << " conv stride " << k.conv_stride << (k.conv_pad == AXON_PADDING_SAME ? " SAME" : " VALID")
    << ", pool " << k.pool_h << "x" << k.pool_w << " stride " << k.pool_stride
    << (k.pool_pad == AXON_PADDING_SAME ? " SAME" : " VALID") << ", activation " << (k.act == kRelu ? "relu" : "none")
    << (k.values == Values::kIntegers ? ", integer values" : k.values == Values::kZeroFilter ? ", zero filter" : "");
  return s.str();
}

// The separate ops on `dev` for dz: dbias, dfilter, dx.
Backward backward_unfused(TestDevice& dev, const Geo& g, const HostTensor& x, const HostTensor& w,
                          const std::vector<float>& dz) {
  const HostTensor z{g.zd, dz};
  return {run_host(dev, "Conv2DBackpropFilter", {x, z}, {g.wd}, &g.conv)[0],
          run_host(dev, "BiasAddGrad", {z}, {g.bd})[0],
          run_host(dev, "Conv2DBackpropInput", {z, w}, {g.xd}, &g.conv)[0]};
}

// The reference's pair against its own separate ops.
void check_reference(const Case& k, std::mt19937& rng) {
  INFO(describe(k));
  const Geo g = geometry(k);
  REQUIRE(g.yd[1] > 0);
  REQUIRE(g.yd[2] > 0);
  const Data d = make_data(k, g, rng);

  const Forward f = forward(ref(), g, d.x, d.w, d.b);
  const auto z = run_host(ref(), "_FusedConv2D", {d.x, d.w, d.b}, {g.zd}, &g.fused_conv)[0];
  const auto y = run_host(ref(), "MaxPool", {HostTensor{g.zd, z}}, {g.yd}, &g.pool)[0];
  auto ry = compare_exact(f.y, y);
  INFO("y vs MaxPool(_FusedConv2D): " << ry.report);
  CHECK(ry.ok);
  const ArgmaxCheck a = check_argmax(k, g, z, f.y, f.argmax);
  INFO("argmax: " << a.problem << " (" << a.none << " none, " << a.nonzero_tap << " taps > 0)");
  CHECK(a.problem.empty());

  const std::vector<float> dz = route(k, g, d.dy.values, f.argmax);
  const Backward want = backward_unfused(ref(), g, d.x, d.w, dz);
  const Backward got = backward(ref(), g, d.x, d.w, d.dy, f.argmax, true);
  auto rw = compare_exact(got.dw, want.dw), rb = compare_exact(got.db, want.db), rx = compare_exact(got.dx, want.dx);
  INFO("dfilter: " << rw.report << "; dbias: " << rb.report << "; dx: " << rx.report);
  CHECK(rw.ok);
  CHECK(rb.ok);
  CHECK(rx.ok);
  const Backward two = backward(ref(), g, d.x, d.w, d.dy, f.argmax, false);
  CHECK(compare_exact(two.dw, got.dw).ok);
  CHECK(compare_exact(two.db, got.db).ok);
}

// The CPU's pair against the reference (tolerances) and against the CPU's own
// separate ops (bit for bit).
void check_cpu(const Case& k, std::mt19937& rng) {
  INFO(describe(k));
  const Geo g = geometry(k);
  const Data d = make_data(k, g, rng);

  // Forward vs the reference. y is a max of z values, each within the conv's
  // bound; |max a - max b| <= max |a - b|, so the window's largest bound holds.
  const Forward want = forward(ref(), g, d.x, d.w, d.b);
  const Forward got = forward(cpu(), g, d.x, d.w, d.b);
  const auto z_ref = run_host(ref(), "_FusedConv2D", {d.x, d.w, d.b}, {g.zd}, &g.fused_conv)[0];
  const auto z_bound = run_host(ref(), "_FusedConv2D",
                                {HostTensor{g.xd, abs_of(d.x.values)}, HostTensor{g.wd, abs_of(d.w.values)},
                                 HostTensor{g.bd, abs_of(d.b.values)}},
                                {g.zd}, &g.fused_conv)[0];
  const auto y_bound = run_host(ref(), "MaxPool", {HostTensor{g.zd, z_bound}}, {g.yd}, &g.pool)[0];
  auto ry = compare_sum(got.y, want.y, y_bound);
  INFO("y vs reference: " << ry.report);
  CHECK(ry.ok);

  // Argmax vs the reference: a different tap only at a near-tie, i.e. the two
  // taps' reference z differ by no more than both taps' bounds together; a
  // different 255 only under relu (y above then bounds how far from 0).
  const auto at_ref = tap_index(k, g, want.argmax), at_cpu = tap_index(k, g, got.argmax);
  auto allowed_at = [&](int64_t zi) {
    const size_t i = static_cast<size_t>(zi);
    return tol::sum_allowed(z_ref[i], z_bound[i]);
  };
  size_t differ = 0;
  std::string tie_problem;
  for (size_t i = 0; i < got.argmax.size(); ++i) {
    if (got.argmax[i] == want.argmax[i]) continue;
    ++differ;
    std::ostringstream s;
    s.precision(9);
    s << "pooled element " << i << ": cpu argmax " << int(got.argmax[i]) << ", reference " << int(want.argmax[i]);
    if (got.argmax[i] == kArgmaxNone || want.argmax[i] == kArgmaxNone) {
      if (k.act != kRelu && tie_problem.empty()) tie_problem = s.str() + ": 255 without relu";
      continue;
    }
    if (at_cpu[i] < 0 || at_ref[i] < 0) {
      if (tie_problem.empty()) tie_problem = s.str() + ": a tap outside the window or in its padding";
      continue;
    }
    const float zr = z_ref[static_cast<size_t>(at_ref[i])], zc = z_ref[static_cast<size_t>(at_cpu[i])];
    const double gap = double(zr) - zc, allowed = allowed_at(at_ref[i]) + allowed_at(at_cpu[i]);
    if (gap > allowed && tie_problem.empty()) {
      s << ": reference z at the taps " << zr << " vs " << zc << ", gap " << gap << " > allowed " << allowed;
      tie_problem = s.str();
    }
  }
  INFO("argmax vs reference: " << differ << " of " << got.argmax.size() << " differ; " << tie_problem);
  CHECK(tie_problem.empty());

  // Forward vs the CPU's own _FusedConv2D and MaxPool, bit for bit; the argmax
  // is the first maximum of that z (255 exactly where relu left y == 0).
  const auto z_cpu = run_host(cpu(), "_FusedConv2D", {d.x, d.w, d.b}, {g.zd}, &g.fused_conv)[0];
  auto sy = compare_exact(got.y, run_host(cpu(), "MaxPool", {HostTensor{g.zd, z_cpu}}, {g.yd}, &g.pool)[0]);
  INFO("y vs the CPU's MaxPool(_FusedConv2D): " << sy.report);
  CHECK(sy.ok);
  const ArgmaxCheck a = check_argmax(k, g, z_cpu, got.y, got.argmax);
  INFO("cpu argmax vs the CPU's z: " << a.problem << " (" << a.none << " none, " << a.nonzero_tap << " taps > 0)");
  CHECK(a.problem.empty());

  // Backward, both fed the CPU's argmax. Bounds: the reference on |x|, |w|, |dy|.
  const Backward gb = backward(cpu(), g, d.x, d.w, d.dy, got.argmax, true);
  const Backward rb = backward(ref(), g, d.x, d.w, d.dy, got.argmax, true);
  const Backward bound = backward(ref(), g, HostTensor{g.xd, abs_of(d.x.values)}, HostTensor{g.wd, abs_of(d.w.values)},
                                  HostTensor{g.yd, abs_of(d.dy.values)}, got.argmax, true);
  auto cw = compare_sum(gb.dw, rb.dw, bound.dw);
  auto cb = compare_sum(gb.db, rb.db, bound.db);
  auto cx = compare_sum(gb.dx, rb.dx, bound.dx);
  INFO("vs reference: dfilter " << cw.report << "; dbias " << cb.report << "; dx " << cx.report);
  CHECK(cw.ok);
  CHECK(cb.ok);
  CHECK(cx.ok);

  // Backward vs the CPU's own separate ops on the routed dz, bit for bit.
  const Backward sep = backward_unfused(cpu(), g, d.x, d.w, route(k, g, d.dy.values, got.argmax));
  auto ew = compare_exact(gb.dw, sep.dw), eb = compare_exact(gb.db, sep.db), ex = compare_exact(gb.dx, sep.dx);
  INFO("vs the CPU's separate ops: dfilter " << ew.report << "; dbias " << eb.report << "; dx " << ex.report);
  CHECK(ew.ok);
  CHECK(eb.ok);
  CHECK(ex.ok);
  const Backward two = backward(cpu(), g, d.x, d.w, d.dy, got.argmax, false);
  CHECK(compare_exact(two.dw, gb.dw).ok);
  CHECK(compare_exact(two.db, gb.db).ok);
}

constexpr axon_padding V = AXON_PADDING_VALID, S = AXON_PADDING_SAME;

// The trainer's two conv layers at batch 64, then smaller shapes that reach
// the other paths: padding on either side, overlapping and clipped windows,
// ties, a large window, K >= 32.
const std::vector<Case> kCases{
    {"CNN conv1", 64, 28, 28, 1, 3, 3, 32, 1, V, 2, 2, 2, V, kRelu},
    {"CNN conv2 (11 -> 5, ragged)", 64, 13, 13, 32, 3, 3, 64, 1, V, 2, 2, 2, V, kRelu},
    // One channel, 3x3, pooled 2x2 (conv1's kernel): 21 filters are a
    // vector and single floats on every instruction set, 11x10 -> 5x5.
    {"one channel, 21 filters", 2, 13, 12, 1, 3, 3, 21, 1, V, 2, 2, 2, V, kRelu},
    {"one channel, 21 filters", 2, 13, 12, 1, 3, 3, 21, 1, V, 2, 2, 2, V, kNone},
    {"batch 1, odd sizes", 1, 7, 9, 3, 2, 3, 5, 1, V, 2, 2, 2, V, kNone},
    {"batch 1, odd sizes", 1, 7, 9, 3, 2, 3, 5, 1, V, 2, 2, 2, V, kRelu},
    {"conv SAME stride 2", 2, 11, 10, 4, 3, 3, 6, 2, S, 2, 2, 2, V, kRelu},
    {"conv SAME stride 2", 2, 11, 10, 4, 3, 3, 6, 2, S, 2, 2, 2, V, kNone},
    {"pool SAME", 2, 9, 7, 3, 3, 3, 8, 1, V, 2, 2, 2, S, kRelu},
    {"pool SAME", 2, 9, 7, 3, 3, 3, 8, 1, V, 2, 2, 2, S, kNone},
    {"overlapping pool", 2, 12, 11, 5, 3, 3, 7, 1, V, 3, 3, 2, V, kNone},
    {"overlapping pool", 2, 12, 11, 5, 3, 3, 7, 1, V, 3, 3, 2, V, kRelu},
    {"overlapping pool SAME (clipped windows)", 2, 11, 10, 3, 3, 3, 5, 1, V, 3, 3, 2, S, kRelu},
    {"overlapping pool SAME (clipped windows)", 2, 11, 10, 3, 3, 3, 5, 1, V, 3, 3, 2, S, kNone},
    {"K >= 32, conv SAME", 3, 8, 8, 40, 2, 2, 16, 1, S, 3, 3, 3, V, kRelu},
    {"K >= 32, both SAME, stride 2", 2, 9, 9, 36, 3, 3, 33, 2, S, 3, 2, 2, S, kNone},
    {"channels past the last 16-block", 1, 13, 13, 32, 3, 3, 40, 1, V, 2, 2, 2, V, kRelu},
    // Without dx the filter gradient routes dz's rows itself: a 5x5 filter
    // whose gradient goes in blocks of its rows (all of dz at once).
    {"5x5, the filter gradient in blocks of its rows", 8, 14, 14, 32, 5, 5, 48, 1, V, 2, 2, 2, V, kRelu},
    // Winograd convolutions whose pooling reads part of the output: 17 of
    // 18x18 tiles (33 of 35 rows; more than 256 tiles an image keep the input
    // gradient on im2col), 7x5 tiles' last row only, 5x7 tiles' last column.
    {"Winograd, a 3x3 stride-3 pool reads 33 of 35 rows", 1, 37, 37, 16, 3, 3, 16, 1, V, 3, 3, 3, V, kRelu},
    {"Winograd, the pool reads 12 of 13 rows, all 10 columns", 3, 15, 12, 16, 3, 3, 16, 1, V, 2, 2, 2, V, kRelu},
    {"Winograd, the pool reads all 10 rows, 12 of 13 columns", 3, 12, 15, 16, 3, 3, 16, 1, V, 2, 2, 2, V, kNone},
    {"channels past the last 16-block, conv SAME", 1, 13, 13, 32, 3, 3, 24, 1, S, 2, 2, 2, V, kRelu},
    {"1x1 pool", 1, 6, 5, 2, 3, 3, 4, 1, V, 1, 1, 1, V, kRelu},
    {"window 16x15 (240 taps)", 1, 18, 18, 2, 3, 3, 3, 1, V, 16, 15, 1, V, kNone},
    {"exact ties", 2, 10, 10, 2, 3, 3, 4, 1, V, 3, 3, 2, S, kRelu, Values::kIntegers},
    {"exact ties", 2, 10, 10, 2, 3, 3, 4, 1, S, 2, 2, 2, V, kNone, Values::kIntegers},
    {"all taps tie", 2, 8, 8, 3, 3, 3, 6, 1, V, 3, 3, 2, S, kRelu, Values::kZeroFilter},
    {"all taps tie", 2, 8, 8, 3, 3, 3, 6, 1, V, 3, 3, 2, S, kNone, Values::kZeroFilter},
    // Winograd pooled as its tiles leave the registers: integers keep its
    // transforms exact, so windows tie exactly.
    {"Winograd, exact ties", 2, 10, 10, 16, 3, 3, 16, 1, V, 2, 2, 2, V, kNone, Values::kIntegers},
    {"Winograd, all taps tie", 2, 9, 9, 16, 3, 3, 16, 1, V, 2, 2, 2, V, kRelu, Values::kZeroFilter},
    // A SAME 2x2 pool over an odd Winograd output: its last windows clipped
    // (padding after), so not pooled in registers.
    {"Winograd, SAME pool of an odd output", 2, 13, 13, 16, 3, 3, 16, 1, V, 2, 2, 2, S, kRelu},
    {"Winograd, SAME pool of an odd output", 2, 13, 12, 16, 3, 3, 16, 1, V, 2, 2, 2, S, kNone},
};

}  // namespace

TEST_CASE("both plugins offer _FusedConv2DMaxPool and its Grad", "[fused][pool]") {
  for (TestDevice* dev : {&ref(), &cpu()})
    for (const char* op : {"_FusedConv2DMaxPool", "_FusedConv2DMaxPoolGrad"}) {
      INFO((dev == &cpu() ? "cpu " : "reference ") << op);
      CHECK(dev->has(op));
    }
}

TEST_CASE("_FusedConv2DMaxPool: the reference equals its separate ops", "[fused][pool][ref]") {
  std::mt19937 rng(53);
  for (const auto& k : kCases) check_reference(k, rng);
}

TEST_CASE("_FusedConv2DMaxPool: CPU matches the reference and its own separate ops", "[fused][pool][cpu]") {
  REQUIRE(cpu().has("_FusedConv2DMaxPool"));
  REQUIRE(cpu().has("_FusedConv2DMaxPoolGrad"));
  std::mt19937 rng(59);
  for (const auto& k : kCases) check_cpu(k, rng);
}

TEST_CASE("_FusedConv2DMaxPool: the argmax names the first maximum, counted from the unclipped corner",
          "[fused][pool][ref][cpu]") {
  // z = bias for a zero filter: one value per channel, so every real tap of
  // a window ties. Channel 0 is positive, channel 1 negative. Pool 3x3
  // stride 2 SAME pads z 4x4 by one row and column after it (TensorFlow puts
  // the smaller half first): the first tap is always 0. On z 5x5 it pads one
  // before and one after: window (0,0) starts at (-1,-1), its first real tap
  // is (1,1) = 4, window (0,1) at (-1,1): tap (1,0) = 3.
  for (int64_t side : {4, 5})
    for (int act : {kNone, kRelu}) {
      const Case k{"hand-made", 1, side + 2, side + 2, 1, 3, 3, 2, 1, V, 3, 3, 2, S, act, Values::kZeroFilter};
      const Geo g = geometry(k);
      const HostTensor x{g.xd, std::vector<float>(numel(g.xd), 1.0f)}, w{g.wd, std::vector<float>(numel(g.wd), 0.0f)};
      const HostTensor b{g.bd, {0.5f, -0.25f}};
      // First real tap of each window, for channel 0; channel 1 is the same
      // without relu, 255 with it.
      std::vector<uint8_t> first;
      if (side == 4) first = {0, 0, 0, 0};
      else first = {4, 3, 3, 1, 0, 0, 1, 0, 0};
      for (TestDevice* dev : {&ref(), &cpu()}) {
        INFO((dev == &cpu() ? "cpu" : "reference") << ", z " << side << "x" << side << ", activation " << act);
        if (!dev->has("_FusedConv2DMaxPool")) FAIL("no kernel");
        const Forward f = forward(*dev, g, x, w, b);
        REQUIRE(f.argmax.size() == 2 * first.size());
        for (size_t i = 0; i < first.size(); ++i) {
          INFO("window " << i);
          CHECK(int(f.argmax[2 * i]) == int(first[i]));
          CHECK(int(f.argmax[2 * i + 1]) == int(act == kRelu ? kArgmaxNone : first[i]));
          CHECK(f.y[2 * i] == 0.5f);
          CHECK(f.y[2 * i + 1] == (act == kRelu ? 0.0f : -0.25f));
        }
      }
    }
}

TEST_CASE("_FusedConv2DMaxPoolGrad: overlapping windows add at a shared tap, 255 adds nothing", "[fused][pool][ref][cpu]") {
  // z 3x3, pool 3x3 stride 1 SAME -> 3x3 windows that all see z's centre
  // (tap 4 of window (1,1); tap 8 of (0,0); tap 0 of (2,2)). With dy = 1, 2,
  // 4, ..., 256 and argmax pointing every window at the centre except one
  // 255, dz is 0 except the centre, dbias = that sum, and with x = 1 and a
  // 1x1 filter dfilter = dbias too.
  const Case k{"hand-made", 1, 3, 3, 1, 1, 1, 1, 1, V, 3, 3, 1, S, kRelu};
  const Geo g = geometry(k);
  const HostTensor x{g.xd, std::vector<float>(9, 1.0f)}, w{g.wd, {2.0f}};
  HostTensor dy{g.yd, {}};
  for (int i = 0; i < 9; ++i) dy.values.push_back(float(1 << i));
  // Window (oh, ow) starts at (oh - 1, ow - 1): the centre is tap (2 - oh) * 3 + (2 - ow).
  std::vector<uint8_t> argmax{8, 7, 6, 5, kArgmaxNone, 3, 2, 1, 0};
  const float centre = 511.0f - 16.0f;
  for (TestDevice* dev : {&ref(), &cpu()}) {
    INFO((dev == &cpu() ? "cpu" : "reference"));
    if (!dev->has("_FusedConv2DMaxPoolGrad")) FAIL("no kernel");
    const Backward b = backward(*dev, g, x, w, dy, argmax, true);
    CHECK(b.db == std::vector<float>{centre});
    CHECK(b.dw == std::vector<float>{centre});
    CHECK(b.dx == std::vector<float>{0, 0, 0, 0, 2 * centre, 0, 0, 0, 0});
  }
}

TEST_CASE("_FusedConv2DMaxPool and its Grad reject bad input with INVALID_ARGUMENT naming the op",
          "[fused][pool][errors][ref][cpu]") {
  constexpr axon_dtype F = AXON_FLOAT32, U = AXON_UINT8;
  const axon_conv2d_attrs ca{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  auto attrs = [&](int wh, int ww, int act) {
    return axon_fused_conv2d_max_pool_attrs{sizeof(axon_fused_conv2d_max_pool_attrs), ca, act,
                                            {sizeof(axon_pool_attrs), wh, ww, 2, 2, AXON_PADDING_VALID}};
  };
  const auto ok = attrs(2, 2, kRelu), taps256 = attrs(16, 16, kRelu), act9 = attrs(2, 2, 9);
  auto small = ok;
  small.struct_size = AXON_STRUCT_SIZE(axon_fused_conv2d_max_pool_attrs, activation);
  // x [1,6,6,2], filter 3x3x2x3 -> z [1,4,4,3] -> y [1,2,2,3]; with a 16x16
  // window x [1,18,18,1] -> z [1,16,16,1] -> y [1,1,1,1].
  using T = std::vector<std::pair<axon_dtype, Dims>>;
  const T x{{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {3}}};
  const T y{{F, {1, 2, 2, 3}}, {U, {1, 2, 2, 3}}};
  const T gin{{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {1, 2, 2, 3}}, {U, {1, 2, 2, 3}}};
  const T gout{{F, {3, 3, 2, 3}}, {F, {3}}, {F, {1, 6, 6, 2}}};
  struct Bad {
    const char* why;
    const char* op;
    T in, out;
    const void* attrs;
    const char* expect;
  };
  const char* fwd = "_FusedConv2DMaxPool";
  const char* grad = "_FusedConv2DMaxPoolGrad";
  const std::vector<Bad> bad{
      {"256 taps", fwd, {{F, {1, 18, 18, 1}}, {F, {3, 3, 1, 1}}, {F, {1}}}, {{F, {1, 1, 1, 1}}, {U, {1, 1, 1, 1}}}, &taps256,
       "pool window 16x16 has more than 255 taps"},
      {"y shape", fwd, x, {{F, {1, 2, 3, 3}}, {U, {1, 2, 2, 3}}}, &ok, "y has shape [1,2,3,3], expected [1,2,2,3]"},
      {"argmax shape", fwd, x, {{F, {1, 2, 2, 3}}, {U, {1, 4, 4, 3}}}, &ok,
       "argmax has shape [1,4,4,3], expected y's [1,2,2,3]"},
      {"argmax float32", fwd, x, {{F, {1, 2, 2, 3}}, {F, {1, 2, 2, 3}}}, &ok, "argmax must be uint8, got float32"},
      {"bias length", fwd, {{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {2}}}, y, &ok,
       "bias has shape [2], expected [3]"},
      {"no argmax output", fwd, x, {{F, {1, 2, 2, 3}}}, &ok, "expected 3 inputs and 2 outputs, got 3 and 1"},
      {"attrs missing", fwd, x, y, nullptr, "attributes missing (axon_fused_conv2d_max_pool_attrs)"},
      {"attrs too small", fwd, x, y, &small, "attribute struct too small (axon_fused_conv2d_max_pool_attrs"},
      {"unknown activation", fwd, x, y, &act9, "unknown activation 9"},
      {"256 taps", grad, {{F, {1, 18, 18, 1}}, {F, {3, 3, 1, 1}}, {F, {1, 1, 1, 1}}, {U, {1, 1, 1, 1}}},
       {{F, {3, 3, 1, 1}}, {F, {1}}}, &taps256, "pool window 16x16 has more than 255 taps"},
      {"argmax float32", grad, {{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {1, 2, 2, 3}}, {F, {1, 2, 2, 3}}}, gout, &ok,
       "argmax must be uint8, got float32"},
      {"argmax int32", grad, {{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {1, 2, 2, 3}}, {AXON_INT32, {1, 2, 2, 3}}}, gout, &ok,
       "argmax must be uint8, got int32"},
      {"argmax shape", grad, {{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {1, 2, 2, 3}}, {U, {1, 2, 1, 3}}}, gout, &ok,
       "argmax has shape [1,2,1,3], expected dy's [1,2,2,3]"},
      {"dy shape", grad, {{F, {1, 6, 6, 2}}, {F, {3, 3, 2, 3}}, {F, {1, 4, 4, 3}}, {U, {1, 2, 2, 3}}}, gout, &ok,
       "dy has shape [1,4,4,3], expected [1,2,2,3]"},
      {"dfilter shape", grad, gin, {{F, {3, 3, 2, 2}}, {F, {3}}, {F, {1, 6, 6, 2}}}, &ok,
       "dfilter has shape [3,3,2,2], expected filter's [3,3,2,3]"},
      {"dbias shape", grad, gin, {{F, {3, 3, 2, 3}}, {F, {2}}, {F, {1, 6, 6, 2}}}, &ok,
       "dbias has shape [2], expected [3]"},
      {"dx shape", grad, gin, {{F, {3, 3, 2, 3}}, {F, {3}}, {F, {1, 6, 5, 2}}}, &ok,
       "dx has shape [1,6,5,2], expected x's [1,6,6,2]"},
      {"one output", grad, gin, {{F, {3, 3, 2, 3}}}, &ok, "expected 4 inputs and 2 to 3 outputs, got 4 and 1"},
      {"four outputs", grad, gin, {{F, {3, 3, 2, 3}}, {F, {3}}, {F, {1, 6, 6, 2}}, {F, {1}}}, &ok,
       "expected 4 inputs and 2 to 3 outputs, got 4 and 4"},
      {"attrs missing", grad, gin, gout, nullptr, "attributes missing (axon_fused_conv2d_max_pool_attrs)"},
  };
  for (TestDevice* dev : {&ref(), &cpu()})
    for (const auto& b : bad) {
      INFO((dev == &cpu() ? "cpu " : "reference ") << b.op << ": " << b.why);
      std::vector<std::unique_ptr<DeviceTensor>> keep;
      std::vector<axon_tensor> in, out;
      for (auto& [dt, d] : b.in) keep.push_back(std::make_unique<DeviceTensor>(*dev, dt, d)), in.push_back(keep.back()->t);
      for (auto& [dt, d] : b.out) keep.push_back(std::make_unique<DeviceTensor>(*dev, dt, d)), out.push_back(keep.back()->t);
      // The argmax inputs hold 0 (a valid tap), so only the named fault is wrong.
      for (size_t i = 0; i < b.in.size(); ++i)
        if (b.in[i].first == U) keep[i]->upload(std::vector<uint8_t>(numel(b.in[i].second), 0));
      axon_kernel_fn fn = dev->api.get_kernel(dev->api.device_ctx, b.op, F);
      REQUIRE(fn != nullptr);
      axon_kernel_call c{sizeof(axon_kernel_call), b.op, static_cast<int32_t>(in.size()), in.data(),
                         static_cast<int32_t>(out.size()), out.data(), b.attrs};
      axon_error err{};
      const axon_status s = fn(dev->api.device_ctx, &c, &err);
      INFO("message: " << err.message);
      CHECK(s == AXON_INVALID_ARGUMENT);
      CHECK(std::strstr(err.message, b.op) != nullptr);
      CHECK(std::strstr(err.message, b.expect) != nullptr);
    }
}

TEST_CASE("_FusedConv2DMaxPoolGrad rejects an argmax that is no tap of the window", "[fused][pool][errors][ref][cpu]") {
  // 2x2 windows: taps 0..3 or 255. 4 is past the window; with pool SAME on
  // an odd z, tap 3 of the last window lies in the padding.
  const Case k{"hand-made", 1, 5, 5, 1, 3, 3, 1, 1, V, 2, 2, 2, S, kRelu};
  const Geo g = geometry(k);  // z 3x3 -> y 2x2, padding after
  const HostTensor x{g.xd, std::vector<float>(numel(g.xd), 1.0f)}, w{g.wd, std::vector<float>(9, 1.0f)};
  const HostTensor dy{g.yd, std::vector<float>(4, 1.0f)};
  // What each plugin's message says about the bad value.
  struct Expect {
    std::vector<uint8_t> argmax;
    const char* ref;
    const char* cpu;
  };
  const std::vector<Expect> cases{{{0, 0, 4, 0}, "argmax 4", "argmax[2] = 4"},
                                  {{0, 0, 0, 3}, "padding", "argmax[3] = 3"},
                                  {{0, 0, 0, 254}, "argmax 254", "argmax[3] = 254"}};
  for (const Expect& c : cases) {
    for (TestDevice* dev : {&ref(), &cpu()}) {
      const char* expect = dev == &ref() ? c.ref : c.cpu;
      INFO((dev == &ref() ? "reference" : "CPU") << ", argmax " << int(c.argmax[2]) << "," << int(c.argmax[3]));
      try {
        backward(*dev, g, x, w, dy, c.argmax, true);
        FAIL("accepted");
      } catch (const std::runtime_error& e) {
        INFO("message: " << e.what());
        CHECK(std::string(e.what()).find("_FusedConv2DMaxPoolGrad") != std::string::npos);
        CHECK(std::string(e.what()).find(expect) != std::string::npos);
      }
    }
  }
}
