// Every non-convolution op of the CPU plugin against the reference plugin.
// Tolerances, per op:
//  exact (bit-identical): MaxPool, MaxPoolGrad with non-overlapping windows,
//    Relu, ReluGrad, BiasAdd, Scale, Fill, Identity, NormalizeImage, InTopK,
//    _SparseCategoricalAccuracy
//  compare_sum (a float sum of products, tests/common/tolerance.hpp):
//    MatMul, AddN, MaxPoolGrad with overlapping windows
//  one float rounding of a double sum: BiasAddGrad, Sum:
//    |cpu - ref| <= 2^-23 |ref| + 1e-12 * S  (S = the op on |inputs|)
//  |cpu - ref| <= 1e-6 (1 + |ref|): SparseSoftmaxCrossEntropyWithLogits, ApplyAdam
#include "kernel_test_util.hpp"

#include <cstring>
#include <limits>

#include <algorithm>
#include <numeric>

using namespace axon::test;

namespace {

Comparison compare_double_sum(const std::vector<float>& got, const std::vector<float>& want, const std::vector<float>& s) {
  return compare(got, want, [&](size_t i) { return std::ldexp(1.0, -23) * std::fabs(want[i]) + 1e-12 * s[i] + 1e-30; });
}

int pick(std::mt19937& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// The CPU's MaxPoolGrad of (x, y, dy) against the reference's within
// compare_sum's bound (overlapping windows add in either order).
void check_max_pool_grad(const HostTensor& x, const HostTensor& y, const HostTensor& dy, const axon_pool_attrs& a) {
  auto want = run_host(ref(), "MaxPoolGrad", {x, y, dy}, {x.dims}, &a)[0];
  auto bound = run_host(ref(), "MaxPoolGrad", {x, y, HostTensor{dy.dims, abs_of(dy.values)}}, {x.dims}, &a)[0];
  auto r = compare_sum(run_host(cpu(), "MaxPoolGrad", {x, y, dy}, {x.dims}, &a)[0], want, bound);
  INFO(r.report);
  CHECK(r.ok);
}

}  // namespace

TEST_CASE("MaxPool and MaxPoolGrad match the reference", "[pool][cpu]") {
  std::mt19937 rng(11);
  int checked = 0;
  while (checked < 50) {
    const int64_t n = pick(rng, 1, 3), h = pick(rng, 1, 12), w = pick(rng, 1, 12), c = pick(rng, 1, 31);
    const int kh = pick(rng, 1, 3), kw = pick(rng, 1, 3), sh = pick(rng, 1, 3), sw = pick(rng, 1, 3);
    const axon_padding pad = pick(rng, 0, 1) ? AXON_PADDING_SAME : AXON_PADDING_VALID;
    if (pad == AXON_PADDING_VALID && (kh > h || kw > w)) continue;
    const int64_t oh = pad == AXON_PADDING_SAME ? (h + sh - 1) / sh : (h - kh) / sh + 1;
    const int64_t ow = pad == AXON_PADDING_SAME ? (w + sw - 1) / sw : (w - kw) / sw + 1;
    INFO("x [" << n << "," << h << "," << w << "," << c << "] window " << kh << "x" << kw << " stride " << sh << "," << sw
               << (pad ? " SAME" : " VALID"));
    axon_pool_attrs a{sizeof(axon_pool_attrs), kh, kw, sh, sw, pad};
    std::vector<int64_t> xd{n, h, w, c}, yd{n, oh, ow, c};
    HostTensor x{xd, random_floats(rng, numel(xd))};
    if (checked % 3 == 0)  // coarse values: ties inside windows, first maximum must win
      for (auto& v : x.values) v = std::round(v * 2.0f);
    auto y = run_host(ref(), "MaxPool", {x}, {yd}, &a)[0];
    auto got = run_host(cpu(), "MaxPool", {x}, {yd}, &a)[0];
    CHECK(compare_exact(got, y).ok);

    HostTensor yt{yd, y}, dy{yd, random_floats(rng, numel(yd))};
    if (sh >= kh && sw >= kw)
      CHECK(compare_exact(run_host(cpu(), "MaxPoolGrad", {x, yt, dy}, {xd}, &a)[0],
                          run_host(ref(), "MaxPoolGrad", {x, yt, dy}, {xd}, &a)[0])
                .ok);
    else
      check_max_pool_grad(x, yt, dy, a);
    ++checked;
  }
}

TEST_CASE("3x3 stride-1 max pooling matches the reference", "[pool][cpu]") {
  // The Inception branch's pooling: windows overlapping in both directions
  // (the CPU's sliding gradient), SAME and VALID, images down to 1 pixel,
  // channels in whole vectors, vectors and a tail, and a tail alone; coarse
  // values make ties inside windows.
  std::mt19937 rng(31);
  const std::vector<std::array<int64_t, 4>> shapes{{2, 9, 11, 16}, {1, 7, 6, 19}, {3, 5, 8, 3}, {1, 1, 1, 24},
                                                   {2, 2, 3, 32}, {1, 26, 26, 16}};
  for (const auto& [n, h, w, c] : shapes)
    for (axon_padding pad : {AXON_PADDING_SAME, AXON_PADDING_VALID})
      for (bool coarse : {false, true}) {
        if (pad == AXON_PADDING_VALID && (h < 3 || w < 3)) continue;
        const int64_t oh = pad == AXON_PADDING_SAME ? h : h - 2, ow = pad == AXON_PADDING_SAME ? w : w - 2;
        INFO("x [" << n << "," << h << "," << w << "," << c << "] " << (pad ? "SAME" : "VALID")
                   << (coarse ? ", coarse values" : ""));
        axon_pool_attrs a{sizeof(axon_pool_attrs), 3, 3, 1, 1, pad};
        std::vector<int64_t> xd{n, h, w, c}, yd{n, oh, ow, c};
        HostTensor x{xd, random_floats(rng, numel(xd))};
        if (coarse)
          for (auto& v : x.values) v = std::round(v * 2.0f);
        auto y = run_host(ref(), "MaxPool", {x}, {yd}, &a)[0];
        CHECK(compare_exact(run_host(cpu(), "MaxPool", {x}, {yd}, &a)[0], y).ok);
        check_max_pool_grad(x, HostTensor{yd, y}, HostTensor{yd, random_floats(rng, numel(yd))}, a);
      }
}

TEST_CASE("max pooling keeps the reference's first maximum bit for bit: NaN and signed zeros", "[pool][cpu]") {
  // Values from {-1, -0, +0, 1} and NaNs of distinct payloads: a window's
  // output is one of its taps, the first maximum in row-major order, NaN
  // only where the first tap is. The CPU folds overlapping windows row by
  // row; a NaN heading a row of taps sends it back to the scan.
  std::mt19937 rng(41);
  auto nan_with = [](uint32_t payload) {
    const uint32_t bits = 0x7fc00000u | (payload & 0x3fffffu);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  const std::vector<std::array<int, 4>> windows{{3, 3, 1, 1}, {2, 2, 1, 1}, {3, 2, 1, 1}, {3, 3, 2, 1}, {2, 2, 2, 2}};
  for (const auto& [kh, kw, sh, sw] : windows)
    for (axon_padding pad : {AXON_PADDING_SAME, AXON_PADDING_VALID})
      for (int nan_percent : {0, 2, 30}) {
        const int64_t n = 2, h = 9, w = 11, c = 19;
        const int64_t oh = pad == AXON_PADDING_SAME ? (h + sh - 1) / sh : (h - kh) / sh + 1;
        const int64_t ow = pad == AXON_PADDING_SAME ? (w + sw - 1) / sw : (w - kw) / sw + 1;
        INFO("window " << kh << "x" << kw << " stride " << sh << "," << sw << (pad ? " SAME" : " VALID") << ", "
                       << nan_percent << "% NaN");
        axon_pool_attrs a{sizeof(axon_pool_attrs), kh, kw, sh, sw, pad};
        std::vector<int64_t> xd{n, h, w, c}, yd{n, oh, ow, c};
        HostTensor x{xd, std::vector<float>(static_cast<size_t>(numel(xd)))};
        const float values[4] = {-1.0f, -0.0f, 0.0f, 1.0f};
        for (auto& v : x.values)
          v = int(rng() % 100) < nan_percent ? nan_with(static_cast<uint32_t>(rng())) : values[rng() % 4];
        auto want = run_host(ref(), "MaxPool", {x}, {yd}, &a)[0];
        auto got = run_host(cpu(), "MaxPool", {x}, {yd}, &a)[0];
        REQUIRE(got.size() == want.size());
        CHECK(std::memcmp(got.data(), want.data(), 4 * got.size()) == 0);
        // The gradient follows the same taps: any other choice moves a whole dy.
        check_max_pool_grad(x, HostTensor{yd, want}, HostTensor{yd, random_floats(rng, numel(yd))}, a);
      }
}

TEST_CASE("MatMul matches the reference with every transpose", "[matmul][cpu]") {
  std::mt19937 rng(21);
  const std::vector<std::array<int64_t, 3>> sizes{{1, 1, 1}, {64, 576, 64}, {64, 64, 10}, {3, 600, 5}, {17, 33, 9}, {1, 5, 1}, {129, 7, 65}, {16, 600, 300}};  // the last: C split in blocks of columns
  for (auto [m, k, n] : sizes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        INFO("m " << m << " k " << k << " n " << n << " ta " << ta << " tb " << tb);
        axon_matmul_attrs at{sizeof(axon_matmul_attrs), ta, tb};
        std::vector<int64_t> ad = ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
        std::vector<int64_t> bd = tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
        HostTensor a{ad, random_floats(rng, numel(ad))}, b{bd, random_floats(rng, numel(bd))};
        auto want = run_host(ref(), "MatMul", {a, b}, {{m, n}}, &at)[0];
        auto bound = run_host(ref(), "MatMul", {HostTensor{ad, abs_of(a.values)}, HostTensor{bd, abs_of(b.values)}}, {{m, n}}, &at)[0];
        auto got = run_host(cpu(), "MatMul", {a, b}, {{m, n}}, &at)[0];
        auto r = compare_sum(got, want, bound);
        INFO(r.report);
        CHECK(r.ok);
      }
}

TEST_CASE("elementwise ops match the reference exactly", "[elementwise][cpu]") {
  std::mt19937 rng(31);
  for (std::vector<int64_t> d : {std::vector<int64_t>{1, 1}, {7, 13}, {64, 26, 26, 32}, {3, 5, 5, 64}, {100003, 1}}) {
    INFO("shape " << shape_str(d));
    HostTensor x{d, random_floats(rng, numel(d))}, g{d, random_floats(rng, numel(d))};
    x.values[0] = 0.0f;  // the kink: relu(0) = 0 and no gradient through it
    CHECK(compare_exact(run_host(cpu(), "Relu", {x}, {d})[0], run_host(ref(), "Relu", {x}, {d})[0]).ok);
    CHECK(compare_exact(run_host(cpu(), "ReluGrad", {g, x}, {d})[0], run_host(ref(), "ReluGrad", {g, x}, {d})[0]).ok);
    HostTensor bias{{d.back()}, random_floats(rng, static_cast<size_t>(d.back()))};
    CHECK(compare_exact(run_host(cpu(), "BiasAdd", {x, bias}, {d})[0], run_host(ref(), "BiasAdd", {x, bias}, {d})[0]).ok);
    axon_scale_attrs sc{sizeof(axon_scale_attrs), -0.37f};
    CHECK(compare_exact(run_host(cpu(), "Scale", {x}, {d}, &sc)[0], run_host(ref(), "Scale", {x}, {d}, &sc)[0]).ok);
    axon_fill_attrs fa{sizeof(axon_fill_attrs), 2.5f};
    auto filled = run_host(cpu(), "Fill", {}, {d}, &fa)[0];
    CHECK(compare_exact(filled, run_host(ref(), "Fill", {}, {d}, &fa)[0]).ok);
    CHECK(filled.back() == 2.5f);
    CHECK(compare_exact(run_host(cpu(), "Identity", {x}, {d})[0], x.values).ok);

    std::vector<int64_t> bd{d.back()};
    auto want = run_host(ref(), "BiasAddGrad", {g}, {bd})[0];
    auto s = run_host(ref(), "BiasAddGrad", {HostTensor{d, abs_of(g.values)}}, {bd})[0];
    auto r = compare_double_sum(run_host(cpu(), "BiasAddGrad", {g}, {bd})[0], want, s);
    INFO("BiasAddGrad " << r.report);
    CHECK(r.ok);

    auto want_sum = run_host(ref(), "Sum", {g}, {{}})[0];
    auto s_sum = run_host(ref(), "Sum", {HostTensor{d, abs_of(g.values)}}, {{1}})[0];
    auto rs = compare_double_sum(run_host(cpu(), "Sum", {g}, {{1}})[0], want_sum, s_sum);
    INFO("Sum " << rs.report);
    CHECK(rs.ok);

    HostTensor x2{d, random_floats(rng, numel(d))};
    auto want_n = run_host(ref(), "AddN", {x, g, x2}, {d})[0];
    auto s_n = run_host(ref(), "AddN", {HostTensor{d, abs_of(x.values)}, HostTensor{d, abs_of(g.values)}, HostTensor{d, abs_of(x2.values)}}, {d})[0];
    auto rn = compare_sum(run_host(cpu(), "AddN", {x, g, x2}, {d})[0], want_n, s_n);
    INFO("AddN " << rn.report);
    CHECK(rn.ok);
  }
}

TEST_CASE("in-place BiasAdd and Scale work on the CPU plugin", "[elementwise][cpu]") {
  std::mt19937 rng(33);
  std::vector<float> xv = random_floats(rng, 6 * 4), bv = random_floats(rng, 4);
  DeviceTensor x(cpu(), AXON_FLOAT32, {6, 4}), b(cpu(), AXON_FLOAT32, {4});
  x.upload(xv);
  b.upload(bv);
  run_op(cpu(), "BiasAdd", {&x, &b}, {&x});
  axon_scale_attrs sc{sizeof(axon_scale_attrs), 2.0f};
  run_op(cpu(), "Scale", {&x}, {&x}, &sc);
  auto got = x.download<float>();
  for (size_t i = 0; i < xv.size(); ++i) CHECK(got[i] == 2.0f * (xv[i] + bv[i % 4]));
}

TEST_CASE("NormalizeImage divides by 255 exactly", "[elementwise][cpu]") {
  // Every byte value; 35 bytes leave a tail after the CPU's vectors.
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{3, 28, 28}, std::vector<int64_t>{1, 5, 7}}) {
    std::vector<uint8_t> img(static_cast<size_t>(dims[0] * dims[1] * dims[2]));
    for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<uint8_t>(i * 7 + 200);
    std::vector<float> out[2];
    TestDevice* devs[2] = {&cpu(), &ref()};
    for (int k = 0; k < 2; ++k) {
      DeviceTensor x(*devs[k], AXON_UINT8, dims), y(*devs[k], AXON_FLOAT32, dims);
      x.upload(img);
      run_op(*devs[k], "NormalizeImage", {&x}, {&y});
      out[k] = y.download<float>();
    }
    CHECK(compare_exact(out[0], out[1]).ok);
    CHECK(out[0][1] == 207.0f / 255.0f);
    CHECK(out[0].back() == float(img.back()) / 255.0f);
  }
}


TEST_CASE("SparseSoftmaxCrossEntropyWithLogits, InTopK and the accuracy op match the reference", "[loss][cpu]") {
  std::mt19937 rng(41);
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {64, 10}, {5, 3}, {7, 1000}, {3000, 12}}) {
    INFO("logits [" << n << "," << k << "]");
    auto logits = random_floats(rng, static_cast<size_t>(n * k), -20.0f, 20.0f);
    logits[0] = 80.0f;  // large logits: log-sum-exp must not overflow
    std::vector<int32_t> labels(static_cast<size_t>(n));
    for (auto& l : labels) l = pick(rng, 0, static_cast<int>(k - 1));
    auto want = run_labels(ref(), "SparseSoftmaxCrossEntropyWithLogits", logits, n, k, labels, 2);
    auto got = run_labels(cpu(), "SparseSoftmaxCrossEntropyWithLogits", logits, n, k, labels, 2);
    CHECK(compare_rel(got[0], want[0], 1e-6).ok);
    CHECK(compare_rel(got[1], want[1], 1e-6).ok);
    for (float v : got[0]) CHECK(std::isfinite(v));

    if (k > 1) {  // row 0: a tie for the maximum, the label on the higher index
      logits[1] = logits[0];
      labels[0] = 1;
    }
    if (n > 2 && k > 1) {  // row 1: an infinity beside the label's maximum
      logits[static_cast<size_t>(k)] = 1e4f;
      logits[static_cast<size_t>(k + 1)] = -INFINITY;
      labels[1] = 0;
    }
    labels.back() = static_cast<int32_t>(k);  // out of range: never correct
    for (const char* op : {"InTopK", "_SparseCategoricalAccuracy"}) {
      INFO(op);
      auto top_want = run_labels(ref(), op, logits, n, k, labels, 1)[0];
      auto top_got = run_labels(cpu(), op, logits, n, k, labels, 1)[0];
      CHECK(compare_exact(top_got, top_want).ok);
      CHECK(top_got.back() == 0.0f);
    }
    auto top = run_labels(cpu(), "InTopK", logits, n, k, labels, 1)[0];
    auto acc = run_labels(cpu(), "_SparseCategoricalAccuracy", logits, n, k, labels, 1)[0];
    if (k > 1) {
      CHECK(top[0] == 1.0f);  // InTopK: a tie counts
      CHECK(acc[0] == 0.0f);  // Keras: the tie goes to the lower index
    }
    if (n > 2 && k > 1) {
      CHECK(top[1] == 0.0f);  // InTopK: a non-finite logit in the row
      CHECK(acc[1] == 1.0f);
    }
  }
}

TEST_CASE("ApplyAdam matches the reference over several steps", "[adam][cpu]") {
  std::mt19937 rng(51);
  for (int64_t size : {1, 10, 18432, 100001}) {
    INFO("size " << size);
    auto var0 = random_floats(rng, static_cast<size_t>(size));
    std::vector<float> state[2][3];
    TestDevice* devs[2] = {&cpu(), &ref()};
    for (int d = 0; d < 2; ++d) {
      DeviceTensor var(*devs[d], AXON_FLOAT32, {size}), m(*devs[d], AXON_FLOAT32, {size}), v(*devs[d], AXON_FLOAT32, {size}),
          g(*devs[d], AXON_FLOAT32, {size});
      var.upload(var0);
      m.upload(std::vector<float>(static_cast<size_t>(size), 0.0f));
      v.upload(std::vector<float>(static_cast<size_t>(size), 0.0f));
      std::mt19937 grads(7);
      for (int64_t step = 1; step <= 3; ++step) {
        g.upload(random_floats(grads, static_cast<size_t>(size)));
        axon_adam_attrs a{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, step};
        run_op(*devs[d], "ApplyAdam", {&var, &m, &v, &g}, {}, &a);
      }
      state[d][0] = var.download<float>();
      state[d][1] = m.download<float>();
      state[d][2] = v.download<float>();
    }
    for (int s = 0; s < 3; ++s) {
      auto r = compare_rel(state[0][s], state[1][s], 1e-6);
      INFO("state " << s << ": " << r.report);
      CHECK(r.ok);
    }
    // Each Adam step moves a weight by at most about lr: three steps, at most 3 lr.
    const float moved = std::fabs(state[1][0][0] - var0[0]);
    CHECK(moved > 0.0f);
    CHECK(moved < 3.1e-3f);
  }
}

// The CPU plugin's ApplyAdam flushes denormals (a decaying moment of a weight
// whose gradient is zero would otherwise cost ~100 cycles per multiply for
// ~100 steps): a moment that decays into the denormal range becomes 0, the
// weight stays exactly where the reference puts it, and the calling thread's
// floating-point mode is left as it was.
TEST_CASE("ApplyAdam flushes a decaying moment to zero, weights unchanged, caller's FP mode kept", "[adam][cpu]") {
  const int64_t size = 40000;  // several chunks, so worker threads run too
  const float smallest_normal = std::numeric_limits<float>::min();
  std::vector<float> state[2][2];
  TestDevice* devs[2] = {&cpu(), &ref()};
  for (int d = 0; d < 2; ++d) {
    DeviceTensor var(*devs[d], AXON_FLOAT32, {size}), m(*devs[d], AXON_FLOAT32, {size}),
        v(*devs[d], AXON_FLOAT32, {size}), g(*devs[d], AXON_FLOAT32, {size});
    var.upload(std::vector<float>(static_cast<size_t>(size), 0.25f));
    // m just above the smallest normal: 0.9 m is a denormal. v normal and
    // g zero: the dead-unit case.
    m.upload(std::vector<float>(static_cast<size_t>(size), 1.05f * smallest_normal));
    v.upload(std::vector<float>(static_cast<size_t>(size), 1e-6f));
    g.upload(std::vector<float>(static_cast<size_t>(size), 0.0f));
#if defined(__x86_64__) && defined(__GNUC__)
    const unsigned before = __builtin_ia32_stmxcsr();
#endif
    axon_adam_attrs a{sizeof(axon_adam_attrs), 1e-3f, 0.9f, 0.999f, 1e-7f, 5};
    run_op(*devs[d], "ApplyAdam", {&var, &m, &v, &g}, {}, &a);
#if defined(__x86_64__) && defined(__GNUC__)
    const unsigned mode = ~0x3Fu;  // control bits: FTZ, DAZ, rounding, masks (not the sticky status flags)
    CHECK((__builtin_ia32_stmxcsr() & mode) == (before & mode));
#endif
    state[d][0] = var.download<float>();
    state[d][1] = m.download<float>();
  }
  REQUIRE(state[1][1][0] > 0.0f);  // the reference keeps the denormal...
  REQUIRE(state[1][1][0] < smallest_normal);
  for (int64_t i = 0; i < size; ++i) {
    INFO("element " << i);
    REQUIRE(state[0][1][static_cast<size_t>(i)] == 0.0f);                          // ...the CPU flushes it
    REQUIRE(state[0][0][static_cast<size_t>(i)] == state[1][0][static_cast<size_t>(i)]);  // the weight is the same
  }
}
