// The eager API: tensors, ops against host arithmetic, random numbers against
// TensorFlow's, device scopes, and the errors of bad use. Each TEST_CASE runs
// in its own process (the runtime starts once per process).
#include "api_fixture.hpp"
#include "stateless_goldens.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace axon;

namespace {

using GoldenCase = test::StatelessGolden;

// tests/api/goldens/stateless_normal.txt or stateless_uniform.txt, every case read.
std::vector<GoldenCase> read_goldens(const std::string& file = "stateless_normal.txt") {
  std::vector<GoldenCase> cases = test::read_stateless_goldens(AXON_API_GOLDENS "/" + file);
  REQUIRE(!cases.empty());
  return cases;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

TEST_CASE("stateless_normal equals tf.random.stateless_normal bit for bit", "[api][random]") {
  test::start_runtime();
  auto cpu = device("/CPU:0");  // TensorFlow's CPU numbers (a GPU's normals are within 2 ulps: cuda_kernels)
  const std::vector<GoldenCase> cases = read_goldens();
  REQUIRE(cases.size() == 3);
  for (const GoldenCase& c : cases) {
    INFO("shape " << shape_string(c.shape) << " seed " << c.seed[0] << "," << c.seed[1]);
    REQUIRE(static_cast<int64_t>(c.bits.size()) == numel(c.shape));
    const Tensor t = random::stateless_normal(c.shape, c.seed);
    CHECK(t.shape() == c.shape);
    CHECK(t.dtype() == AXON_FLOAT32);
    const std::vector<float> v = t.to_vector<float>();
    int differ = 0;
    for (size_t i = 0; i < v.size(); ++i) differ += bits_of(v[i]) != c.bits[i];
    CHECK(differ == 0);
    // mean and stddev: TensorFlow's rnd * stddev + mean, each rounded to float.
    const std::vector<float> scaled = random::stateless_normal(c.shape, c.seed, 2.0f, 3.0f).to_vector<float>();
    int scaled_differ = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const float s = v[i] * 3.0f;
      scaled_differ += bits_of(scaled[i]) != bits_of(s + 2.0f);
    }
    CHECK(scaled_differ == 0);
  }
  // Another seed draws other numbers; normal(seed) is stateless_normal({seed, 0}).
  CHECK(random::stateless_normal({4}, {1, 3}).to_vector<float>() != random::stateless_normal({4}, {1, 2}).to_vector<float>());
  CHECK(random::normal({5}, 0.0f, 1.0f, 42).to_vector<float>() ==
        random::stateless_normal({5}, {42, 0}).to_vector<float>());
}

TEST_CASE("stateless_uniform equals tf.random.stateless_uniform bit for bit", "[api][random]") {
  test::start_runtime();
  const std::vector<GoldenCase> cases = read_goldens("stateless_uniform.txt");
  REQUIRE(cases.size() == 3);
  for (const GoldenCase& c : cases) {
    INFO("shape " << shape_string(c.shape) << " seed " << c.seed[0] << "," << c.seed[1]);
    const std::vector<float> v = random::stateless_uniform(c.shape, c.seed).to_vector<float>();
    REQUIRE(v.size() == c.bits.size());
    // minval, maxval: TensorFlow's rnd * (maxval - minval) + minval, each rounded to float.
    const std::vector<float> scaled = random::stateless_uniform(c.shape, c.seed, -1.5f, 2.5f).to_vector<float>();
    int differ = 0, scaled_differ = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      differ += bits_of(v[i]) != c.bits[i];
      const float s = v[i] * 4.0f;
      scaled_differ += bits_of(scaled[i]) != bits_of(s + -1.5f);
    }
    CHECK(differ == 0);
    CHECK(scaled_differ == 0);
  }
}

TEST_CASE("reduce_mean and reduce_max over axes against host arithmetic", "[api][eager]") {
  test::start_runtime();
  // [2, 3, 4] of small integers: sums exact, a mean the double quotient rounded once.
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[static_cast<size_t>(i)] = static_cast<float>((i * 5) % 7 - 3);
  const Tensor x = constant(v, {2, 3, 4});
  auto at = [&](int a, int b, int c) { return v[static_cast<size_t>((a * 3 + b) * 4 + c)]; };
  std::vector<float> mean1, max02;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c)
      mean1.push_back(static_cast<float>((double{at(a, 0, c)} + at(a, 1, c) + at(a, 2, c)) / 3.0));
  for (int b = 0; b < 3; ++b) {
    float m = at(0, b, 0);
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 4; ++c) m = std::max(m, at(a, b, c));
    max02.push_back(m);
  }
  CHECK(math::reduce_mean(x, {1}).shape() == Shape{2, 4});
  CHECK(math::reduce_mean(x, {1}).to_vector<float>() == mean1);
  CHECK(math::reduce_mean(x, {-2}, true).shape() == Shape{2, 1, 4});
  CHECK(math::reduce_max(x, {0, 2}).to_vector<float>() == max02);
  CHECK(math::reduce_max(x, {2, 0}, true).shape() == Shape{1, 3, 1});
  double total = 0;
  for (float e : v) total += e;
  CHECK(math::reduce_mean(x).shape().empty());
  CHECK(math::reduce_mean(x).item<float>() == static_cast<float>(total / 24.0));
  CHECK(math::reduce_max(x).item<float>() == 3.0f);
  CHECK(math::reduce_max(x, {}).to_vector<float>() == v);
  // Over no element: TensorFlow's 0, NaN and -inf.
  const Tensor empty = zeros({0, 3});
  CHECK(math::reduce_sum(empty, {0}).to_vector<float>() == std::vector<float>{0, 0, 0});
  const std::vector<float> means = math::reduce_mean(empty, {0}).to_vector<float>();
  REQUIRE(means.size() == 3);
  for (float m : means) CHECK(std::isnan(m));
  CHECK(math::reduce_max(empty, {0}).to_vector<float>() == std::vector<float>(3, -INFINITY));
  CHECK(std::isnan(math::reduce_mean(empty).item<float>()));
  CHECK_THROWS_WITH(math::reduce_mean(x, {-4}), "reduce_mean: axis -4 is out of range for shape [2,3,4]");
  CHECK_THROWS_WITH(math::reduce_max(x, {0, 0}), "reduce_max: axis 0 is given twice");
}

TEST_CASE("the random and reduction ops run on the scope's device and show in the placement log",
          "[api][placement]") {
  test::start_runtime();
  debugging::set_log_device_placement(true);
  test::StderrCapture err;
  for (int i = 0; i < 2; ++i) {
    auto ref = device("/device:REF:0");
    const Tensor x = random::normal({4, 5}, 0.0f, 1.0f, 3);
    CHECK(x.device().name() == "/device:REF:0");
    CHECK(math::reduce_mean(x, {0}).device().name() == "/device:REF:0");
    CHECK(math::reduce_max(x, {1}).device().name() == "/device:REF:0");
  }
  CHECK(err.count_lines("Executing op StatelessRandomNormalV2 in device /device:REF:0") == 1);
  CHECK(err.count_lines("Executing op Mean in device /device:REF:0") == 1);
  CHECK(err.count_lines("Executing op Max in device /device:REF:0") == 1);
}

TEST_CASE("eager ops give the host's results", "[api][eager]") {
  test::start_runtime();
  auto cpu = device("/CPU:0");  // a GPU, where there is one, would be the default
  const Tensor a = constant({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = constant({1, 2, 3, 4, 5, 6}, {3, 2});
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.device().name() == "/device:CPU:0");
  // Small integers: every product and sum is exact in float32.
  CHECK(matmul(a, b).to_vector<float>() == std::vector<float>{22, 28, 49, 64});
  CHECK(matmul(a, a, false, true).to_vector<float>() == std::vector<float>{14, 32, 32, 77});
  const Tensor c = constant({-1, 0, 2, -3, 4, -5}, {2, 3});
  CHECK(add(a, c).to_vector<float>() == std::vector<float>{0, 2, 5, 1, 9, 1});
  CHECK(subtract(a, c).to_vector<float>() == std::vector<float>{2, 2, 1, 7, 1, 11});
  CHECK(multiply(a, c).to_vector<float>() == std::vector<float>{-1, 0, 6, -12, 20, -30});
  CHECK(maximum(a, c).to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(nn::relu(c).to_vector<float>() == std::vector<float>{0, 0, 2, 0, 4, 0});
  CHECK(math::reduce_sum(a).item<float>() == 21.0f);
  CHECK(math::reduce_sum(a).shape().empty());
  CHECK(zeros({3}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(fill({2}, 2.5f).to_vector<float>() == std::vector<float>{2.5f, 2.5f});
  CHECK(constant(std::vector<int32_t>{1, 2}, {2}).dtype() == AXON_INT32);
  CHECK(reshape(a, {3, 2}).to_vector<float>() == a.to_vector<float>());
  CHECK(to_string(matmul(a, b)) == "axon.Tensor(\n[[22 28]\n [49 64]], shape=(2, 2), dtype=float32, device=/device:CPU:0)");
  CHECK(to_string(constant({1, 2}, {2})) == "axon.Tensor([1 2], shape=(2,), dtype=float32, device=/device:CPU:0)");

  // softmax, sigmoid, tanh: against the host's double-precision formulas.
  const std::vector<float> logits{0.5f, -1.0f, 2.0f, 0.0f};
  const std::vector<float> sm = nn::softmax(constant(logits, {1, 4})).to_vector<float>();
  double z = 0;
  for (float l : logits) z += std::exp(double{l});
  for (size_t i = 0; i < logits.size(); ++i) CHECK(sm[i] == Approx(std::exp(double{logits[i]}) / z).epsilon(1e-6));
  const std::vector<float> sg = nn::sigmoid(constant(logits, {4})).to_vector<float>();
  const std::vector<float> th = nn::tanh(constant(logits, {4})).to_vector<float>();
  for (size_t i = 0; i < logits.size(); ++i) {
    CHECK(sg[i] == Approx(1.0 / (1.0 + std::exp(-double{logits[i]}))).epsilon(1e-6));
    CHECK(th[i] == Approx(std::tanh(double{logits[i]})).epsilon(1e-6));
  }

  // conv2d and max_pool2d on a 1x4x4x1 ramp with a 2x2x1x1 filter: exact small sums.
  std::vector<float> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<size_t>(i)] = static_cast<float>(i);
  const Tensor image = constant(ramp, {1, 4, 4, 1});
  const Tensor filter = constant({1, 0, 0, 1}, {2, 2, 1, 1});
  const Tensor conv = nn::conv2d(image, filter);
  CHECK(conv.shape() == Shape{1, 3, 3, 1});
  std::vector<float> want;
  for (int r = 0; r < 3; ++r)
    for (int col = 0; col < 3; ++col) want.push_back(ramp[size_t(r * 4 + col)] + ramp[size_t((r + 1) * 4 + col + 1)]);
  CHECK(conv.to_vector<float>() == want);
  CHECK(nn::conv2d(image, filter, {1, 1}, "SAME").shape() == Shape{1, 4, 4, 1});
  CHECK(nn::max_pool2d(image, {2, 2}, {2, 2}).to_vector<float>() == std::vector<float>{5, 7, 13, 15});
  CHECK(nn::bias_add(constant({1, 2, 3, 4}, {2, 2}), constant({10, 20}, {2})).to_vector<float>() ==
        std::vector<float>{11, 22, 13, 24});
}

TEST_CASE("reduce_sum over axes against host sums", "[api][eager]") {
  test::start_runtime();
  // [2, 3, 4] of small integers: every partial sum is exact in float32.
  std::vector<float> v(24);
  for (int i = 0; i < 24; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 7 - 3);
  const Tensor x = constant(v, {2, 3, 4});
  auto at = [&](int a, int b, int c) { return v[static_cast<size_t>((a * 3 + b) * 4 + c)]; };
  std::vector<float> s0, s1, s2, s01;
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < 4; ++c) s0.push_back(at(0, b, c) + at(1, b, c));
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c) s1.push_back(at(a, 0, c) + at(a, 1, c) + at(a, 2, c));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b) s2.push_back(at(a, b, 0) + at(a, b, 1) + at(a, b, 2) + at(a, b, 3));
  for (int c = 0; c < 4; ++c) s01.push_back(s1[size_t(c)] + s1[size_t(4 + c)]);
  CHECK(math::reduce_sum(x, {0}).shape() == Shape{3, 4});
  CHECK(math::reduce_sum(x, {0}).to_vector<float>() == s0);
  CHECK(math::reduce_sum(x, {1}).to_vector<float>() == s1);
  CHECK(math::reduce_sum(x, {-1}).to_vector<float>() == s2);
  CHECK(math::reduce_sum(x, {1, 0}).to_vector<float>() == s01);
  CHECK(math::reduce_sum(x, {1}, true).shape() == Shape{2, 1, 4});
  CHECK(math::reduce_sum(x, {0, 1, 2}).item<float>() == math::reduce_sum(x).item<float>());
  CHECK(math::reduce_sum(x, {0, 1, 2}, true).shape() == Shape{1, 1, 1});
  CHECK(math::reduce_sum(x, {}).to_vector<float>() == v);
  CHECK_THROWS_WITH(math::reduce_sum(x, {3}), "reduce_sum: axis 3 is out of range for shape [2,3,4]");
  CHECK_THROWS_WITH(math::reduce_sum(x, {1, -2}), "reduce_sum: axis -2 is given twice");
}

TEST_CASE("a shape mismatch in an eager op names both shapes", "[api][errors]") {
  test::start_runtime();
  const Tensor a = zeros({2, 3}), b = zeros({3, 2});
  CHECK_THROWS_WITH(add(a, b), "add: incompatible shapes: [2,3] vs. [3,2]");
  CHECK_THROWS_AS(multiply(a, b), UsageError);
  CHECK_THROWS_WITH(matmul(a, a), "matmul: incompatible shapes: [2,3] vs. [2,3] (inner dimensions 3 and 2)");
  CHECK_THROWS_WITH(nn::conv2d(zeros({1, 4, 4, 2}), zeros({2, 2, 3, 1})),
                    Catch::Contains("[1,4,4,2]") && Catch::Contains("[2,2,3,1]"));
  CHECK_THROWS_WITH(constant({1, 2, 3}, {2, 2}), "constant: 3 values do not fill shape [2,2] (4 elements)");
  CHECK_THROWS_WITH(a.item<float>(), "item() needs a tensor of one element, got shape [2,3]");
  CHECK_THROWS_WITH(nn::conv2d(zeros({1, 4, 4, 1}), zeros({2, 2, 1, 1}), {1, 1}, "FULL"),
                    "conv2d: padding must be \"VALID\" or \"SAME\", got \"FULL\"");
}

TEST_CASE("device scopes place ops, nest, and fall back softly", "[api][placement]") {
  test::start_runtime();
  {
    auto cpu = device("/CPU:0");
    CHECK(cpu.device_name() == "/device:CPU:0");
    {
      auto ref = device("/device:REF:0");
      CHECK(add(ones({2}), ones({2})).device().name() == "/device:REF:0");
    }
    CHECK(add(ones({2}), ones({2})).device().name() == "/device:CPU:0");
  }
  // A tensor made elsewhere is copied to the op's device for you.
  Tensor on_ref;
  {
    auto ref = device("ref:0");
    on_ref = constant({1, 2}, {2});
  }
  {
    auto cpu = device("/CPU:0");
    const Tensor sum = add(on_ref, constant({3, 4}, {2}));
    CHECK(sum.device().name() == "/device:CPU:0");
    CHECK(sum.to_vector<float>() == std::vector<float>{4, 6});
  }
  // The same seed on two devices: the same numbers, sums equal to rounding.
  float sums[2];
  const char* names[2] = {"/CPU:0", "/device:REF:0"};
  for (int i = 0; i < 2; ++i) {
    auto scope = device(names[i]);
    sums[i] = math::reduce_sum(random::normal({100, 100}, 0.0f, 1.0f, 7)).item<float>();
  }
  CHECK(sums[0] == Approx(sums[1]).margin(1e-3));
  // No GPU here: soft placement runs "/GPU:0" on the CPU with one warning.
  if (Runtime::get().count("GPU") == 0) {
    test::StderrCapture err;
    auto gpu = device("/GPU:0");
    CHECK(gpu.device_name() == "/device:CPU:0");
    CHECK_THAT(err.text(), Catch::Contains("device(\"/GPU:0\"): /device:GPU:0 is not available") &&
                               Catch::Contains("running on /device:CPU:0 instead (soft placement)"));
  }
}

TEST_CASE("a device name that does not exist throws", "[api][errors]") {
  test::start_runtime();
  CHECK_THROWS_WITH(device("/device:TPU:0"),
                    Catch::StartsWith("device(\"/device:TPU:0\"): /device:TPU:0 is not available (no plugin provides "
                                      "TPU devices); devices: /device:CPU:0"));
  CHECK_THROWS_AS(device("/GPU:zero"), UsageError);
  CHECK_THROWS_WITH(device("/device:GPUU:0"), Catch::Contains("no plugin provides GPUU devices"));
}

TEST_CASE("strict placement: an op the device lacks throws", "[api][errors][placement]") {
  // FAKE (test plugin, priority 300) has a Relu kernel and nothing else.
  Runtime::init(test::test_config({"placement"}));
  const Tensor x = constant({-1, 2}, {2});  // on FAKE, the default device
  CHECK(x.device().name() == "/device:FAKE:0");
  CHECK(nn::relu(x).device().name() == "/device:FAKE:0");
  {
    // Soft placement (the default): MatMul falls back to the CPU.
    auto fake = device("/device:FAKE:0");
    CHECK(matmul(constant({1, 2}, {1, 2}), constant({3, 4}, {2, 1})).to_vector<float>() == std::vector<float>{11});
  }
  config::set_soft_device_placement(false);
  CHECK_FALSE(config::get_soft_device_placement());
  auto fake = device("/device:FAKE:0");
  CHECK_THROWS_WITH(matmul(constant({1, 2}, {1, 2}), constant({3, 4}, {2, 1})),
                    Catch::StartsWith("op MatMul has no float32 kernel on /device:FAKE:0; devices with this kernel: ") &&
                        Catch::Contains("/device:CPU:0") && Catch::EndsWith("/device:REF:0"));
  CHECK_THROWS_AS(device("/GPU:0"), UsageError);  // no soft fallback either
}

TEST_CASE("a device without the random and reduction ops falls back softly, with a warning", "[api][placement]") {
  // FAKE (test plugin, priority 300) has a Relu kernel and nothing else.
  Runtime::init(test::test_config({"placement"}));
  test::StderrCapture err;
  auto fake = device("/device:FAKE:0");
  const Tensor x = random::normal({3, 4}, 0.0f, 1.0f, 5);
  CHECK(x.device().name() == "/device:CPU:0");
  CHECK(math::reduce_max(x, {1}).device().name() == "/device:CPU:0");
  CHECK(x.to_vector<float>() == random::stateless_normal({3, 4}, {5, 0}).to_vector<float>());
  CHECK_THAT(err.text(), Catch::Contains("op StatelessRandomNormalV2 has no kernel on /device:FAKE:0") &&
                             Catch::Contains("op Max has no kernel on /device:FAKE:0"));
}

TEST_CASE("the placement log prints each op once", "[api][placement]") {
  test::start_runtime();
  debugging::set_log_device_placement(true);
  test::StderrCapture err;
  auto cpu = device("/CPU:0");
  const Tensor a = constant({1, 2, 3, 4}, {2, 2});
  matmul(a, a);
  matmul(a, a);
  {
    auto ref = device("/device:REF:0");
    matmul(a, a);
  }
  CHECK(err.count_lines("Executing op MatMul in device /device:CPU:0") == 1);
  CHECK(err.count_lines("Executing op MatMul in device /device:REF:0") == 1);
}
