// What compare_sum can and cannot miss, at the CNN's own shapes and batch 64
// (tests/common/tolerance.hpp states the bound). The CPU plugin's results
// must pass; answers with a plausible bug planted in them must fail at
// nearly every element:
//  - the last image of the batch ignored (conv1's and conv2's filter
//    gradients, the first Dense layer's weight gradient);
//  - one filter tap missing (conv1 and conv2 forward);
//  - the bias left out (_FusedConv2D of conv2, _FusedMatMul of the first
//    Dense layer; biases of the size training gives them, 0.01 <= |b| <= 0.05).
// The bound it replaced (2 * terms * 2^-24 * S) caught "last image ignored"
// at 0 of conv1's 288 filter-gradient elements.
#include "kernel_test_util.hpp"

using namespace axon::test;

namespace {

using Dims = std::vector<int64_t>;

std::vector<float> uniform(std::mt19937& rng, const Dims& d, float lo, float hi) { return random_floats(rng, numel(d), lo, hi); }

// Share of elements where `wrong` is outside compare_sum's bound around `want`.
double caught(const std::vector<float>& wrong, const std::vector<float>& want, const std::vector<float>& abs_sum) {
  size_t n = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (std::fabs(double(wrong[i]) - want[i]) > tol::sum_allowed(want[i], abs_sum[i])) ++n;
  return double(n) / double(want.size());
}

HostTensor abs_tensor(const HostTensor& t) { return {t.dims, abs_of(t.values)}; }

// The batch's last image alone, as a batch of one.
HostTensor last_image(const HostTensor& t) {
  const size_t per = numel(t.dims) / static_cast<size_t>(t.dims[0]);
  Dims d = t.dims;
  d[0] = 1;
  return {d, std::vector<float>(t.values.end() - static_cast<std::ptrdiff_t>(per), t.values.end())};
}

std::vector<float> minus(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = a[i] - b[i];
  return r;
}

// A conv filter gradient at batch 64: the CPU passes, "last image ignored" fails.
void filter_gradient_case(const Dims& xd, const Dims& wd, std::mt19937& rng) {
  const axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  const Dims yd{xd[0], xd[1] - wd[0] + 1, xd[2] - wd[1] + 1, wd[3]};
  INFO("x " << shape_str(xd) << " filter " << shape_str(wd));
  // Activations are >= 0 (images, relu outputs); the gradient has both signs.
  HostTensor x{xd, uniform(rng, xd, 0.0f, 1.0f)}, dy{yd, uniform(rng, yd, -1.0f, 1.0f)};
  const auto want = run_host(ref(), "Conv2DBackpropFilter", {x, dy}, {wd}, &a)[0];
  const auto bound = run_host(ref(), "Conv2DBackpropFilter", {abs_tensor(x), abs_tensor(dy)}, {wd}, &a)[0];
  const auto got = run_host(cpu(), "Conv2DBackpropFilter", {x, dy}, {wd}, &a)[0];
  auto r = compare_sum(got, want, bound);
  INFO("CPU: " << r.report);
  CHECK(r.ok);
  const auto last = run_host(ref(), "Conv2DBackpropFilter", {last_image(x), last_image(dy)}, {wd}, &a)[0];
  CHECK(caught(minus(want, last), want, bound) >= 0.99);
}

}  // namespace

TEST_CASE("compare_sum at batch 64: the CPU passes, the last image ignored fails", "[tolerance][conv]") {
  std::mt19937 rng(64);
  filter_gradient_case({64, 28, 28, 1}, {3, 3, 1, 32}, rng);    // conv1: 43,264 terms per element
  filter_gradient_case({64, 13, 13, 32}, {3, 3, 32, 64}, rng);  // conv2: 7,744 terms per element
}

TEST_CASE("compare_sum at batch 64: a Dense weight gradient without the last sample fails", "[tolerance][matmul]") {
  std::mt19937 rng(65);
  const axon_matmul_attrs tn{sizeof(axon_matmul_attrs), 1, 0};  // dW = x^T dy
  HostTensor x{{64, 576}, uniform(rng, {64, 576}, 0.0f, 1.0f)}, dy{{64, 64}, uniform(rng, {64, 64}, -1.0f, 1.0f)};
  const auto want = run_host(ref(), "MatMul", {x, dy}, {{576, 64}}, &tn)[0];
  const auto bound = run_host(ref(), "MatMul", {abs_tensor(x), abs_tensor(dy)}, {{576, 64}}, &tn)[0];
  auto r = compare_sum(run_host(cpu(), "MatMul", {x, dy}, {{576, 64}}, &tn)[0], want, bound);
  INFO("CPU: " << r.report);
  CHECK(r.ok);
  const auto last = run_host(ref(), "MatMul", {last_image(x), last_image(dy)}, {{576, 64}}, &tn)[0];
  CHECK(caught(minus(want, last), want, bound) >= 0.99);
}

TEST_CASE("compare_sum: a convolution with one filter tap missing fails", "[tolerance][conv]") {
  std::mt19937 rng(66);
  const axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  for (const auto& [xd, wd] : {std::pair<Dims, Dims>{{4, 28, 28, 1}, {3, 3, 1, 32}}, {{4, 13, 13, 32}, {3, 3, 32, 64}}}) {
    INFO("x " << shape_str(xd) << " filter " << shape_str(wd));
    const Dims yd{xd[0], xd[1] - 2, xd[2] - 2, wd[3]};
    HostTensor x{xd, uniform(rng, xd, 0.0f, 1.0f)}, w{wd, uniform(rng, wd, -0.3f, 0.3f)};
    const auto want = run_host(ref(), "Conv2D", {x, w}, {yd}, &a)[0];
    const auto bound = run_host(ref(), "Conv2D", {abs_tensor(x), abs_tensor(w)}, {yd}, &a)[0];
    auto r = compare_sum(run_host(cpu(), "Conv2D", {x, w}, {yd}, &a)[0], want, bound);
    INFO("CPU: " << r.report);
    CHECK(r.ok);
    HostTensor holed = w;  // the centre tap (1,1) zeroed for every channel pair
    const size_t tap = static_cast<size_t>((1 * wd[1] + 1) * wd[2] * wd[3]);
    std::fill(holed.values.begin() + static_cast<std::ptrdiff_t>(tap),
              holed.values.begin() + static_cast<std::ptrdiff_t>(tap + static_cast<size_t>(wd[2] * wd[3])), 0.0f);
    CHECK(caught(run_host(ref(), "Conv2D", {x, holed}, {yd}, &a)[0], want, bound) >= 0.99);
  }
}

TEST_CASE("compare_sum: a fused op that leaves the bias out fails", "[tolerance][fused]") {
  std::mt19937 rng(67);
  const axon_fused_conv2d_attrs fc{sizeof(axon_fused_conv2d_attrs),
                                   {sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID}, AXON_ACTIVATION_NONE};
  const axon_fused_matmul_attrs fm{sizeof(axon_fused_matmul_attrs), {sizeof(axon_matmul_attrs), 0, 0},
                                   AXON_ACTIVATION_NONE};
  struct Case {
    const char* op;
    Dims a, b, out;
    const void* attrs;
  };
  for (const Case& c : {Case{"_FusedConv2D", {4, 13, 13, 32}, {3, 3, 32, 64}, {4, 11, 11, 64}, &fc},
                        Case{"_FusedMatMul", {64, 576}, {576, 64}, {64, 64}, &fm}}) {
    INFO(c.op);
    HostTensor a{c.a, uniform(rng, c.a, 0.0f, 1.0f)}, b{c.b, uniform(rng, c.b, -0.3f, 0.3f)};
    HostTensor bias{{64}, uniform(rng, {64}, 0.01f, 0.05f)}, no_bias{{64}, std::vector<float>(64, 0.0f)};
    for (size_t i = 0; i < bias.values.size(); i += 2) bias.values[i] = -bias.values[i];
    const auto want = run_host(ref(), c.op, {a, b, bias}, {c.out}, c.attrs)[0];
    const auto bound = run_host(ref(), c.op, {abs_tensor(a), abs_tensor(b), abs_tensor(bias)}, {c.out}, c.attrs)[0];
    auto r = compare_sum(run_host(cpu(), c.op, {a, b, bias}, {c.out}, c.attrs)[0], want, bound);
    INFO("CPU: " << r.report);
    CHECK(r.ok);
    CHECK(caught(run_host(ref(), c.op, {a, b, no_bias}, {c.out}, c.attrs)[0], want, bound) >= 0.99);
  }
}
