// ABI 1.9's random ops and reductions on the reference and CPU plugins. The
// stateless normals and uniforms against TensorFlow's (tests/api/goldens,
// from tools/tf-goldens/stateless_normal.py) bit for bit, and the CPU
// plugin's against the reference's bit for bit on sizes its threads split,
// with one thread and with three. The reductions against double-precision
// host arithmetic: sums and means within 16 u S + u |want| (axon/tolerance.hpp,
// S the sum of the magnitudes reduced into the element), Max exactly;
// TensorFlow's answers over no element (TensorFlow 2.21: sum 0, mean NaN,
// max -inf) and Max's NaN.
#include "kernel_test_util.hpp"
#include "stateless_goldens.hpp"

#include <axon/philox.hpp>

#include <cstring>
#include <limits>
#include <string_view>

using namespace axon::test;

namespace {

// tests/api/goldens/<file>, every case read.
std::vector<StatelessGolden> read_goldens(const std::string& file) {
  std::vector<StatelessGolden> cases = read_stateless_goldens(std::string(AXON_API_GOLDENS) + "/" + file);
  REQUIRE(!cases.empty());
  return cases;
}

axon_random_attrs seeded(int64_t s0, int64_t s1, float scale = 1.0f, float offset = 0.0f) {
  const axon::philox::KeyCounter kc = axon::philox::stateless_key_counter(s0, s1);
  return {sizeof(axon_random_attrs), {kc.key.w[0], kc.key.w[1]},
          {kc.counter.w[0], kc.counter.w[1], kc.counter.w[2], kc.counter.w[3]}, scale, offset};
}

std::vector<uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<uint32_t> b(v.size());
  if (!v.empty()) std::memcpy(b.data(), v.data(), 4 * v.size());
  return b;
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

std::vector<float> draw(TestDevice& dev, const char* op, const std::vector<int64_t>& shape, const axon_random_attrs& a) {
  return run_host(dev, op, {}, {shape}, &a)[0];
}

const std::pair<const char*, const char*> kRandomOps[] = {{"StatelessRandomNormalV2", "stateless_normal.txt"},
                                                          {"StatelessRandomUniformV2", "stateless_uniform.txt"}};

// ------------------------------------------------------------------ reductions on the host

struct Reduced {
  std::vector<int64_t> dims;         // y's
  std::vector<double> sum, abs_sum, max;
  std::vector<int64_t> count;        // elements reduced into each
};

Reduced host_reduce(const std::vector<int64_t>& x_dims, const std::vector<float>& x, const std::vector<int>& axes,
                    bool keep) {
  const int rank = static_cast<int>(x_dims.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int a : axes) reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  Reduced r;
  std::vector<int64_t> kept;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[size_t(d)]) kept.push_back(x_dims[size_t(d)]);
    if (!reduced[size_t(d)] || keep) r.dims.push_back(reduced[size_t(d)] ? 1 : x_dims[size_t(d)]);
  }
  const size_t outputs = numel(kept);
  r.sum.assign(outputs, 0.0);
  r.abs_sum.assign(outputs, 0.0);
  r.max.assign(outputs, -std::numeric_limits<double>::infinity());
  r.count.assign(outputs, 0);
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    size_t o = 0;
    for (int d = 0; d < rank; ++d)
      if (!reduced[size_t(d)]) o = o * static_cast<size_t>(x_dims[size_t(d)]) + static_cast<size_t>(index[size_t(d)]);
    r.sum[o] += x[i];
    r.abs_sum[o] += std::fabs(x[i]);
    if (std::isnan(x[i]) || std::isnan(r.max[o]))
      r.max[o] = NAN;
    else
      r.max[o] = std::max(r.max[o], double(x[i]));
    ++r.count[o];
    for (int d = rank - 1; d >= 0 && ++index[size_t(d)] == x_dims[size_t(d)]; --d) index[size_t(d)] = 0;
  }
  return r;
}

axon_reduce_attrs reduce_attrs(const std::vector<int>& axes, bool keep) {
  axon_reduce_attrs a{sizeof(axon_reduce_attrs), static_cast<int32_t>(axes.size()), {}, keep ? 1 : 0};
  for (size_t i = 0; i < axes.size(); ++i) a.axes[i] = axes[i];
  return a;
}

struct ReduceSpec {
  std::vector<int64_t> x;
  std::vector<int> axes;
  bool keep;
};

// Leading, middle, trailing, several and negative axes; size-1 axes; no axis
// and rank 0; the CNN's activations over all but channels and a 1000 x 1000
// matrix, whose outputs the CPU plugin cuts into chunks (fixed by the shape).
const std::vector<ReduceSpec> kReduceSpecs = {
    {{3, 5, 7}, {0}, false},         {{3, 5, 7}, {1}, true},         {{3, 5, 7}, {2}, false},
    {{3, 5, 7}, {0, 2}, false},      {{3, 5, 7}, {-1, -3}, true},    {{2, 3, 4, 5}, {1, 3}, false},
    {{1, 6, 1, 4}, {0, 2}, false},   {{1, 1, 5}, {0, 1}, true},      {{7}, {}, false},
    {{}, {}, false},                 {{7}, {0}, false},              {{64, 26, 26, 32}, {0, 1, 2}, false},
    {{1000, 1000}, {0, 1}, false},   {{1000, 1000}, {0}, false},     {{1000, 1000}, {1}, true},
    {{3, 40000}, {1}, false},        {{40000, 3}, {0}, false},
};

std::string spec_text(const ReduceSpec& s) {
  std::string t = shape_str(s.x) + " axes [";
  for (size_t i = 0; i < s.axes.size(); ++i) (t += i ? "," : "") += std::to_string(s.axes[i]);
  return t + "]" + (s.keep ? " keep_dims" : "");
}

// Each op's result on `dev` against the host, within the stated bound; returns the worst error / bound.
double check_reductions(TestDevice& dev, const ReduceSpec& s, const std::vector<float>& x) {
  const Reduced h = host_reduce(s.x, x, s.axes, s.keep);
  const axon_reduce_attrs a = reduce_attrs(s.axes, s.keep);
  const HostTensor in{s.x, x};
  double worst = 0;
  for (const char* op : {"ReduceSum", "Mean", "Max"}) {
    INFO(op << " " << spec_text(s));
    const std::vector<float> y = run_host(dev, op, {in}, {h.dims}, &a)[0];
    REQUIRE(y.size() == h.sum.size());
    size_t bad = 0;
    const std::string_view name = op;
    for (size_t o = 0; o < y.size(); ++o) {
      if (name == "Max") {  // exactly the largest element
        if (!(y[o] == static_cast<float>(h.max[o]))) ++bad;
        continue;
      }
      const double n = name == "Mean" ? static_cast<double>(h.count[o]) : 1.0;
      const double want = h.sum[o] / n, allowed = tol::sum_allowed(want, h.abs_sum[o] / n);
      const double err = std::fabs(double(y[o]) - want);
      if (!(err <= allowed)) ++bad;
      if (allowed > 0) worst = std::max(worst, err / allowed);
    }
    CHECK(bad == 0);
  }
  return worst;
}

}  // namespace

TEST_CASE("StatelessRandomNormalV2 and StatelessRandomUniformV2 equal TensorFlow's bit for bit", "[random][ref][cpu]") {
  for (const auto& [op, file] : kRandomOps) {
    const std::vector<StatelessGolden> goldens = read_goldens(file);
    REQUIRE(goldens.size() == 3);
    for (const StatelessGolden& g : goldens) {
      INFO(op << " " << shape_str(g.shape) << " seed " << g.seed[0] << "," << g.seed[1]);
      REQUIRE(g.bits.size() == numel(g.shape));
      // With a scale and offset: TensorFlow's rnd * scale + offset, each rounded to float.
      std::vector<uint32_t> scaled;
      for (uint32_t b : g.bits) scaled.push_back(bits_of({from_bits(b) * 3.0f + -2.0f})[0]);
      for (TestDevice* dev : {&ref(), &cpu()}) {
        CHECK(bits_of(draw(*dev, op, g.shape, seeded(g.seed[0], g.seed[1]))) == g.bits);
        CHECK(bits_of(draw(*dev, op, g.shape, seeded(g.seed[0], g.seed[1], 3.0f, -2.0f))) == scaled);
      }
    }
  }
}

TEST_CASE("the CPU plugin's random numbers are the reference's whatever its threads", "[random][cpu]") {
  // 300,009 elements: 75,003 Philox blocks (the CPU plugin splits them among
  // threads from 8,192 on), a partial last block; a counter whose low words
  // carry into the high ones within the tensor.
  const std::vector<int64_t> shape{3, 100003};
  const axon_random_attrs a{sizeof(axon_random_attrs), {0x12345678u, 0x9abcdef0u}, {0xFFFFF000u, 0xFFFFFFFFu, 7, 0},
                            1.0f, 0.0f};
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  for (const auto& [op, file] : kRandomOps) {
    INFO(op);
    const std::vector<uint32_t> want = bits_of(draw(ref(), op, shape, a));
    CHECK(bits_of(draw(one, op, shape, a)) == want);
    CHECK(bits_of(draw(three, op, shape, a)) == want);
    CHECK(draw(ref(), op, {0, 5}, a).empty());
  }
  // The carry: element 4 * 0x1000 sits in the block whose counter's word 2 is 8.
  const axon::philox::Block b =
      axon::philox::generate(axon::philox::Block{{0, 0, 8, 0}}, axon::philox::Key{{0x12345678u, 0x9abcdef0u}});
  CHECK(bits_of(draw(ref(), "StatelessRandomUniformV2", shape, a))[4 * 0x1000] ==
        bits_of({axon::philox::uint32_to_float(b.w[0])})[0]);
}

TEST_CASE("ReduceSum, Mean and Max against double-precision host arithmetic", "[reduce][ref][cpu]") {
  std::mt19937 rng(1909);
  double worst_ref = 0, worst_cpu = 0;
  for (const ReduceSpec& s : kReduceSpecs) {
    const std::vector<float> x = random_floats(rng, numel(s.x), -2.0f, 2.0f);
    worst_ref = std::max(worst_ref, check_reductions(ref(), s, x));
    worst_cpu = std::max(worst_cpu, check_reductions(cpu(), s, x));
  }
  WARN("worst error / bound: reference " << worst_ref << ", CPU " << worst_cpu);
}

TEST_CASE("the CPU plugin's reductions do not depend on its threads", "[reduce][cpu]") {
  std::mt19937 rng(1910);
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  for (const ReduceSpec& s : kReduceSpecs) {
    const HostTensor x{s.x, random_floats(rng, numel(s.x))};
    const axon_reduce_attrs a = reduce_attrs(s.axes, s.keep);
    const std::vector<int64_t> y = host_reduce(s.x, x.values, s.axes, s.keep).dims;
    for (const char* op : {"ReduceSum", "Mean", "Max"}) {
      INFO(op << " " << spec_text(s));
      CHECK(bits_of(run_host(one, op, {x}, {y}, &a)[0]) == bits_of(run_host(three, op, {x}, {y}, &a)[0]));
    }
  }
}

TEST_CASE("reductions over no element give TensorFlow's answers, and Max propagates NaN", "[reduce][ref][cpu]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (TestDevice* dev : {&ref(), &cpu()}) {
    // x [0, 3] over axis 0: three outputs, each over no element.
    const HostTensor empty{{0, 3}, {}};
    const axon_reduce_attrs axis0 = reduce_attrs({0}, false), axis1_keep = reduce_attrs({1}, true);
    CHECK(run_host(*dev, "ReduceSum", {empty}, {{3}}, &axis0)[0] == std::vector<float>{0, 0, 0});
    const std::vector<float> means = run_host(*dev, "Mean", {empty}, {{3}}, &axis0)[0];
    REQUIRE(means.size() == 3);
    for (float m : means) CHECK(std::isnan(m));
    CHECK(run_host(*dev, "Max", {empty}, {{3}}, &axis0)[0] == std::vector<float>{-inf, -inf, -inf});
    // x [3, 0] over axis 1 with keep_dims: y [3, 1]; over axis 0 of [0, 3] kept: nothing to write.
    CHECK(run_host(*dev, "Max", {HostTensor{{3, 0}, {}}}, {{3, 1}}, &axis1_keep)[0] ==
          std::vector<float>{-inf, -inf, -inf});
    CHECK(run_host(*dev, "ReduceSum", {empty}, {{0, 1}}, &axis1_keep)[0].empty());
    // NaN wins over any number, wherever it lies in the row; -inf rows stay -inf.
    const HostTensor x{{3, 4}, {1, NAN, 3, 2, NAN, 5, 6, 7, -inf, -inf, -inf, -inf}};
    const axon_reduce_attrs axis1 = reduce_attrs({1}, false);
    const std::vector<float> y = run_host(*dev, "Max", {x}, {{3}}, &axis1)[0];
    CHECK(std::isnan(y[0]));
    CHECK(std::isnan(y[1]));
    CHECK(y[2] == -inf);
  }
}
