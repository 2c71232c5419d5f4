// GPU kernel comparison: runs every op of the ABI on the CUDA plugin and on the
// reference plugin (the oracle) with the same random inputs, odd shapes,
// batch 1, SAME/VALID, stride 2 and the MNIST CNN's own shapes, and prints the
// max abs / max rel error per case against a stated tolerance.
//
//   cuda_kernels_test <libaxon-plugin-cuda.so> <libaxon-plugin-reference.so>
//
// Exit: 0 all pass, 1 a failure (also: the driver shows a GPU the plugin
// cannot use, e.g. cuDNN missing), 77 the driver reports no CUDA device.
// Plain C++ (no Catch2) so that it builds on the GPU machine.
#include "compare.hpp"
#include "device_presence.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <utility>
#include <string>

using namespace axon::test;

namespace {

struct Counts {
  int pass = 0, fail = 0;
};

// Tolerance, element by element: |gpu - ref| <= atol + rtol * |ref|, or for
// sums of products (`sum`) tol::sum_allowed(ref, S, kSumUlps), S the
// reference's result on |inputs|: 64 * 2^-24 * S + 2^-24 * |ref| (the
// driver runs on the CPU plugin too, which keeps within 16; the GPU gets
// more room for cuDNN's Winograd and FFT algorithms: tests/common/tolerance.hpp
// says why and what it catches). With TF32 allowed, products lose 13 bits
// and this bound does not hold, so the driver runs with TF32 off.
struct Tol {
  double atol, rtol;
  bool sum = false;
};

const Tol kSum{0, 0, true};
const Tol kExact{0, 0};

struct Runner {
  TestDevice& gpu;
  TestDevice& ref;
  Counts counts;

  void run(const std::string& label, const char* op, const std::vector<HostTensor>& in, const std::vector<HostTensor>& out,
           const void* attrs, Tol tol, size_t compare_count = 0) {
    // The oracle has every op and must run each case: a case it cannot
    // check fails rather than passing unchecked.
    if (!ref.has(op, in.empty() ? out[0].dtype : in[0].dtype)) {
      std::printf("FAIL  %-24s %-44s reference plugin has no kernel\n", op, label.c_str());
      ++counts.fail;
      return;
    }
    std::vector<HostTensor> got, want;
    try {
      want = run_host(ref, op, in, out, attrs);
    } catch (const std::exception& e) {
      std::printf("FAIL  %-24s %-44s reference failed: %s\n", op, label.c_str(), e.what());
      ++counts.fail;
      return;
    }
    try {
      got = run_host(gpu, op, in, out, attrs);
    } catch (const std::exception& e) {
      std::printf("FAIL  %-24s %-44s %s\n", op, label.c_str(), e.what());
      ++counts.fail;
      return;
    }
    // For sums, S: the reference on the inputs' magnitudes (for MaxPoolGrad
    // the gradient's only: x and y choose where it goes).
    std::vector<HostTensor> bound;
    if (tol.sum) {
      std::vector<HostTensor> abs_in = in;
      for (size_t k = std::string(op) == "MaxPoolGrad" ? 2 : 0; k < abs_in.size(); ++k)
        for (float& v : abs_in[k].f) v = std::fabs(v);
      bound = run_host(ref, op, abs_in, out, attrs);
    }
    // Compare the outputs, and for in-place ops (no outputs) the inputs.
    const size_t n = compare_count ? compare_count : (out.empty() ? got.size() : out.size());
    double max_abs = 0, max_rel = 0;
    std::string detail;
    bool ok = true;
    for (size_t k = 0; k < n; ++k) {
      Diff d = tol.sum ? compare_sum(got[k], want[k], bound[k], tol::kGpuSumUlps) : compare(got[k], want[k], tol.atol, tol.rtol);
      max_abs = std::max(max_abs, d.max_abs);
      max_rel = std::max(max_rel, d.max_rel);
      if (d.bad) {
        ok = false;
        char b[200];
        std::snprintf(b, sizeof b, " [tensor %zu: %lld bad, first at %lld: gpu %.7g ref %.7g]", k, (long long)d.bad,
                      (long long)d.first_bad, d.got, d.want);
        detail += b;
      }
    }
    char rule[64];
    if (tol.sum)
      std::snprintf(rule, sizeof rule, "%g u S + u |ref|", tol::kGpuSumUlps);
    else
      std::snprintf(rule, sizeof rule, "atol %.1e rtol %.1e", tol.atol, tol.rtol);
    std::printf("%s  %-24s %-44s max_abs %.3e max_rel %.3e (%s)%s\n", ok ? "PASS" : "FAIL", op, label.c_str(), max_abs,
                max_rel, rule, detail.c_str());
    ok ? ++counts.pass : ++counts.fail;
  }
};

// A case whose answer is known by hand: the plugin's first output must equal
// `want` exactly, whatever the reference says (run() compares with it too).
void expect_values(Runner& r, const std::string& label, const char* op, const std::vector<HostTensor>& in,
                   const std::vector<HostTensor>& out, const void* attrs, const std::vector<float>& want) {
  std::string detail;
  try {
    const HostTensor got = run_host(r.gpu, op, in, out, attrs)[0];
    for (size_t k = 0; k < want.size() && detail.empty(); ++k)
      if (!(got.f[k] == want[k]) && !(std::isnan(got.f[k]) && std::isnan(want[k])))
        detail = " [element " + std::to_string(k) + ": " + std::to_string(got.f[k]) + ", want " + std::to_string(want[k]) + "]";
  } catch (const std::exception& e) {
    detail = std::string(" ") + e.what();
  }
  std::printf("%s  %-24s %-44s by hand%s\n", detail.empty() ? "PASS" : "FAIL", op, label.c_str(), detail.c_str());
  detail.empty() ? ++r.counts.pass : ++r.counts.fail;
}

std::string conv_label(const std::vector<int64_t>& x, const std::vector<int64_t>& f, int stride, int dil, axon_padding p) {
  char b[160];
  std::snprintf(b, sizeof b, "x[%lld,%lld,%lld,%lld] f[%lld,%lld,%lld,%lld] s%d d%d %s", (long long)x[0], (long long)x[1],
                (long long)x[2], (long long)x[3], (long long)f[0], (long long)f[1], (long long)f[2], (long long)f[3], stride,
                dil, p == AXON_PADDING_SAME ? "SAME" : "VALID");
  return b;
}

int64_t out_size(int64_t in, int64_t k, int stride, int dil, axon_padding p) {
  const int64_t eff = (k - 1) * dil + 1;
  return p == AXON_PADDING_SAME ? (in + stride - 1) / stride : (in >= eff ? (in - eff) / stride + 1 : 0);
}

void conv_cases(Runner& r, std::mt19937& rng) {
  struct Case {
    std::vector<int64_t> x, f;
    int stride, dil;
    axon_padding pad;
  };
  const std::vector<Case> cases = {
      {{64, 28, 28, 1}, {3, 3, 1, 32}, 1, 1, AXON_PADDING_VALID},   // the CNN's first layer
      {{64, 13, 13, 32}, {3, 3, 32, 64}, 1, 1, AXON_PADDING_VALID}, // the CNN's second layer
      {{64, 5, 5, 64}, {3, 3, 64, 64}, 1, 1, AXON_PADDING_VALID},   // the CNN's third layer
      {{1, 7, 9, 3}, {3, 2, 3, 5}, 1, 1, AXON_PADDING_SAME},        // batch 1, odd sizes, even filter width
      {{2, 11, 8, 4}, {3, 3, 4, 6}, 2, 1, AXON_PADDING_SAME},       // stride 2, asymmetric SAME padding
      {{3, 10, 7, 2}, {4, 4, 2, 3}, 2, 1, AXON_PADDING_SAME},
      {{1, 9, 9, 3}, {3, 3, 3, 4}, 2, 1, AXON_PADDING_VALID},
      {{2, 12, 11, 3}, {3, 3, 3, 4}, 1, 2, AXON_PADDING_SAME},      // dilation 2
      {{5, 6, 5, 7}, {1, 1, 7, 3}, 1, 1, AXON_PADDING_VALID},       // 1x1
      // A filter of 2,100,000 rows (R*S*C): its HWIO -> KRSC transpose needs
      // more than 65535 row tiles, past the old single-pass grid's limit.
      {{1, 1, 1, 2100000}, {1, 1, 2100000, 1}, 1, 1, AXON_PADDING_VALID},
  };
  for (const auto& c : cases) {
    axon_conv2d_attrs a{};
    a.struct_size = sizeof a;
    a.stride_h = a.stride_w = c.stride;
    a.dilation_h = a.dilation_w = c.dil;
    a.padding = c.pad;
    const int64_t oh = out_size(c.x[1], c.f[0], c.stride, c.dil, c.pad), ow = out_size(c.x[2], c.f[1], c.stride, c.dil, c.pad);
    const std::vector<int64_t> y = {c.x[0], oh, ow, c.f[3]};
    const std::string label = conv_label(c.x, c.f, c.stride, c.dil, c.pad);
    HostTensor x = uniform(rng, c.x), f = uniform(rng, c.f), dy = uniform(rng, y);
    r.run(label, "Conv2D", {x, f}, {empty_like(AXON_FLOAT32, y)}, &a, kSum);
    r.run(label, "Conv2DBackpropInput", {dy, f}, {empty_like(AXON_FLOAT32, c.x)}, &a,
          kSum);
    r.run(label, "Conv2DBackpropFilter", {x, dy}, {empty_like(AXON_FLOAT32, c.f)}, &a, kSum);
  }
}

void pool_cases(Runner& r, std::mt19937& rng) {
  struct Case {
    std::vector<int64_t> x;
    int window, stride;
    axon_padding pad;
  };
  const std::vector<Case> cases = {
      {{64, 26, 26, 32}, 2, 2, AXON_PADDING_VALID},  // the CNN
      {{64, 11, 11, 64}, 2, 2, AXON_PADDING_VALID},  // the CNN, odd size
      {{1, 7, 9, 3}, 3, 2, AXON_PADDING_SAME},       // asymmetric SAME
      {{2, 8, 8, 4}, 3, 1, AXON_PADDING_SAME},       // overlapping windows
      {{3, 5, 6, 2}, 2, 2, AXON_PADDING_SAME},
  };
  for (const auto& c : cases) {
    axon_pool_attrs a{};
    a.struct_size = sizeof a;
    a.window_h = a.window_w = c.window;
    a.stride_h = a.stride_w = c.stride;
    a.padding = c.pad;
    const int64_t oh = out_size(c.x[1], c.window, c.stride, 1, c.pad), ow = out_size(c.x[2], c.window, c.stride, 1, c.pad);
    const std::vector<int64_t> ys = {c.x[0], oh, ow, c.x[3]};
    char label[120];
    std::snprintf(label, sizeof label, "x[%lld,%lld,%lld,%lld] %dx%d s%d %s", (long long)c.x[0], (long long)c.x[1],
                  (long long)c.x[2], (long long)c.x[3], c.window, c.window, c.stride,
                  c.pad == AXON_PADDING_SAME ? "SAME" : "VALID");
    HostTensor x = uniform(rng, c.x);  // continuous values: no ties
    r.run(label, "MaxPool", {x}, {empty_like(AXON_FLOAT32, ys)}, &a, kExact);
    // MaxPoolGrad takes the forward's y; the reference's y is the oracle's.
    HostTensor y = run_host(r.ref, "MaxPool", {x}, {empty_like(AXON_FLOAT32, ys)}, &a)[0];
    HostTensor dy = uniform(rng, ys);
    r.run(label, "MaxPoolGrad", {x, y, dy}, {empty_like(AXON_FLOAT32, c.x)}, &a, kSum);
    // Ties: values 0, 1 and 2 only. The gradient goes to each window's first
    // maximum, row-major (the op table's rule; cuDNN does not say which).
    HostTensor tied = x;
    for (float& v : tied.f) v = std::floor((v + 1.f) * 1.5f);
    HostTensor ty = run_host(r.ref, "MaxPool", {tied}, {empty_like(AXON_FLOAT32, ys)}, &a)[0];
    r.run(std::string(label) + " ties", "MaxPoolGrad", {tied, ty, dy}, {empty_like(AXON_FLOAT32, c.x)}, &a, kSum);
    // Every tap tied: the whole of each window's dy lands on its first real
    // (unpadded) tap, worked out here.
    HostTensor flat = empty_like(AXON_FLOAT32, c.x), want = empty_like(AXON_FLOAT32, c.x);
    std::fill(flat.f.begin(), flat.f.end(), 0.f);
    std::fill(want.f.begin(), want.f.end(), 0.f);
    const int64_t pad_h = c.pad == AXON_PADDING_SAME ? std::max<int64_t>((oh - 1) * c.stride + c.window - c.x[1], 0) / 2 : 0;
    const int64_t pad_w = c.pad == AXON_PADDING_SAME ? std::max<int64_t>((ow - 1) * c.stride + c.window - c.x[2], 0) / 2 : 0;
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t ch = 0; ch < c.x[3]; ++ch) {
            const int64_t ih = std::max<int64_t>(i * c.stride - pad_h, 0), iw = std::max<int64_t>(j * c.stride - pad_w, 0);
            want.f[((n * c.x[1] + ih) * c.x[2] + iw) * c.x[3] + ch] += dy.f[((n * oh + i) * ow + j) * c.x[3] + ch];
          }
    HostTensor fy = run_host(r.ref, "MaxPool", {flat}, {empty_like(AXON_FLOAT32, ys)}, &a)[0];
    r.run(std::string(label) + " all tied", "MaxPoolGrad", {flat, fy, dy}, {empty_like(AXON_FLOAT32, c.x)}, &a, kSum);
    if (c.window <= c.stride)  // one window per input: no sums, so exact
      expect_values(r, std::string(label) + " all tied", "MaxPoolGrad", {flat, fy, dy}, {empty_like(AXON_FLOAT32, c.x)}, &a,
                    want.f);
  }
}

void elementwise_cases(Runner& r, std::mt19937& rng) {
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{64, 26, 26, 32}, std::vector<int64_t>{5, 7, 3}}) {
    HostTensor x = uniform(rng, s), dy = uniform(rng, s);
    std::string label = x.shape();
    r.run(label, "Relu", {x}, {empty_like(AXON_FLOAT32, s)}, nullptr, kExact);
    HostTensor y = run_host(r.ref, "Relu", {x}, {empty_like(AXON_FLOAT32, s)}, nullptr)[0];  // has exact zeros
    r.run(label, "ReluGrad", {dy, y}, {empty_like(AXON_FLOAT32, s)}, nullptr, kExact);
    HostTensor b = uniform(rng, {s.back()});
    r.run(label, "BiasAdd", {x, b}, {empty_like(AXON_FLOAT32, s)}, nullptr, kExact);
    r.run(label, "BiasAddGrad", {dy}, {empty_like(AXON_FLOAT32, {s.back()})}, nullptr,
          kSum);
    axon_scale_attrs sc{};
    sc.struct_size = sizeof sc;
    sc.alpha = -0.37f;
    r.run(label, "Scale", {x}, {empty_like(AXON_FLOAT32, s)}, &sc, kExact);
    r.run(label, "Identity", {x}, {empty_like(AXON_FLOAT32, s)}, nullptr, {0, 0});
    r.run(label, "Sum", {x}, {empty_like(AXON_FLOAT32, {1})}, nullptr, kSum);
  }
  {
    HostTensor x = empty_like(AXON_FLOAT32, {0});
    r.run("[0] (empty)", "Sum", {x}, {empty_like(AXON_FLOAT32, {1})}, nullptr, kExact);
  }
  for (int n : {1, 3, 11}) {
    std::vector<HostTensor> xs;
    for (int k = 0; k < n; ++k) xs.push_back(uniform(rng, {4, 9}));
    r.run(std::to_string(n) + " x [4,9]", "AddN", xs, {empty_like(AXON_FLOAT32, {4, 9})}, nullptr, kSum);
  }
  axon_fill_attrs fa{};
  fa.struct_size = sizeof fa;
  fa.value = 3.25f;
  r.run("[5,7] value 3.25", "Fill", {}, {empty_like(AXON_FLOAT32, {5, 7})}, &fa, {0, 0});
  HostTensor img = bytes(rng, {64, 28, 28, 1});
  r.run(img.shape(), "NormalizeImage", {img}, {empty_like(AXON_FLOAT32, img.dims)}, nullptr, {1e-7, 1e-6});
  HostTensor ints = labels(rng, 1000, 1 << 30);
  r.run("int32 [1000]", "Identity", {ints}, {empty_like(AXON_INT32, {1000})}, nullptr, {0, 0});
}

void matmul_cases(Runner& r, std::mt19937& rng) {
  struct Case {
    int64_t m, k, n;
    bool ta, tb;
  };
  const std::vector<Case> cases = {
      {64, 576, 64, false, false},   // the CNN's first dense layer (576 -> 64)
      {576, 64, 64, true, false},    // its weight gradient, x^T dy
      {64, 64, 576, false, true},    // its input gradient, dy W^T
      {64, 64, 10, false, false},    // the CNN's second dense layer (64 -> 10)
      {64, 64, 10, true, false},     // its weight gradient
      {64, 10, 64, false, true},     // its input gradient
      {64, 1600, 10, false, false},  // a wider dense layer
      {1600, 64, 10, true, false},
      {64, 10, 1600, false, true},
      {7, 13, 5, false, false}, {1, 3, 1, true, true}, {9, 1, 6, false, true}, {33, 65, 17, true, true},
  };
  for (const auto& c : cases) {
    axon_matmul_attrs a{};
    a.struct_size = sizeof a;
    a.transpose_a = c.ta;
    a.transpose_b = c.tb;
    HostTensor A = uniform(rng, c.ta ? std::vector<int64_t>{c.k, c.m} : std::vector<int64_t>{c.m, c.k});
    HostTensor B = uniform(rng, c.tb ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n});
    std::string label = A.shape() + (c.ta ? "^T" : "") + " x " + B.shape() + (c.tb ? "^T" : "");
    r.run(label, "MatMul", {A, B}, {empty_like(AXON_FLOAT32, {c.m, c.n})}, &a, kSum);
  }
}

void loss_cases(Runner& r, std::mt19937& rng) {
  for (auto [n, c] : std::initializer_list<std::pair<int64_t, int>>{{64, 10}, {1, 3}, {5, 37}}) {
    HostTensor logits = uniform(rng, {n, c}, -4.f, 4.f), lab = labels(rng, n, c);
    std::string label = logits.shape();
    r.run(label, "SparseSoftmaxCrossEntropyWithLogits", {logits, lab},
          {empty_like(AXON_FLOAT32, {n}), empty_like(AXON_FLOAT32, {n, c})}, nullptr, {1e-5, 1e-5});
    // Ties: copy the row's max to another column and label alternately the
    // lower and the higher of the two (InTopK counts both, the accuracy op
    // only the lower); every third row also holds an infinity (InTopK: 0).
    HostTensor tied = logits;
    for (int64_t i = 0; i < n; ++i) {
      float* row = tied.f.data() + i * c;
      int64_t arg = 0;
      for (int64_t j = 1; j < c; ++j)
        if (row[j] > row[arg]) arg = j;
      row[(arg + 1) % c] = row[arg];
      const int64_t lo = std::min<int64_t>(arg, (arg + 1) % c), hi = std::max<int64_t>(arg, (arg + 1) % c);
      lab.i32[i] = static_cast<int32_t>(i % 2 ? hi : lo);
      if (i % 3 == 2 && c > 2) row[(arg + 2) % c] = -INFINITY;
    }
    for (const char* op : {"InTopK", "_SparseCategoricalAccuracy"})
      r.run(label + " with ties", op, {tied, lab}, {empty_like(AXON_FLOAT32, {n})}, nullptr, {0, 0});
  }
}

// NaN among the logits (docs/ops.md leaves such rows unspecified): the CUDA
// plugin takes the CPU plugin's rule, the reference's too: the argmax scan
// from index 0 moves only to a greater value, so a NaN never wins and a NaN
// at index 0 is never beaten; InTopK is 0 for any row holding one. 40
// classes: some of a warp's lanes hold two logits, a NaN and the maximum.
void nan_cases(Runner& r) {
  const int64_t c = 40;
  const float nan = NAN;
  struct Row {
    std::vector<std::pair<int64_t, float>> set;  // on a row of -1s
    int32_t argmax;
  };
  const std::vector<Row> rows = {
      {{{0, nan}, {5, 3.f}}, 0},               // NaN first: never beaten
      {{{1, nan}, {33, 3.f}}, 33},             // the lane of index 1 also holds the maximum
      {{{7, nan}, {3, 3.f}}, 3},
      {{{8, 2.f}, {39, 2.f}, {20, nan}}, 8},   // a tie, and a NaN between
      {{{10, nan}, {11, nan}}, 0},             // only NaN and -1s: the first -1
      {{{0, -INFINITY}, {30, nan}}, 1},        // -inf first, NaN later
  };
  HostTensor logits;
  logits.dims = {static_cast<int64_t>(rows.size()), c};
  logits.f.assign(rows.size() * c, -1.f);
  HostTensor hit, miss;
  hit.dtype = miss.dtype = AXON_INT32;
  hit.dims = miss.dims = {static_cast<int64_t>(rows.size())};
  for (size_t i = 0; i < rows.size(); ++i) {
    for (auto [k, v] : rows[i].set) logits.f[i * c + k] = v;
    hit.i32.push_back(rows[i].argmax);
    miss.i32.push_back(static_cast<int32_t>((rows[i].argmax + 1) % c));
  }
  // All NaN: index 0.
  logits.dims[0] += 1;
  logits.f.insert(logits.f.end(), c, nan);
  hit.dims[0] += 1, miss.dims[0] += 1;
  hit.i32.push_back(0), miss.i32.push_back(1);
  const int64_t n = logits.dims[0];
  const std::string label = logits.shape() + " with NaN";
  const std::vector<HostTensor> out = {empty_like(AXON_FLOAT32, {n})};
  for (const HostTensor* lab : {&hit, &miss}) {
    const std::string what = label + (lab == &hit ? ", labels at the argmax" : ", labels beside it");
    r.run(what, "_SparseCategoricalAccuracy", {logits, *lab}, out, nullptr, kExact);
    expect_values(r, what, "_SparseCategoricalAccuracy", {logits, *lab}, out, nullptr,
                  std::vector<float>(static_cast<size_t>(n), lab == &hit ? 1.f : 0.f));
    r.run(what, "InTopK", {logits, *lab}, out, nullptr, kExact);
    expect_values(r, what, "InTopK", {logits, *lab}, out, nullptr, std::vector<float>(static_cast<size_t>(n), 0.f));
  }
}

void adam_cases(Runner& r, std::mt19937& rng) {
  for (int64_t step : {1, 7}) {
    axon_adam_attrs a{};
    a.struct_size = sizeof a;
    a.learning_rate = 1e-3f;
    a.beta_1 = 0.9f;
    a.beta_2 = 0.999f;
    a.epsilon = 1e-7f;
    a.step = step;
    for (const std::vector<int64_t>& s : {std::vector<int64_t>{576, 64}, std::vector<int64_t>{1600, 10}}) {
      HostTensor var = uniform(rng, s), m = uniform(rng, s, -0.1f, 0.1f), v = uniform(rng, s, 0.f, 0.01f),
                 g = uniform(rng, s);
      r.run(var.shape() + " step " + std::to_string(step), "ApplyAdam", {var, m, v, g}, {}, &a, {1e-6, 1e-5}, 3);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <libaxon-plugin-cuda.so> <libaxon-plugin-reference.so>\n", argv[0]);
    return 2;
  }
  try {
    LoadedPlugin cuda(argv[1]);
    if (auto code = exit_without_device(cuda, "CUDA device")) return *code;
    LoadedPlugin reference(argv[2]);
    if (reference.device_count() == 0) {
      std::printf("FAIL: the reference plugin has no device\n");
      return 1;
    }
    axon_device_props props{};
    axon_error err{};
    check(cuda.api.get_device_props(cuda.api.plugin_ctx, 0, &props, &err), err, "get_device_props");
    std::printf("GPU: %s, compute capability %d.%d, %.1f GiB, %s\n", props.name, props.compute_major, props.compute_minor,
                props.memory_total / 1073741824.0, props.description);
    TestDevice gpu(cuda, 0), ref(reference, 0);
    Runner r{gpu, ref, {}};
    std::mt19937 rng(20261130);
    conv_cases(r, rng);
    pool_cases(r, rng);
    matmul_cases(r, rng);
    elementwise_cases(r, rng);
    loss_cases(r, rng);
    nan_cases(r);
    adam_cases(r, rng);
    std::printf("SUMMARY: %s: %d passed, %d failed\n", r.counts.fail ? "FAIL" : "PASS", r.counts.pass, r.counts.fail);
    return r.counts.fail ? 1 : 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
