// Determinism and logical devices: the same call gives bit-identical output
// run to run, with one thread or several, and on each of two logical CPU
// devices; the plugin splits threads among logical devices as configured.
#include "kernel_test_util.hpp"

#include <cstdlib>
#include <thread>

using namespace axon::test;

namespace {

// Sets AXON_TEST_<KEY> (the harness's config source) for one scope.
struct ConfigGuard {
  std::string name;
  ConfigGuard(const char* var, const char* value) : name(var) { setenv(var, value, 1); }
  ~ConfigGuard() { unsetenv(name.c_str()); }
};

// Runs conv2 of the CNN at batch 64 (forward and both backprops, separate and
// fused with its pool), a Dense layer's MatMuls, BiasAddGrad, Sum and a SAME
// convolution's input gradient on `dev`; returns all outputs.
std::vector<std::vector<float>> workload(TestDevice& dev) {
  std::mt19937 rng(5);
  axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_VALID};
  HostTensor x{{64, 13, 13, 32}, random_floats(rng, 64 * 13 * 13 * 32)};
  HostTensor w{{3, 3, 32, 64}, random_floats(rng, 3 * 3 * 32 * 64)};
  HostTensor dy{{64, 11, 11, 64}, random_floats(rng, 64 * 11 * 11 * 64)};
  HostTensor h{{64, 576}, random_floats(rng, 64 * 576)}, wd{{576, 64}, random_floats(rng, 576 * 64)};
  axon_matmul_attrs nn{sizeof(axon_matmul_attrs), 0, 0}, tn{sizeof(axon_matmul_attrs), 1, 0};
  std::vector<std::vector<float>> r;
  r.push_back(run_host(dev, "Conv2D", {x, w}, {{64, 11, 11, 64}}, &a)[0]);
  r.push_back(run_host(dev, "Conv2DBackpropInput", {dy, w}, {x.dims}, &a)[0]);
  r.push_back(run_host(dev, "Conv2DBackpropFilter", {x, dy}, {w.dims}, &a)[0]);
  r.push_back(run_host(dev, "MatMul", {h, wd}, {{64, 64}}, &nn)[0]);
  r.push_back(run_host(dev, "MatMul", {h, HostTensor{{64, 64}, random_floats(rng, 64 * 64)}}, {{576, 64}}, &tn)[0]);
  r.push_back(run_host(dev, "BiasAddGrad", {dy}, {{64}})[0]);
  r.push_back(run_host(dev, "Sum", {x}, {{1}})[0]);
  // conv2 with its pool as the fused pair, forward then backward with dx.
  const axon_pool_attrs pool{sizeof(axon_pool_attrs), 2, 2, 2, 2, AXON_PADDING_VALID};
  const axon_fused_conv2d_max_pool_attrs cp{sizeof(axon_fused_conv2d_max_pool_attrs), a, AXON_ACTIVATION_RELU, pool};
  const HostTensor bias{{64}, random_floats(rng, 64)};
  const std::vector<int64_t> yd{64, 5, 5, 64};
  auto fwd = run_host_mixed(dev, "_FusedConv2DMaxPool", {mixed(x), mixed(w), mixed(bias)},
                            {{AXON_FLOAT32, yd}, {AXON_UINT8, yd}}, &cp);
  r.push_back(fwd[0].values);
  r.push_back(std::vector<float>(fwd[1].bytes.begin(), fwd[1].bytes.end()));
  const HostTensor dpool{yd, random_floats(rng, 64 * 5 * 5 * 64)};
  auto bwd = run_host_mixed(dev, "_FusedConv2DMaxPoolGrad", {mixed(x), mixed(w), mixed(dpool), fwd[1]},
                            {{AXON_FLOAT32, w.dims}, {AXON_FLOAT32, {64}}, {AXON_FLOAT32, x.dims}}, &cp);
  for (const MixedTensor& t : bwd) r.push_back(t.values);
  // A SAME convolution's input gradient at the ResNet's 14x14x32 (Winograd,
  // as are conv2's forward and filter gradient).
  const axon_conv2d_attrs same{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_SAME};
  const HostTensor dys{{64, 14, 14, 32}, random_floats(rng, 64 * 14 * 14 * 32)};
  const HostTensor ws{{3, 3, 32, 32}, random_floats(rng, 3 * 3 * 32 * 32)};
  r.push_back(run_host(dev, "Conv2DBackpropInput", {dys, ws}, {{64, 14, 14, 32}}, &same)[0]);
  return r;
}

void check_identical(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("output " << i);
    CHECK(compare_exact(a[i], b[i]).ok);
  }
}

}  // namespace

TEST_CASE("a multi-threaded CPU device is bit-identical run to run", "[determinism][cpu]") {
  TestDevice dev(cpu_plugin(), 0, 3);  // three threads, whatever the machine has
  auto first = workload(dev);
  check_identical(workload(dev), first);
  check_identical(workload(dev), first);
}

TEST_CASE("CPU results do not depend on the thread count", "[determinism][cpu]") {
  // Work is cut by shape, never by thread count, and reductions add per-chunk
  // partials in chunk order: one thread and three give the same bits.
  TestDevice one(cpu_plugin(), 0, 1), three(cpu_plugin(), 0, 3);
  check_identical(workload(three), workload(one));
}

TEST_CASE("two logical CPU devices give bit-identical results", "[determinism][cpu]") {
  ConfigGuard devices("AXON_TEST_CPU_DEVICES", "2");
  ConfigGuard threads("AXON_TEST_THREADS", "2");
  REQUIRE(cpu_plugin().device_count() == 2);
  TestDevice d0(cpu_plugin(), 0), d1(cpu_plugin(), 1);
  auto a = workload(d0);
  check_identical(workload(d1), a);
  check_identical(workload(d0), a);
}

TEST_CASE("two logical CPU devices run concurrently from two host threads", "[determinism][cpu]") {
  // The mirrored strategy drives each replica's device from its own thread;
  // both share one OpenBLAS. Results must equal a lone run.
  ConfigGuard devices("AXON_TEST_CPU_DEVICES", "2");
  ConfigGuard threads("AXON_TEST_THREADS", "2");
  TestDevice d0(cpu_plugin(), 0), d1(cpu_plugin(), 1);
  const auto alone = workload(d0);
  std::vector<std::vector<float>> r0[3], r1[3];
  std::thread t0([&] {
    for (auto& r : r0) r = workload(d0);
  });
  std::thread t1([&] {
    for (auto& r : r1) r = workload(d1);
  });
  t0.join();
  t1.join();
  for (int i = 0; i < 3; ++i) {
    check_identical(r0[i], alone);
    check_identical(r1[i], alone);
  }
}

TEST_CASE("one CPU device called from two host threads at once stays correct", "[determinism][cpu]") {
  // One thread: every op runs on its caller and uses the same scratch, so
  // without the per-device kernel lock the two callers would corrupt it.
  TestDevice dev(cpu_plugin(), 0, 1);
  const auto alone = workload(dev);
  std::vector<std::vector<float>> a, b;
  std::thread ta([&] { a = workload(dev); });
  std::thread tb([&] { b = workload(dev); });
  ta.join();
  tb.join();
  check_identical(a, alone);
  check_identical(b, alone);
}

TEST_CASE("a three-thread device still matches the reference", "[determinism][cpu]") {
  TestDevice dev(cpu_plugin(), 0, 3);
  std::mt19937 rng(8);
  axon_conv2d_attrs a{sizeof(axon_conv2d_attrs), 1, 1, 1, 1, AXON_PADDING_SAME};
  HostTensor x{{5, 9, 9, 8}, random_floats(rng, 5 * 9 * 9 * 8)}, dy{{5, 9, 9, 16}, random_floats(rng, 5 * 9 * 9 * 16)};
  std::vector<int64_t> wd{3, 3, 8, 16};
  auto want = run_host(ref(), "Conv2DBackpropFilter", {x, dy}, {wd}, &a)[0];
  auto bound = run_host(ref(), "Conv2DBackpropFilter", {HostTensor{x.dims, abs_of(x.values)}, HostTensor{dy.dims, abs_of(dy.values)}}, {wd}, &a)[0];
  auto r = compare_sum(run_host(dev, "Conv2DBackpropFilter", {x, dy}, {wd}, &a)[0], want, bound);
  INFO(r.report);
  CHECK(r.ok);
}

TEST_CASE("the CPU plugin splits threads among logical devices", "[devices][cpu]") {
  ConfigGuard devices("AXON_TEST_CPU_DEVICES", "3");
  ConfigGuard threads("AXON_TEST_THREADS", "7");
  auto& api = cpu_plugin().api;
  REQUIRE(cpu_plugin().device_count() == 3);
  CHECK(std::string(api.name) == "cpu");
  CHECK(std::string(api.device_type) == "CPU");
  CHECK(api.priority == 100);
  const int expected[3] = {3, 2, 2};
  for (int i = 0; i < 3; ++i) {
    axon_device_props p{};
    p.struct_size = sizeof p;
    axon_error err{};
    REQUIRE(api.get_device_props(api.plugin_ctx, i, &p, &err) == AXON_OK);
    INFO("device " << i << ": " << p.name);
    CHECK(p.threads == expected[i]);
    CHECK(std::string(p.name).find("(" + std::to_string(expected[i]) + " threads)") != std::string::npos);
    CHECK(p.memory_total > 0);
    CHECK(p.memory_free <= p.memory_total);
  }
  axon_device_props p{};
  p.struct_size = sizeof p;
  axon_error err{};
  CHECK(api.get_device_props(api.plugin_ctx, 3, &p, &err) == AXON_INVALID_ARGUMENT);
}

TEST_CASE("the CPU all-reduce sums (and averages) in place across devices", "[collectives][cpu]") {
  auto& api = cpu_plugin().api;
  REQUIRE(api.collectives != nullptr);
  REQUIRE(api.collectives->all_reduce != nullptr);
  // Each op starts from three different buffers, and every buffer is checked:
  // a reduction that skips a buffer, or scales or copies to only some, fails.
  for (axon_reduce_op op : {AXON_REDUCE_SUM, AXON_REDUCE_MEAN}) {
    INFO((op == AXON_REDUCE_SUM ? "SUM" : "MEAN"));
    std::vector<float> a{1, 2, 3}, b{10, 20, 30}, c{4, 5, 7.5f};
    void* bufs[3] = {a.data(), b.data(), c.data()};
    void* ctxs[3] = {nullptr, nullptr, nullptr};
    axon_error err{};
    REQUIRE(api.collectives->all_reduce(api.plugin_ctx, 3, ctxs, bufs, 3, AXON_FLOAT32, op, &err) == AXON_OK);
    // Sums of integers and halves are exact; the means are exact too (x / 3 or
    // x * (1/3) rounds to the same float for these).
    const std::vector<float> want = op == AXON_REDUCE_SUM ? std::vector<float>{15, 27, 40.5f} : std::vector<float>{5, 9, 13.5f};
    CHECK(a == want);
    CHECK(b == want);
    CHECK(c == want);
  }
  std::vector<float> a{1}, b{2};
  void* bufs[2] = {a.data(), b.data()};
  void* ctxs[2] = {nullptr, nullptr};
  axon_error err{};
  CHECK(api.collectives->all_reduce(api.plugin_ctx, 2, ctxs, bufs, 1, AXON_INT32, AXON_REDUCE_SUM, &err) == AXON_INVALID_ARGUMENT);
}

TEST_CASE("devices count the memory they hand out", "[devices]") {
  for (LoadedPlugin* plugin : {&cpu_plugin(), &ref_plugin()}) {
    INFO(plugin->api.name);
    TestDevice dev(*plugin, 0, 1);
    REQUIRE(dev.api.memory_info != nullptr);
    auto info = [&] {
      axon_memory_info m{};
      m.struct_size = sizeof m;
      axon_error err{};
      REQUIRE(dev.api.memory_info(dev.api.device_ctx, &m, &err) == AXON_OK);
      return m;
    };
    const uint64_t before = info().in_use;
    {
      DeviceTensor a(dev, AXON_FLOAT32, {1000}), b(dev, AXON_UINT8, {37});
      CHECK(info().in_use == before + 4000 + 37);
      CHECK(info().peak_in_use >= before + 4037);
      // Host memory, 64-byte aligned as promised.
      CHECK(reinterpret_cast<uintptr_t>(a.t.data) % 64 == 0);
      CHECK(reinterpret_cast<uintptr_t>(b.t.data) % 64 == 0);
    }
    CHECK(info().in_use == before);
  }
}
