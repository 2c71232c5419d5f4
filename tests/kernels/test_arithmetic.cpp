// Sub, Mul, Maximum, MaximumGrad and MovingAverage: one float operation per
// element (two products and their sum for MovingAverage), so the CPU plugin
// must equal the reference exactly, ties, signed zeros and NaN included.
#include "kernel_test_util.hpp"

#include <cstring>

using namespace axon::test;

namespace {

const std::vector<std::vector<int64_t>> kArithmeticShapes = {{}, {1}, {7}, {3, 5, 7}, {0, 4},
                                                             {64, 26, 26, 32}, {3, 33333}};

// Whole numbers in [-3, 3] every other element (ties between a and b), the rest uniform.
std::vector<float> tie_prone(std::mt19937& rng, size_t n) {
  std::vector<float> v = random_floats(rng, n, -3.0f, 3.0f);
  for (size_t i = 0; i < n; i += 2) v[i] = std::round(v[i]);
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
}

}  // namespace

TEST_CASE("Sub, Mul, Maximum and MaximumGrad equal the reference", "[arithmetic][cpu]") {
  std::mt19937 rng(1430);
  for (const auto& d : kArithmeticShapes) {
    INFO("shape " << shape_str(d));
    std::vector<float> av = tie_prone(rng, numel(d)), bv = tie_prone(rng, numel(d));
    if (av.size() > 8) {  // NaN on either side, signed zeros
      av[1] = NAN, bv[3] = NAN, av[5] = -0.0f, bv[5] = 0.0f, av[7] = 0.0f, bv[7] = -0.0f;
    }
    const HostTensor a{d, av}, b{d, bv}, dy{d, random_floats(rng, numel(d))};
    for (const char* op : {"Sub", "Mul", "Maximum"}) {
      INFO(op);
      CHECK(same_bits(run_host(cpu(), op, {a, b}, {d})[0], run_host(ref(), op, {a, b}, {d})[0]));
    }
    const auto want = run_host(ref(), "MaximumGrad", {dy, a, b}, {d, d});
    const auto got = run_host(cpu(), "MaximumGrad", {dy, a, b}, {d, d});
    CHECK(compare_exact(got[0], want[0]).ok);
    CHECK(compare_exact(got[1], want[1]).ok);
  }
}

TEST_CASE("Maximum and MaximumGrad follow TensorFlow on ties and NaN", "[arithmetic][ref][cpu]") {
  const std::vector<int64_t> d{5};
  const HostTensor a{d, {1.0f, 2.0f, 3.0f, NAN, 0.0f}}, b{d, {2.0f, 2.0f, NAN, 1.0f, -1.0f}};
  const HostTensor dy{d, {10.0f, 20.0f, 30.0f, 40.0f, 50.0f}};
  for (TestDevice* dev : {&cpu(), &ref()}) {
    const auto y = run_host(*dev, "Maximum", {a, b}, {d})[0];
    CHECK(y[0] == 2.0f);
    CHECK(y[1] == 2.0f);
    CHECK(std::isnan(y[2]));
    CHECK(std::isnan(y[3]));
    CHECK(y[4] == 0.0f);
    const auto g = run_host(*dev, "MaximumGrad", {dy, a, b}, {d, d});
    // a tie (element 1) sends the gradient to a; a comparison with NaN is false: to b
    CHECK(g[0] == std::vector<float>{0.0f, 20.0f, 0.0f, 0.0f, 50.0f});
    CHECK(g[1] == std::vector<float>{10.0f, 0.0f, 30.0f, 40.0f, 0.0f});
  }
}

TEST_CASE("MovingAverage equals Keras' v * momentum + x * (1 - momentum) in float32", "[arithmetic][cpu][ref]") {
  std::mt19937 rng(1431);
  for (const float momentum : {0.99f, 0.9f, 0.0f, 1.0f}) {
    const float weight = static_cast<float>(1.0 - double(momentum));
    for (const auto& d : kArithmeticShapes) {
      INFO("momentum " << momentum << " shape " << shape_str(d));
      const std::vector<float> v0 = random_floats(rng, numel(d), -5.0f, 5.0f);
      const std::vector<float> x = random_floats(rng, numel(d), -5.0f, 5.0f);
      // Keras' expression, each float operation rounded on its own.
      std::vector<float> want(v0.size());
      for (size_t i = 0; i < v0.size(); ++i) {
        volatile float kept = v0[i] * momentum, added = x[i] * weight;
        want[i] = kept + added;
      }
      const axon_moving_average_attrs attrs{sizeof(axon_moving_average_attrs), momentum, weight};
      for (TestDevice* dev : {&cpu(), &ref()}) {
        DeviceTensor var(*dev, AXON_FLOAT32, d), value(*dev, AXON_FLOAT32, d);
        var.upload(v0);
        value.upload(x);
        run_op(*dev, "MovingAverage", {&var, &value}, {}, &attrs);
        CHECK(same_bits(var.download<float>(), want));
      }
    }
  }
}

TEST_CASE("elementwise arithmetic does not depend on the CPU device's thread count", "[arithmetic][determinism][cpu]") {
  std::mt19937 rng(1432);
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  const std::vector<int64_t> d{3, 100003};
  const HostTensor a{d, tie_prone(rng, numel(d))}, b{d, tie_prone(rng, numel(d))}, dy{d, random_floats(rng, numel(d))};
  for (const char* op : {"Sub", "Mul", "Maximum"})
    CHECK(same_bits(run_host(three, op, {a, b}, {d})[0], run_host(one, op, {a, b}, {d})[0]));
  const auto g1 = run_host(one, "MaximumGrad", {dy, a, b}, {d, d});
  const auto g3 = run_host(three, "MaximumGrad", {dy, a, b}, {d, d});
  CHECK(same_bits(g1[0], g3[0]));
  CHECK(same_bits(g1[1], g3[1]));
}
