// The CPU plugin's elementwise kernels of ABI 1.4 and its loss give the same
// bits with AVX-512, AVX2 and the baseline instruction set (on a CPU without
// AVX-512 the first two copies are the same level): they fuse no
// multiply-add and share one polynomial per function
// (plugins/cpu/vec_math.hpp). The plugin picks its instruction set once per
// process, so each level gets its own copy of the plugin file, loaded with
// AXON_CPU_ISA set.
#include "kernel_test_util.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

using namespace axon::test;

namespace {

// AXON_CPU_ISA = value (unset for nullptr) while alive; the previous value (or none) after.
class IsaGuard {
 public:
  explicit IsaGuard(const char* value) {
    const char* old = std::getenv("AXON_CPU_ISA");
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value != nullptr)
      setenv("AXON_CPU_ISA", value, 1);
    else
      unsetenv("AXON_CPU_ISA");
  }
  ~IsaGuard() {
    if (had_)
      setenv("AXON_CPU_ISA", old_.c_str(), 1);
    else
      unsetenv("AXON_CPU_ISA");
  }

 private:
  bool had_ = false;
  std::string old_;
};

// A copy of the CPU plugin loaded with AXON_CPU_ISA = isa (nullptr: the
// best the CPU has), its device 0 (one thread), and the instruction set its
// description names.
struct IsaCopy {
  std::unique_ptr<LoadedPlugin> plugin;
  std::unique_ptr<TestDevice> dev;
  std::string simd;

  IsaCopy(const std::filesystem::path& dir, const char* isa) {
    const auto file = dir / (std::string("libaxon-plugin-cpu-") + (isa ? isa : "best") + ".so");
    std::filesystem::copy_file(AXON_CPU_PLUGIN_PATH, file, std::filesystem::copy_options::overwrite_existing);
    const IsaGuard guard(isa);
    plugin = std::make_unique<LoadedPlugin>(file.string());
    axon_device_props p{};
    p.struct_size = sizeof p;
    axon_error err{};
    REQUIRE(plugin->api.get_device_props(plugin->api.plugin_ctx, 0, &p, &err) == AXON_OK);  // fixes the level
    const std::string d = p.description;
    const size_t at = d.find("simd=");
    REQUIRE(at != std::string::npos);
    simd = d.substr(at + 5, d.find(',', at) - at - 5);
    dev = std::make_unique<TestDevice>(*plugin, 0, 1);
  }
};

struct Run {
  const char* op;
  std::vector<HostTensor> in;
  std::vector<std::vector<int64_t>> out;
  const void* attrs;
};

}  // namespace

TEST_CASE("the CPU plugin's elementwise kernels and loss give the same bits on every instruction set", "[isa][cpu]") {
  std::mt19937 rng(1410);
  // 1013 elements: a partial last vector at every width. Wide values and the edges of the polynomials' ranges.
  const std::vector<int64_t> d{1013};
  std::vector<float> x = random_floats(rng, numel(d), -20.0f, 20.0f);
  const std::vector<float> edges = {0.0f, -0.0f, 0.625f, -0.7f, 13.942385f, -13.942385f, 88.7f, -87.5f, -103.0f, 1e30f};
  for (size_t i = 0; i < edges.size(); ++i) x[i * 97] = edges[i];
  const HostTensor xt{d, x}, dy{d, random_floats(rng, numel(d), -2.0f, 2.0f)};
  const HostTensor unit{d, random_floats(rng, numel(d), 0.0f, 1.0f)}, sym{d, random_floats(rng, numel(d), -1.0f, 1.0f)};
  static const axon_gelu_attrs erf_form{sizeof(axon_gelu_attrs), 0}, tanh_form{sizeof(axon_gelu_attrs), 1};
  std::vector<Run> runs = {
      {"Sigmoid", {xt}, {d}, nullptr},         {"SigmoidGrad", {unit, dy}, {d}, nullptr},
      {"Tanh", {xt}, {d}, nullptr},            {"TanhGrad", {sym, dy}, {d}, nullptr},
      {"Elu", {xt}, {d}, nullptr},             {"EluGrad", {dy, sym}, {d}, nullptr},
      {"Selu", {xt}, {d}, nullptr},            {"SeluGrad", {dy, sym}, {d}, nullptr},
      {"Softplus", {xt}, {d}, nullptr},        {"SoftplusGrad", {dy, xt}, {d}, nullptr},
      {"Gelu", {xt}, {d}, &erf_form},          {"Gelu", {xt}, {d}, &tanh_form},
      {"GeluGrad", {dy, xt}, {d}, &erf_form},  {"GeluGrad", {dy, xt}, {d}, &tanh_form},
      {"Silu", {xt}, {d}, nullptr},            {"SiluGrad", {dy, xt}, {d}, nullptr},
      {"Sub", {xt, dy}, {d}, nullptr},         {"Mul", {xt, dy}, {d}, nullptr},
      {"Maximum", {xt, dy}, {d}, nullptr},     {"MaximumGrad", {dy, xt, sym}, {d, d}, nullptr},
  };
  // Softmax over rows of 1013 (a partial last vector) and of 3.
  const std::vector<int64_t> rows{6, 1013}, short_rows{2026, 3};
  std::vector<float> logits = random_floats(rng, numel(rows), -30.0f, 30.0f);
  logits[5] = -INFINITY;
  const HostTensor lt{rows, logits}, lt3{short_rows, logits}, dy6{rows, random_floats(rng, numel(rows))};
  const HostTensor y6{rows, run_host(ref(), "Softmax", {lt}, {rows})[0]};
  runs.push_back({"Softmax", {lt}, {rows}, nullptr});
  runs.push_back({"Softmax", {lt3}, {short_rows}, nullptr});
  runs.push_back({"SoftmaxGrad", {dy6, y6}, {rows}, nullptr});

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("axon-isa-bits-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::unique_ptr<IsaCopy>> copies;
  for (const char* isa : {static_cast<const char*>(nullptr), "avx2", "base"})
    copies.push_back(std::make_unique<IsaCopy>(dir, isa));
  std::filesystem::remove_all(dir);
  CHECK(copies.back()->simd == "base");
  for (const Run& r : runs) {
    const auto first = run_host(*copies[0]->dev, r.op, r.in, r.out, r.attrs);
    for (size_t k = 1; k < copies.size(); ++k) {
      INFO(r.op << ": " << copies[0]->simd << " against " << copies[k]->simd);
      const auto other = run_host(*copies[k]->dev, r.op, r.in, r.out, r.attrs);
      for (size_t o = 0; o < first.size(); ++o)
        CHECK(std::memcmp(first[o].data(), other[o].data(), 4 * first[o].size()) == 0);
    }
  }
  // The loss over 64 x 10 logits (whole vectors) and 2026 x 3 (blocks of rows, a partial last vector).
  std::vector<int32_t> labels(2026);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % 3);
  for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{64, 10}, {2026, 3}}) {
    const std::vector<float> l(logits.begin(), logits.begin() + n * k);
    const std::vector<int32_t> lb(labels.begin(), labels.begin() + n);
    const auto first = run_labels(*copies[0]->dev, "SparseSoftmaxCrossEntropyWithLogits", l, n, k, lb, 2);
    for (size_t c = 1; c < copies.size(); ++c) {
      INFO("SparseSoftmaxCrossEntropyWithLogits [" << n << "," << k << "]: " << copies[0]->simd << " against "
                                                   << copies[c]->simd);
      const auto other = run_labels(*copies[c]->dev, "SparseSoftmaxCrossEntropyWithLogits", l, n, k, lb, 2);
      for (size_t o = 0; o < first.size(); ++o)
        CHECK(std::memcmp(first[o].data(), other[o].data(), 4 * first[o].size()) == 0);
    }
  }
}
