// GPU kernel comparison: runs every op of the ABI on the CUDA plugin and on the
// reference plugin (the oracle) with the same random inputs, odd shapes,
// batch 1, SAME/VALID, stride 2 and the MNIST CNN's own shapes, and prints the
// max abs / max rel error per case against a stated tolerance. Ops of ABI 1.4
// the reference plugin lacks are reported SKIP and counted.
//
//   cuda_kernels_test <libaxon-plugin-cuda.so> <libaxon-plugin-reference.so>
//
// Exit: 0 all pass, 1 a failure (also: the driver shows a GPU the plugin
// cannot use, e.g. cuDNN missing), 77 the driver reports no CUDA device.
// Plain C++ (no Catch2) so that it builds on the GPU machine.
#include "compare.hpp"
#include "device_presence.hpp"

#include <axon/op_table.hpp>
#include <axon/philox.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <utility>
#include <string>
#include <tuple>

using namespace axon::test;

namespace {

struct Counts {
  int pass = 0, fail = 0, skip = 0;
};

// Ops of ABI 1.4 and later may be missing from the reference plugin (the
// oracle) and, in this driver's run on the CPU plugin, from the plugin under
// test: such a case is reported SKIP, counted, never passed unchecked.
bool newer_op(const char* op) {
  const axon::OpSchema* s = axon::find_op(op);
  return s != nullptr && (s->added.major > 1 || s->added.minor >= 4);
}

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
  bool all_ops;  // the plugin under test must have every op (the CUDA plugin does)
  Counts counts;

  void run(const std::string& label, const char* op, const std::vector<HostTensor>& in,
           const std::vector<HostTensor>& out, const void* attrs, Tol tol, size_t compare_count = 0) {
    // The oracle has every op and must run each case: a case it cannot
    // check fails rather than passing unchecked (but see newer_op).
    const axon_dtype dtype = in.empty() ? out[0].dtype : in[0].dtype;
    const bool gpu_lacks = !gpu.has(op, dtype) && newer_op(op) && !all_ops;
    if (gpu_lacks || (!ref.has(op, dtype) && newer_op(op))) {
      std::printf("SKIP  %-24s %-44s %s plugin has no kernel yet (an ABI 1.4 op)\n", op, label.c_str(),
                  gpu_lacks ? "the tested" : "the reference");
      ++counts.skip;
      return;
    }
    if (!ref.has(op, dtype)) {
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
      Diff d = tol.sum ? compare_sum(got[k], want[k], bound[k], tol::kGpuSumUlps)
                       : compare(got[k], want[k], tol.atol, tol.rtol);
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
        detail = " [element " + std::to_string(k) + ": " + std::to_string(got.f[k]) + ", want " +
                 std::to_string(want[k]) + "]";
  } catch (const std::exception& e) {
    detail = std::string(" ") + e.what();
  }
  std::printf("%s  %-24s %-44s by hand%s\n", detail.empty() ? "PASS" : "FAIL", op, label.c_str(), detail.c_str());
  detail.empty() ? ++r.counts.pass : ++r.counts.fail;
}

std::string conv_label(const std::vector<int64_t>& x, const std::vector<int64_t>& f, int stride, int dil,
                       axon_padding p) {
  char b[160];
  std::snprintf(b, sizeof b, "x[%lld,%lld,%lld,%lld] f[%lld,%lld,%lld,%lld] s%d d%d %s", (long long)x[0],
                (long long)x[1], (long long)x[2], (long long)x[3], (long long)f[0], (long long)f[1], (long long)f[2],
                (long long)f[3], stride, dil, p == AXON_PADDING_SAME ? "SAME" : "VALID");
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
    const int64_t oh = out_size(c.x[1], c.f[0], c.stride, c.dil, c.pad),
                  ow = out_size(c.x[2], c.f[1], c.stride, c.dil, c.pad);
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
    const int64_t oh = out_size(c.x[1], c.window, c.stride, 1, c.pad),
                  ow = out_size(c.x[2], c.window, c.stride, 1, c.pad);
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
    const int64_t pad_h =
        c.pad == AXON_PADDING_SAME ? std::max<int64_t>((oh - 1) * c.stride + c.window - c.x[1], 0) / 2 : 0;
    const int64_t pad_w =
        c.pad == AXON_PADDING_SAME ? std::max<int64_t>((ow - 1) * c.stride + c.window - c.x[2], 0) / 2 : 0;
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j)
          for (int64_t ch = 0; ch < c.x[3]; ++ch) {
            const int64_t ih = std::max<int64_t>(i * c.stride - pad_h, 0),
                          iw = std::max<int64_t>(j * c.stride - pad_w, 0);
            want.f[((n * c.x[1] + ih) * c.x[2] + iw) * c.x[3] + ch] += dy.f[((n * oh + i) * ow + j) * c.x[3] + ch];
          }
    HostTensor fy = run_host(r.ref, "MaxPool", {flat}, {empty_like(AXON_FLOAT32, ys)}, &a)[0];
    r.run(std::string(label) + " all tied", "MaxPoolGrad", {flat, fy, dy}, {empty_like(AXON_FLOAT32, c.x)}, &a, kSum);
    if (c.window <= c.stride)  // one window per input: no sums, so exact
      expect_values(r, std::string(label) + " all tied", "MaxPoolGrad", {flat, fy, dy}, {empty_like(AXON_FLOAT32, c.x)},
                    &a, want.f);
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
    // InTopKV2: the tie at the k-th place counts, k past the classes too.
    for (int32_t k : {1, 2, 5, c + 1}) {
      const axon_in_top_k_attrs a{sizeof(axon_in_top_k_attrs), k};
      r.run(label + " with ties, k " + std::to_string(k), "InTopKV2", {tied, lab}, {empty_like(AXON_FLOAT32, {n})}, &a,
            {0, 0});
    }
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
    const axon_in_top_k_attrs top3{sizeof(axon_in_top_k_attrs), 3};
    r.run(what, "InTopKV2", {logits, *lab}, out, &top3, kExact);
    expect_values(r, what, "InTopKV2", {logits, *lab}, out, &top3, std::vector<float>(static_cast<size_t>(n), 0.f));
  }
}

// ABI 1.4: the activations and their gradients (inputs in TensorFlow's
// order; the gradients of Sigmoid, Tanh, Elu and Selu take y, drawn from the
// activation's range), with the attributes each takes.
void activation_cases(Runner& r, std::mt19937& rng) {
  struct Act {
    const char* op;
    const char* grad;
    bool grad_takes_y;
    float y_lo, y_hi;  // y's range, for gradients that take y
  };
  const Act acts[] = {{"Sigmoid", "SigmoidGrad", true, 0.f, 1.f},    {"Tanh", "TanhGrad", true, -1.f, 1.f},
                      {"Elu", "EluGrad", true, -1.f, 4.f},          {"Selu", "SeluGrad", true, -1.75f, 4.f},
                      {"Relu6", "Relu6Grad", false, 0, 0},          {"LeakyRelu", "LeakyReluGrad", false, 0, 0},
                      {"Softplus", "SoftplusGrad", false, 0, 0},    {"Gelu", "GeluGrad", false, 0, 0},
                      {"Silu", "SiluGrad", false, 0, 0},            {"ClippedRelu", "ClippedReluGrad", false, 0, 0}};
  axon_leaky_relu_attrs leaky{};
  leaky.struct_size = sizeof leaky;
  leaky.alpha = 0.2f;
  axon_gelu_attrs gelu_erf{}, gelu_tanh{};
  gelu_erf.struct_size = gelu_tanh.struct_size = sizeof gelu_erf;
  gelu_tanh.approximate = 1;
  axon_clipped_relu_attrs clipped{}, plain{};
  clipped.struct_size = plain.struct_size = sizeof clipped;
  clipped.negative_slope = 0.1f, clipped.max_value = 6.f, clipped.threshold = 0.5f;
  plain.max_value = INFINITY;
  // Transcendental functions in float: a few ulps of the largest term.
  const Tol tol{2e-6, 2e-6};
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{64, 13, 13, 8}, std::vector<int64_t>{5, 7, 3}}) {
    HostTensor x = uniform(rng, s, -8.f, 8.f), dy = uniform(rng, s);
    // Softplus's thresholds lie at +-13.94: cover them and beyond.
    HostTensor wide = uniform(rng, s, -20.f, 20.f);
    for (const Act& a : acts) {
      std::vector<std::pair<const void*, std::string>> variants = {{nullptr, ""}};
      if (std::string(a.op) == "LeakyRelu") variants = {{&leaky, " alpha 0.2"}};
      if (std::string(a.op) == "Gelu") variants = {{&gelu_erf, " erf"}, {&gelu_tanh, " tanh"}};
      if (std::string(a.op) == "ClippedRelu")
        variants = {{&clipped, " (0.1, 6, 0.5)"}, {&plain, " (0, none, 0)"}};
      const HostTensor& in = std::string(a.op) == "Softplus" ? wide : x;
      for (const auto& [attrs, what] : variants) {
        const std::string label = in.shape() + what;
        r.run(label, a.op, {in}, {empty_like(AXON_FLOAT32, s)}, attrs, tol);
        if (a.grad_takes_y)
          r.run(label, a.grad, {uniform(rng, s, a.y_lo, a.y_hi), dy}, {empty_like(AXON_FLOAT32, s)}, attrs, tol);
        else
          r.run(label, a.grad, {dy, in}, {empty_like(AXON_FLOAT32, s)}, attrs, tol);
      }
    }
  }
  for (const std::vector<int64_t>& s :
       {std::vector<int64_t>{64, 10}, std::vector<int64_t>{5, 1000}, std::vector<int64_t>{3, 4, 37}}) {
    HostTensor logits = uniform(rng, s, -6.f, 6.f), dy = uniform(rng, s);
    r.run(logits.shape(), "Softmax", {logits}, {empty_like(AXON_FLOAT32, s)}, nullptr, {1e-7, 2e-5});
    HostTensor y = uniform(rng, s, 0.f, 1.f);
    r.run(logits.shape(), "SoftmaxGrad", {dy, y}, {empty_like(AXON_FLOAT32, s)}, nullptr, {1e-6, 1e-5});
  }
}

// ABI 1.4: Sub, Mul, Maximum, MaximumGrad (ties to a), MovingAverage,
// ConcatV2, Slice, Pad: exact.
void tensor_cases(Runner& r, std::mt19937& rng) {
  const std::vector<int64_t> s = {7, 5, 3, 2};
  HostTensor a = uniform(rng, s), b = uniform(rng, s), dy = uniform(rng, s);
  for (size_t i = 0; i < b.f.size(); i += 5) b.f[i] = a.f[i];  // ties
  for (const char* op : {"Sub", "Mul", "Maximum"})
    r.run(a.shape() + " with ties", op, {a, b}, {empty_like(AXON_FLOAT32, s)}, nullptr, kExact);
  r.run(a.shape() + " with ties", "MaximumGrad", {dy, a, b}, {empty_like(AXON_FLOAT32, s), empty_like(AXON_FLOAT32, s)},
        nullptr, kExact);
  axon_moving_average_attrs ma{};
  ma.struct_size = sizeof ma;
  ma.momentum = 0.99f;
  ma.weight = 0.01f;
  r.run(a.shape() + " momentum 0.99", "MovingAverage", {a, b}, {}, &ma, {1e-7, 1e-6});
  // ConcatV2 along each axis, one input empty along it.
  for (int axis = 0; axis < 4; ++axis) {
    std::vector<HostTensor> xs;
    std::vector<int64_t> ys = s;
    ys[axis] = 0;
    for (int64_t part : {int64_t{2}, int64_t{0}, int64_t{3}}) {
      std::vector<int64_t> d = s;
      d[axis] = part;
      xs.push_back(uniform(rng, d));
      ys[axis] += part;
    }
    axon_concat_attrs ca{};
    ca.struct_size = sizeof ca;
    ca.axis = axis;
    r.run("3 inputs along axis " + std::to_string(axis), "ConcatV2", xs, {empty_like(AXON_FLOAT32, ys)}, &ca, kExact);
  }
  axon_slice_attrs sa{};
  sa.struct_size = sizeof sa;
  sa.begin[0] = 2, sa.begin[1] = 1, sa.begin[2] = 0, sa.begin[3] = 1;
  r.run(a.shape() + " -> [4,3,3,1] at 2,1,0,1", "Slice", {a}, {empty_like(AXON_FLOAT32, {4, 3, 3, 1})}, &sa, kExact);
  r.run(a.shape() + " -> [10,7,3,4] at 2,1,0,1", "Pad", {a}, {empty_like(AXON_FLOAT32, {10, 7, 3, 4})}, &sa, kExact);
}

// ABI 1.4: AvgPool (TensorFlow's SAME counts only the taps inside x) and its gradient.
void avg_pool_cases(Runner& r, std::mt19937& rng) {
  struct Case {
    std::vector<int64_t> x;
    int window, stride;
    axon_padding pad;
  };
  const std::vector<Case> cases = {{{64, 26, 26, 32}, 2, 2, AXON_PADDING_VALID},
                                   {{1, 7, 9, 3}, 3, 2, AXON_PADDING_SAME},
                                   {{2, 8, 8, 4}, 3, 1, AXON_PADDING_SAME},
                                   {{3, 7, 7, 5}, 7, 1, AXON_PADDING_VALID}};  // global average
  for (const auto& c : cases) {
    axon_pool_attrs a{};
    a.struct_size = sizeof a;
    a.window_h = a.window_w = c.window;
    a.stride_h = a.stride_w = c.stride;
    a.padding = c.pad;
    const std::vector<int64_t> ys = {c.x[0], out_size(c.x[1], c.window, c.stride, 1, c.pad),
                                     out_size(c.x[2], c.window, c.stride, 1, c.pad), c.x[3]};
    const std::string label = HostTensor{AXON_FLOAT32, c.x}.shape() + " " + std::to_string(c.window) + "x" +
                              std::to_string(c.window) + " s" + std::to_string(c.stride) +
                              (c.pad == AXON_PADDING_SAME ? " SAME" : " VALID");
    r.run(label, "AvgPool", {uniform(rng, c.x)}, {empty_like(AXON_FLOAT32, ys)}, &a, kSum);
    r.run(label, "AvgPoolGrad", {uniform(rng, ys)}, {empty_like(AXON_FLOAT32, c.x)}, &a, kSum);
  }
}

// ABI 1.4: FusedBatchNormV3 in training (exponential_avg_factor 1 and 0.3)
// and inference, and its gradient in both modes; ABI 1.5: the same with relu
// (_FusedBatchNormEx, and _FusedBatchNormGradEx with a y of both signs); ABI
// 2.1: with a side input too, with relu and without an activation
// (_FusedBatchNormAddEx, _FusedBatchNormAddGradEx and its side_input_backprop).
void batch_norm_cases(Runner& r, std::mt19937& rng) {
  for (const std::vector<int64_t>& s : {std::vector<int64_t>{64, 13, 13, 32}, std::vector<int64_t>{2, 3, 4, 5},
                                        std::vector<int64_t>{8, 5}, std::vector<int64_t>{1, 1, 1, 6}}) {
    const int64_t ch = s.back();
    // The side inputs from a generator of their own: the other cases keep their inputs.
    std::mt19937 side_rng(static_cast<unsigned>(20261130 + s.size() * 1000 + ch));
    const HostTensor side = uniform(side_rng, s, -2.f, 2.f), side_y = uniform(side_rng, s);
    HostTensor x = uniform(rng, s, -2.f, 5.f), dy = uniform(rng, s), scale = uniform(rng, {ch}, 0.5f, 2.f),
               offset = uniform(rng, {ch}), mean = uniform(rng, {ch}, 0.f, 3.f), var = uniform(rng, {ch}, 0.5f, 3.f);
    const std::vector<HostTensor> stats_out = {empty_like(AXON_FLOAT32, s), empty_like(AXON_FLOAT32, {ch}),
                                               empty_like(AXON_FLOAT32, {ch}), empty_like(AXON_FLOAT32, {ch}),
                                               empty_like(AXON_FLOAT32, {ch})};
    for (auto [training, factor] : {std::pair{1, 1.f}, std::pair{1, 0.3f}, std::pair{0, 1.f}}) {
      axon_batch_norm_attrs a{};
      a.struct_size = sizeof a;
      a.epsilon = 0.001f;
      a.exponential_avg_factor = factor;
      a.is_training = training;
      const std::string label =
          x.shape() + (training ? " training, factor " + std::to_string(factor).substr(0, 3) : " inference");
      r.run(label, "FusedBatchNormV3", {x, scale, offset, mean, var}, stats_out, &a, {1e-5, 1e-5});
      const axon_fused_batch_norm_attrs fa{sizeof(axon_fused_batch_norm_attrs), a, AXON_ACTIVATION_RELU};
      r.run(label, "_FusedBatchNormEx", {x, scale, offset, mean, var}, stats_out, &fa, {1e-5, 1e-5});
      const axon_fused_batch_norm_attrs plain{sizeof(axon_fused_batch_norm_attrs), a, AXON_ACTIVATION_NONE};
      r.run(label + " relu", "_FusedBatchNormAddEx", {x, scale, offset, mean, var, side}, stats_out, &fa,
            {1e-5, 1e-5});
      r.run(label + " none", "_FusedBatchNormAddEx", {x, scale, offset, mean, var, side}, stats_out, &plain,
            {1e-5, 1e-5});
      if (factor == 1.f) {
        const std::vector<HostTensor> grad_out = {empty_like(AXON_FLOAT32, s), empty_like(AXON_FLOAT32, {ch}),
                                                  empty_like(AXON_FLOAT32, {ch})};
        r.run(label, "FusedBatchNormGradV3", {dy, x, scale, mean, var}, grad_out, &a, {1e-5, 1e-5});
        r.run(label, "_FusedBatchNormGradEx", {dy, x, scale, mean, var, uniform(rng, s)}, grad_out, &fa,
              {1e-5, 1e-5});
        std::vector<HostTensor> add_grad_out = grad_out;
        add_grad_out.push_back(empty_like(AXON_FLOAT32, s));  // side_input_backprop
        r.run(label + " relu", "_FusedBatchNormAddGradEx", {dy, x, scale, mean, var, side_y}, add_grad_out, &fa,
              {1e-5, 1e-5});
        r.run(label + " none", "_FusedBatchNormAddGradEx", {dy, x, scale, mean, var, side_y}, add_grad_out, &plain,
              {1e-5, 1e-5});
      }
    }
  }
}

// ABI 1.4: depthwise convolutions (filter [KH, KW, C, M], y channels C * M).
void depthwise_cases(Runner& r, std::mt19937& rng) {
  struct Case {
    std::vector<int64_t> x, f;
    int stride, dil;
    axon_padding pad;
  };
  const std::vector<Case> cases = {
      {{8, 28, 28, 32}, {3, 3, 32, 1}, 1, 1, AXON_PADDING_SAME},  // MobileNet's shape
      {{8, 28, 28, 32}, {3, 3, 32, 1}, 2, 1, AXON_PADDING_SAME},
      {{2, 9, 8, 3}, {3, 3, 3, 2}, 1, 1, AXON_PADDING_SAME},      // channel multiplier 2
      {{1, 7, 9, 4}, {3, 2, 4, 1}, 2, 1, AXON_PADDING_SAME},      // asymmetric SAME
      {{2, 10, 11, 3}, {3, 3, 3, 3}, 1, 2, AXON_PADDING_VALID},   // dilation 2
  };
  for (const auto& c : cases) {
    axon_conv2d_attrs a{};
    a.struct_size = sizeof a;
    a.stride_h = a.stride_w = c.stride;
    a.dilation_h = a.dilation_w = c.dil;
    a.padding = c.pad;
    const std::vector<int64_t> y = {c.x[0], out_size(c.x[1], c.f[0], c.stride, c.dil, c.pad),
                                    out_size(c.x[2], c.f[1], c.stride, c.dil, c.pad), c.f[2] * c.f[3]};
    const std::string label = conv_label(c.x, c.f, c.stride, c.dil, c.pad);
    HostTensor x = uniform(rng, c.x), f = uniform(rng, c.f), dy = uniform(rng, y);
    r.run(label, "DepthwiseConv2dNative", {x, f}, {empty_like(AXON_FLOAT32, y)}, &a, kSum);
    r.run(label, "DepthwiseConv2dNativeBackpropInput", {dy, f}, {empty_like(AXON_FLOAT32, c.x)}, &a, kSum);
    r.run(label, "DepthwiseConv2dNativeBackpropFilter", {x, dy}, {empty_like(AXON_FLOAT32, c.f)}, &a, kSum);
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

// The optimizers of ABI 1.6 (ClipGradients, with its int64 input, is checked
// by the goldens, optimizers.axg): updates in place, against the reference's
// double arithmetic within a few roundings of the larger of the value and
// its change.
void optimizer_cases(Runner& r, std::mt19937& rng) {
  const std::vector<int64_t> s = {1600, 10};
  const Tol tol{1e-6, 1e-5};
  for (int variant = 0; variant < 2; ++variant) {
    const std::string label = std::string(variant ? "options " : "defaults ") + "[1600,10]";
    HostTensor var = uniform(rng, s), g = uniform(rng, s), state = uniform(rng, s, -0.1f, 0.1f),
               squares = uniform(rng, s, 0.001f, 0.01f), avg = uniform(rng, s, -0.01f, 0.01f);
    const axon_sgd_attrs sgd{sizeof(axon_sgd_attrs), 0.01f, variant ? 0.9f : 0.0f, variant};
    r.run(label, "ApplySGD", {var, state, g}, {}, &sgd, tol, 2);
    const axon_rmsprop_attrs rms{sizeof(axon_rmsprop_attrs), 0.001f, 0.9f, variant ? 0.5f : 0.0f, 1e-7f, variant};
    r.run(label, "ApplyRMSprop", {var, squares, state, avg, g}, {}, &rms, tol, 4);
    const axon_adam_attrs adam{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, variant ? 7 : 1};
    r.run(label, "ApplyAdamWithAmsgrad", {var, state, squares, squares, g}, {}, &adam, tol, 4);
    const axon_adagrad_attrs adagrad{sizeof(axon_adagrad_attrs), 0.01f, 1e-7f};
    r.run(label, "ApplyAdagrad", {var, squares, g}, {}, &adagrad, tol, 2);
    const axon_nadam_attrs nadam{sizeof(axon_nadam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, variant ? 7 : 1,
                                 variant ? 0.2f : 0.45f};
    r.run(label, "ApplyNadam", {var, state, squares, g}, {}, &nadam, tol, 3);
    const axon_weight_decay_attrs wd{sizeof(axon_weight_decay_attrs), 0.01f, variant ? 0.5f : 0.004f};
    r.run(label, "ApplyWeightDecay", {var}, {}, &wd, tol, 1);
  }
}

// The losses of ABI 1.7 with each setting, against the reference's double
// arithmetic within a few roundings of the loss and gradient (Tol: atol and
// rtol on their typical size, 1 over 10 classes); BinaryAccuracy exactly.
void keras_loss_cases(Runner& r, std::mt19937& rng) {
  const Tol tol{1e-5, 1e-5};
  for (auto [n, c] : std::initializer_list<std::pair<int64_t, int>>{{64, 10}, {5, 3}}) {
    const HostTensor logits = uniform(rng, {n, c}, -4.f, 4.f), probabilities = uniform(rng, {n, c}, 0.05f, 1.f),
                     lab = labels(rng, n, c);
    const std::vector<HostTensor> out = {empty_like(AXON_FLOAT32, {n}), empty_like(AXON_FLOAT32, {n, c})};
    for (int from_logits : {1, 0})
      for (float smoothing : {0.0f, 0.1f}) {
        const axon_crossentropy_attrs a{sizeof(axon_crossentropy_attrs), from_logits, smoothing};
        r.run(logits.shape() + (from_logits ? " logits" : " probabilities") + (smoothing > 0 ? " smoothing" : ""),
              "CategoricalCrossentropy", {from_logits ? logits : probabilities, lab}, out, &a, tol);
      }
    for (int kind : {AXON_LOSS_MEAN_SQUARED_ERROR, AXON_LOSS_MEAN_ABSOLUTE_ERROR, AXON_LOSS_HUBER}) {
      const axon_regression_loss_attrs a{sizeof(axon_regression_loss_attrs), static_cast<axon_regression_loss>(kind),
                                         0.5f};
      r.run(logits.shape() + " loss " + std::to_string(kind), "RegressionLoss", {logits, lab}, out, &a, tol);
    }
  }
  const int64_t n = 64;
  const HostTensor logits = uniform(rng, {n, 1}, -4.f, 4.f), probabilities = uniform(rng, {n, 1}, -0.1f, 1.1f),
                   lab = labels(rng, n, 2);
  const std::vector<HostTensor> out = {empty_like(AXON_FLOAT32, {n}), empty_like(AXON_FLOAT32, {n, 1})};
  for (int from_logits : {1, 0})
    for (float smoothing : {0.0f, 0.2f}) {
      const axon_crossentropy_attrs a{sizeof(axon_crossentropy_attrs), from_logits, smoothing};
      r.run(logits.shape() + (from_logits ? " logits" : " probabilities") + (smoothing > 0 ? " smoothing" : ""),
            "BinaryCrossentropy", {from_logits ? logits : probabilities, lab}, out, &a, tol);
    }
  const axon_regression_loss_attrs mse{sizeof(axon_regression_loss_attrs), AXON_LOSS_MEAN_SQUARED_ERROR, 1.0f};
  r.run(logits.shape() + " on the label", "RegressionLoss", {logits, labels(rng, n, 10)}, out, &mse, tol);
  const axon_binary_accuracy_attrs acc{sizeof(axon_binary_accuracy_attrs), 0.5f};
  r.run(probabilities.shape(), "BinaryAccuracy", {probabilities, lab}, {empty_like(AXON_FLOAT32, {n})}, &acc, kExact);
}

// ABI 1.9's random ops: TensorFlow's first values for seed (1, 2) (the head
// of tests/api/goldens/stateless_*.txt: uniforms exactly, normals within 2
// ulps, the GPU's logf and sincosf being double's rounded), then against the
// reference on sizes of many thread blocks, a partial last Philox block and
// a counter that carries. The reductions against the reference: sums and
// means within 64 u S + u |ref|, Max exactly, over no element TensorFlow's
// answers.
void random_reduce_cases(Runner& r, std::mt19937& rng) {
  const axon::philox::KeyCounter kc = axon::philox::stateless_key_counter(1, 2);
  auto attrs = [](const axon::philox::KeyCounter& k, float scale, float offset) {
    return axon_random_attrs{sizeof(axon_random_attrs), {k.key.w[0], k.key.w[1]},
                             {k.counter.w[0], k.counter.w[1], k.counter.w[2], k.counter.w[3]}, scale, offset};
  };
  auto floats_of = [](std::initializer_list<uint32_t> bits) {
    std::vector<float> v;
    for (uint32_t b : bits) {
      float f;
      std::memcpy(&f, &b, 4);
      v.push_back(f);
    }
    return v;
  };
  const axon_random_attrs seed12 = attrs(kc, 1.0f, 0.0f);
  const std::vector<HostTensor> out7 = {empty_like(AXON_FLOAT32, {7})};
  expect_values(r, "[7] seed 1,2 (TensorFlow's)", "StatelessRandomUniformV2", {}, out7, &seed12,
                floats_of({0x3f581458, 0x3e44a788, 0x3f7f087c, 0x3e243c98, 0x3e8b424c, 0x3f263b8a, 0x3ddb05b0}));
  {
    const std::vector<float> want =
        floats_of({0x3f0b4acd, 0x3e545b81, 0x3d96a8e4, 0x3d3e3228, 0xbfa69a7f, 0xbf742ff1, 0x3f577b86});
    std::string detail;
    try {
      const HostTensor got = run_host(r.gpu, "StatelessRandomNormalV2", {}, out7, &seed12)[0];
      for (size_t k = 0; k < want.size() && detail.empty(); ++k)
        if (!(std::fabs(double(got.f[k]) - want[k]) <= 0x1p-22 * std::fabs(double(want[k]))))
          detail = " [element " + std::to_string(k) + ": " + std::to_string(got.f[k]) + ", want " +
                   std::to_string(want[k]) + "]";
    } catch (const std::exception& e) {
      detail = std::string(" ") + e.what();
    }
    std::printf("%s  %-24s %-44s TensorFlow's within 2 ulps%s\n", detail.empty() ? "PASS" : "FAIL",
                "StatelessRandomNormalV2", "[7] seed 1,2", detail.c_str());
    detail.empty() ? ++r.counts.pass : ++r.counts.fail;
  }
  const axon::philox::KeyCounter carry{{{0x12345678u, 0x9abcdef0u}}, {{0xFFFFF000u, 0xFFFFFFFFu, 7, 0}}};
  for (const auto& [dims, k, scale, offset] :
       std::initializer_list<std::tuple<std::vector<int64_t>, axon::philox::KeyCounter, float, float>>{
           {{3, 100003}, carry, 1.0f, 0.0f}, {{64, 28, 28, 1}, kc, 0.05f, 0.0f}, {{5}, kc, 3.0f, -2.0f},
           {{0, 3}, kc, 1.0f, 0.0f}}) {
    const axon_random_attrs a = attrs(k, scale, offset);
    std::vector<HostTensor> out = {empty_like(AXON_FLOAT32, dims)};
    const std::string label = out[0].shape() + " scale " + std::to_string(scale).substr(0, 4);
    r.run(label, "StatelessRandomUniformV2", {}, out, &a, kExact);
    // Against the reference's glibc logf and sinf/cosf, each within an ulp of
    // the GPU's correctly rounded ones: the radius times the sine, then the
    // scale, round three more times (2 ulps were too few on the H200).
    r.run(label, "StatelessRandomNormalV2", {}, out, &a, Tol{0, 0x1p-20});
  }
  struct Spec {
    std::vector<int64_t> x;
    std::vector<int32_t> axes;
    bool keep;
  };
  const std::vector<Spec> specs = {{{1000, 1000}, {0, 1}, false}, {{1000, 1000}, {0}, false},
                                   {{1000, 1000}, {1}, true},     {{64, 13, 13, 32}, {0, 1, 2}, false},
                                   {{3, 5, 7}, {-1, 0}, false},   {{2, 3, 4, 5}, {1, 3}, true},
                                   {{7}, {}, false},              {{0, 3}, {0}, false}};
  for (const Spec& s : specs) {
    axon_reduce_attrs a{sizeof(axon_reduce_attrs), static_cast<int32_t>(s.axes.size()), {}, s.keep ? 1 : 0};
    std::vector<int64_t> y;
    std::string axes;
    for (size_t i = 0; i < s.axes.size(); ++i) {
      a.axes[i] = s.axes[i];
      (axes += i ? "," : "") += std::to_string(s.axes[i]);
    }
    for (size_t d = 0; d < s.x.size(); ++d) {
      bool reduced = false;
      for (int32_t axis : s.axes) reduced = reduced || size_t(axis < 0 ? axis + int(s.x.size()) : axis) == d;
      if (!reduced || s.keep) y.push_back(reduced ? 1 : s.x[d]);
    }
    const HostTensor x = uniform(rng, s.x, -2.f, 2.f);
    const std::vector<HostTensor> out = {empty_like(AXON_FLOAT32, y)};
    const std::string label = x.shape() + " axes [" + axes + "]" + (s.keep ? " keep_dims" : "");
    if (s.x[0] == 0) {  // over no element: TensorFlow's 0, NaN and -inf (compare() takes no bound on NaN or inf)
      expect_values(r, label, "ReduceSum", {x}, out, &a, std::vector<float>(3, 0.0f));
      expect_values(r, label, "Mean", {x}, out, &a, std::vector<float>(3, NAN));
      expect_values(r, label, "Max", {x}, out, &a, std::vector<float>(3, -INFINITY));
      continue;
    }
    r.run(label, "ReduceSum", {x}, out, &a, kSum);
    r.run(label, "Mean", {x}, out, &a, kSum);
    r.run(label, "Max", {x}, out, &a, kExact);
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
    props.struct_size = sizeof props;
    axon_error err{};
    check(cuda.api.get_device_props(cuda.api.plugin_ctx, 0, &props, &err), err, "get_device_props");
    std::printf("GPU: %s, compute capability %d.%d, %.1f GiB, %s\n", props.name, props.compute_major,
                props.compute_minor, props.memory_total / 1073741824.0, props.description);
    TestDevice gpu(cuda, 0), ref(reference, 0);
    Runner r{gpu, ref, std::string(cuda.api.name) == "cuda", {}};
    std::mt19937 rng(20261130);
    conv_cases(r, rng);
    pool_cases(r, rng);
    matmul_cases(r, rng);
    elementwise_cases(r, rng);
    loss_cases(r, rng);
    nan_cases(r);
    adam_cases(r, rng);
    optimizer_cases(r, rng);
    keras_loss_cases(r, rng);
    activation_cases(r, rng);
    tensor_cases(r, rng);
    avg_pool_cases(r, rng);
    batch_norm_cases(r, rng);
    depthwise_cases(r, rng);
    random_reduce_cases(r, rng);
    std::printf("SUMMARY: %s: %d passed, %d failed, %d skipped\n", r.counts.fail ? "FAIL" : "PASS", r.counts.pass,
                r.counts.fail, r.counts.skip);
    return r.counts.fail ? 1 : 0;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}
