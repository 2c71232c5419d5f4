// The optional fused ops (ABI 1.1): _FusedConv2D, _FusedMatMul and
// _FusedReluGradBiasAddGrad.
//  - The reference plugin's fused ops equal its separate ops composed, bit
//    for bit (they are the oracle; they are built from those ops, so
//    tests/goldens checks both against TensorFlow's Conv2D + BiasAdd + Relu).
//  - The CPU plugin's fused ops match the reference within the tolerance of
//    the underlying product (compare_sum with |bias| in the bound; relu is
//    1-Lipschitz so it cannot widen a difference), and equal the CPU
//    plugin's own separate ops bit for bit (same products, same roundings),
//    so switching fusion on or off never changes a training run.
//  - Bad input is INVALID_ARGUMENT naming the op; results are identical run
//    to run and for any thread count.
#include "kernel_test_util.hpp"

#include <cstring>

using namespace axon::test;

namespace {

std::vector<float> relu_of(std::vector<float> v) {
  for (auto& x : v) x = x > 0.0f ? x : 0.0f;
  return v;
}

// The separate ops on `dev`: Conv2D, BiasAdd, then Relu if asked.
std::vector<float> conv_unfused(TestDevice& dev, const HostTensor& x, const HostTensor& w, const HostTensor& b,
                                const std::vector<int64_t>& yd, const axon_conv2d_attrs& a, int act) {
  auto z = run_host(dev, "Conv2D", {x, w}, {yd}, &a)[0];
  z = run_host(dev, "BiasAdd", {HostTensor{yd, z}, b}, {yd})[0];
  if (act == kRelu) z = run_host(dev, "Relu", {HostTensor{yd, z}}, {yd})[0];
  return z;
}

std::vector<float> matmul_unfused(TestDevice& dev, const HostTensor& a, const HostTensor& b, const HostTensor& bias,
                                  const std::vector<int64_t>& cd, const axon_matmul_attrs& at, int act) {
  auto z = run_host(dev, "MatMul", {a, b}, {cd}, &at)[0];
  z = run_host(dev, "BiasAdd", {HostTensor{cd, z}, bias}, {cd})[0];
  if (act == kRelu) z = run_host(dev, "Relu", {HostTensor{cd, z}}, {cd})[0];
  return z;
}

struct FusedConvCase {
  int64_t n, h, w, c, kh, kw, oc;
  int s;
  axon_padding pad;
  int act;
};

void check_conv(const FusedConvCase& k, std::mt19937& rng) {
  INFO("x [" << k.n << "," << k.h << "," << k.w << "," << k.c << "] filter " << k.kh << "x" << k.kw << "x" << k.oc
             << " stride " << k.s << (k.pad == AXON_PADDING_SAME ? " SAME" : " VALID") << " activation " << k.act);
  const int64_t oh = out_size(k.h, k.kh, k.s, 1, k.pad), ow = out_size(k.w, k.kw, k.s, 1, k.pad);
  REQUIRE(oh > 0);
  REQUIRE(ow > 0);
  const axon_conv2d_attrs ca{sizeof(axon_conv2d_attrs), k.s, k.s, 1, 1, k.pad};
  const axon_fused_conv2d_attrs fa{sizeof(axon_fused_conv2d_attrs), ca, k.act};
  const std::vector<int64_t> xd{k.n, k.h, k.w, k.c}, wd{k.kh, k.kw, k.c, k.oc}, yd{k.n, oh, ow, k.oc};
  HostTensor x{xd, random_floats(rng, numel(xd))}, w{wd, random_floats(rng, numel(wd))};
  HostTensor b{{k.oc}, random_floats(rng, static_cast<size_t>(k.oc))};

  auto want = run_host(ref(), "_FusedConv2D", {x, w, b}, {yd}, &fa)[0];
  CHECK(compare_exact(want, conv_unfused(ref(), x, w, b, yd, ca, k.act)).ok);

  auto got = run_host(cpu(), "_FusedConv2D", {x, w, b}, {yd}, &fa)[0];
  // Bound: the conv of |x|, |w| plus |bias|, over K + 1 terms.
  auto bound = run_host(ref(), "_FusedConv2D", {HostTensor{xd, abs_of(x.values)}, HostTensor{wd, abs_of(w.values)},
                                                HostTensor{b.dims, abs_of(b.values)}},
                        {yd}, &fa)[0];
  auto r = compare_sum(got, want, bound);
  INFO("_FusedConv2D vs reference: " << r.report);
  CHECK(r.ok);
  auto same = compare_exact(got, conv_unfused(cpu(), x, w, b, yd, ca, k.act));
  INFO("_FusedConv2D vs the CPU's separate ops: " << same.report);
  CHECK(same.ok);
}

}  // namespace

TEST_CASE("both plugins offer the fused ops", "[fused]") {
  for (TestDevice* dev : {&cpu(), &ref()})
    for (const char* op : {"_FusedConv2D", "_FusedMatMul", "_FusedReluGradBiasAddGrad"}) {
      INFO(op);
      CHECK(dev->has(op));
    }
}

TEST_CASE("_FusedConv2D: CPU matches the reference on random shapes", "[fused][conv][cpu]") {
  std::mt19937 rng(4321);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int checked = 0;
  while (checked < 40) {
    FusedConvCase k{};
    k.n = pick(1, 3), k.h = pick(1, 12), k.w = pick(1, 12), k.c = pick(1, 40);
    k.kh = pick(1, 4), k.kw = pick(1, 4), k.oc = pick(1, 70);
    k.s = pick(1, 2);
    k.pad = pick(0, 1) ? AXON_PADDING_SAME : AXON_PADDING_VALID;
    k.act = pick(0, 2) ? kRelu : kNone;
    if (k.pad == AXON_PADDING_VALID && (k.kh > k.h || k.kw > k.w)) continue;
    check_conv(k, rng);
    ++checked;
  }
}

TEST_CASE("_FusedConv2D: CPU matches the reference at the CNN's shapes", "[fused][conv][cpu]") {
  std::mt19937 rng(17);
  check_conv({4, 28, 28, 1, 3, 3, 32, 1, AXON_PADDING_VALID, kRelu}, rng);   // conv1 (gathered, K = 9)
  check_conv({3, 13, 13, 32, 3, 3, 64, 1, AXON_PADDING_VALID, kRelu}, rng);  // conv2 (gathered, K = 288)
  check_conv({2, 5, 5, 64, 3, 3, 64, 1, AXON_PADDING_VALID, kRelu}, rng);    // conv3
  check_conv({1, 13, 13, 32, 3, 3, 64, 2, AXON_PADDING_SAME, kRelu}, rng);   // padding: im2col + sgemm
  check_conv({1, 9, 9, 3, 3, 3, 5, 2, AXON_PADDING_SAME, kNone}, rng);       // padding: im2col + small K
  check_conv({2, 7, 9, 16, 1, 1, 24, 1, AXON_PADDING_VALID, kRelu}, rng);    // pointwise, small K
  check_conv({2, 6, 5, 48, 1, 1, 19, 1, AXON_PADDING_VALID, kRelu}, rng);    // pointwise, sgemm
  check_conv({1, 4, 4, 40, 4, 4, 2, 1, AXON_PADDING_VALID, kRelu}, rng);     // a 1x1 output, K = 640
  check_conv({2, 9, 10, 17, 3, 3, 20, 1, AXON_PADDING_SAME, kRelu}, rng);   // Winograd, bias and relu per tile
  check_conv({1, 9, 10, 16, 3, 3, 19, 1, AXON_PADDING_VALID, kNone}, rng);  // Winograd, bias only
}

TEST_CASE("_FusedMatMul: CPU matches the reference and its own separate ops", "[fused][matmul][cpu]") {
  std::mt19937 rng(29);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int i = 0; i < 30; ++i) {
    int64_t m = pick(1, 70), k = i == 0 ? 0 : pick(1, 600), n = pick(1, 70);
    if (i == 1) m = 16, k = 600, n = 300;  // a wide output: C in blocks of columns, each with its part of the bias
    const int ta = pick(0, 1), tb = pick(0, 1), act = pick(0, 1) ? kRelu : kNone;
    INFO("m " << m << " k " << k << " n " << n << " transpose " << ta << tb << " activation " << act);
    const axon_matmul_attrs at{sizeof(axon_matmul_attrs), ta, tb};
    const axon_fused_matmul_attrs fa{sizeof(axon_fused_matmul_attrs), at, act};
    const std::vector<int64_t> ad = ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
    const std::vector<int64_t> bd = tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    HostTensor a{ad, random_floats(rng, numel(ad))}, b{bd, random_floats(rng, numel(bd))};
    HostTensor bias{{n}, random_floats(rng, static_cast<size_t>(n))};
    auto want = run_host(ref(), "_FusedMatMul", {a, b, bias}, {{m, n}}, &fa)[0];
    CHECK(compare_exact(want, matmul_unfused(ref(), a, b, bias, {m, n}, at, act)).ok);
    auto bound = run_host(ref(), "_FusedMatMul", {HostTensor{ad, abs_of(a.values)}, HostTensor{bd, abs_of(b.values)},
                                                  HostTensor{bias.dims, abs_of(bias.values)}},
                          {{m, n}}, &fa)[0];
    auto got = run_host(cpu(), "_FusedMatMul", {a, b, bias}, {{m, n}}, &fa)[0];
    auto r = compare_sum(got, want, bound);
    INFO("vs reference: " << r.report);
    CHECK(r.ok);
    CHECK(compare_exact(got, matmul_unfused(cpu(), a, b, bias, {m, n}, at, act)).ok);
  }
}

TEST_CASE("_FusedReluGradBiasAddGrad equals ReluGrad then BiasAddGrad", "[fused][cpu]") {
  std::mt19937 rng(31);
  // Rank 2 and 4, channels below, at and above the 8-wide blocks (and the
  // half vectors of 4 and 12), one row, the CNN's conv1 gradient at batch 64
  // (several chunks, threads) and an Inception branch's 4 channels.
  const std::vector<std::vector<int64_t>> shapes{{1, 1},          {3, 7},           {5, 8},   {9, 17},
                                                 {2, 5, 3, 13},   {1, 11, 11, 64},  {64, 26, 26, 32},
                                                 {64, 64},        {2, 9, 9, 12},    {64, 26, 26, 4}};
  for (const auto& d : shapes) {
    INFO("dy " << shape_str(d));
    const int64_t ch = d.back();
    HostTensor dy{d, random_floats(rng, numel(d))};
    auto yv = random_floats(rng, numel(d));
    for (size_t i = 0; i < yv.size(); i += 7) yv[i] = 0.0f;  // exact zeros: relu's boundary
    HostTensor y{d, relu_of(yv)};
    for (TestDevice* dev : {&ref(), &cpu()}) {
      auto fused = run_host(*dev, "_FusedReluGradBiasAddGrad", {dy, y}, {d, {ch}});
      auto dx = run_host(*dev, "ReluGrad", {dy, y}, {d})[0];
      auto db = run_host(*dev, "BiasAddGrad", {HostTensor{d, dx}}, {{ch}})[0];
      CHECK(compare_exact(fused[0], dx).ok);
      CHECK(compare_exact(fused[1], db).ok);
    }
    // CPU vs reference: dx exactly (a select); dbias is a sum of N*H*W terms.
    auto want = run_host(ref(), "_FusedReluGradBiasAddGrad", {dy, y}, {d, {ch}});
    auto got = run_host(cpu(), "_FusedReluGradBiasAddGrad", {dy, y}, {d, {ch}});
    CHECK(compare_exact(got[0], want[0]).ok);
    auto bound = run_host(ref(), "BiasAddGrad", {HostTensor{d, abs_of(want[0])}}, {{ch}})[0];
    auto r = compare_sum(got[1], want[1], bound);
    INFO("dbias: " << r.report);
    CHECK(r.ok);
  }
}

TEST_CASE("fused ops are bit-identical run to run and for any thread count", "[fused][determinism][cpu]") {
  std::mt19937 rng(41);
  const axon_conv2d_attrs ca{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  const axon_fused_conv2d_attrs fa{sizeof(axon_fused_conv2d_attrs), ca, kRelu};
  const axon_fused_matmul_attrs fm{sizeof(axon_fused_matmul_attrs), {sizeof(axon_matmul_attrs), 0, 0}, kRelu};
  HostTensor x{{64, 13, 13, 32}, random_floats(rng, 64 * 13 * 13 * 32)}, w{{3, 3, 32, 64}, random_floats(rng, 3 * 3 * 32 * 64)};
  HostTensor b{{64}, random_floats(rng, 64)};
  HostTensor dy{{64, 11, 11, 64}, random_floats(rng, 64 * 11 * 11 * 64)};
  HostTensor y{{64, 11, 11, 64}, relu_of(random_floats(rng, 64 * 11 * 11 * 64))};
  HostTensor h{{64, 576}, random_floats(rng, 64 * 576)}, wd{{576, 64}, random_floats(rng, 576 * 64)};
  auto workload = [&](TestDevice& dev) {
    std::vector<std::vector<float>> r;
    r.push_back(run_host(dev, "_FusedConv2D", {x, w, b}, {{64, 11, 11, 64}}, &fa)[0]);
    r.push_back(run_host(dev, "_FusedMatMul", {h, wd, b}, {{64, 64}}, &fm)[0]);
    for (auto& o : run_host(dev, "_FusedReluGradBiasAddGrad", {dy, y}, {dy.dims, {64}})) r.push_back(o);
    return r;
  };
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  const auto first = workload(three);
  for (const auto& other : {workload(three), workload(one)})
    for (size_t i = 0; i < first.size(); ++i) {
      INFO("output " << i);
      CHECK(compare_exact(other[i], first[i]).ok);
    }
}

TEST_CASE("fused ops reject bad input with INVALID_ARGUMENT naming the op", "[fused][errors]") {
  constexpr axon_dtype F = AXON_FLOAT32;
  const axon_conv2d_attrs ca{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  const axon_fused_conv2d_attrs conv{sizeof(axon_fused_conv2d_attrs), ca, kRelu};
  const axon_fused_conv2d_attrs conv_act9{sizeof(axon_fused_conv2d_attrs), ca, 9};
  const axon_fused_conv2d_attrs conv_small{AXON_STRUCT_SIZE(axon_fused_conv2d_attrs, conv), ca, kRelu};
  const axon_fused_matmul_attrs mm{sizeof(axon_fused_matmul_attrs), {sizeof(axon_matmul_attrs), 0, 0}, kNone};
  const axon_fused_matmul_attrs mm_act9{sizeof(axon_fused_matmul_attrs), {sizeof(axon_matmul_attrs), 0, 0}, 9};
  struct Bad {
    const char* why;
    const char* op;
    std::vector<std::vector<int64_t>> in, out;
    const void* attrs;
    const char* expect;
  };
  const std::vector<Bad> bad{
      {"bias length", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}, {3}}, {{1, 3, 3, 2}}, &conv,
       "bias has shape [3], expected [2]"},
      {"bias rank 2", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}, {1, 2}}, {{1, 3, 3, 2}}, &conv,
       "bias has shape [1,2], expected [2]"},
      {"output shape", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}, {2}}, {{1, 3, 4, 2}}, &conv,
       "y has shape [1,3,4,2], expected [1,3,3,2]"},
      {"no bias", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}}, {{1, 3, 3, 2}}, &conv,
       "expected 3 inputs and 1 outputs, got 2 and 1"},
      {"attrs missing", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}, {2}}, {{1, 3, 3, 2}}, nullptr,
       "attributes missing (axon_fused_conv2d_attrs)"},
      {"attrs too small", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}, {2}}, {{1, 3, 3, 2}}, &conv_small,
       "attribute struct too small (axon_fused_conv2d_attrs"},
      {"unknown activation", "_FusedConv2D", {{1, 5, 5, 1}, {3, 3, 1, 2}, {2}}, {{1, 3, 3, 2}}, &conv_act9,
       "unknown activation 9"},
      {"bias length", "_FusedMatMul", {{2, 3}, {3, 5}, {4}}, {{2, 5}}, &mm, "bias has shape [4], expected [5]"},
      {"inner dims differ", "_FusedMatMul", {{2, 3}, {4, 5}, {5}}, {{2, 5}}, &mm,
       "inner dimensions differ: a [2,3], b [4,5]"},
      {"unknown activation", "_FusedMatMul", {{2, 3}, {3, 5}, {5}}, {{2, 5}}, &mm_act9, "unknown activation 9"},
      {"y shape differs", "_FusedReluGradBiasAddGrad", {{4, 3}, {4, 2}}, {{4, 3}, {3}}, nullptr,
       "y has shape [4,2], expected dy's [4,3]"},
      {"dbias length", "_FusedReluGradBiasAddGrad", {{4, 3}, {4, 3}}, {{4, 3}, {4}}, nullptr,
       "dbias has shape [4], expected [3]"},
      {"one output", "_FusedReluGradBiasAddGrad", {{4, 3}, {4, 3}}, {{4, 3}}, nullptr,
       "expected 2 inputs and 2 outputs, got 2 and 1"},
  };
  for (TestDevice* dev : {&cpu(), &ref()})
    for (const auto& b : bad) {
      INFO((dev == &cpu() ? "cpu " : "reference ") << b.op << ": " << b.why);
      std::vector<std::unique_ptr<DeviceTensor>> keep;
      std::vector<axon_tensor> in, out;
      for (auto& d : b.in) keep.push_back(std::make_unique<DeviceTensor>(*dev, F, d)), in.push_back(keep.back()->t);
      for (auto& d : b.out) keep.push_back(std::make_unique<DeviceTensor>(*dev, F, d)), out.push_back(keep.back()->t);
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
