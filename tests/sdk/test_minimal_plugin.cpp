// The minimal example plugin (sdk/examples/minimal-plugin) through the C ABI
// alone: its kernels against the reference plugin, its memory accounting and
// limit, and its errors. Tolerances: MatMul within tol::sum_allowed
// (tests/common/tolerance.hpp), the elementwise ops bit for bit.
#include "kernel_test_util.hpp"

#include <axon/host_blocks.hpp>

#include <algorithm>
#include <cstring>
#include <thread>
#include <tuple>

using namespace axon::test;

namespace {

LoadedPlugin& toy_plugin() {
  static LoadedPlugin p(AXON_TOY_PLUGIN_PATH);
  return p;
}
TestDevice& toy() {
  static TestDevice d(toy_plugin(), 0);
  return d;
}

// A TOY device opened with the given memory mode, closed at the end.
struct RawDevice {
  axon_device_api api{};
  RawDevice(axon_memory_mode mode, uint64_t limit) {
    axon_device_config cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.memory_mode = mode;
    cfg.memory_limit_bytes = limit;
    api = axon::client::open_device(toy_plugin().api, 0, cfg);
  }
  ~RawDevice() { api.close(api.device_ctx); }
  RawDevice(const RawDevice&) = delete;
  RawDevice& operator=(const RawDevice&) = delete;

  axon_status allocate(size_t bytes, void** p, std::string* message = nullptr) {
    axon_error err{};
    axon_status s = api.allocate(api.device_ctx, bytes, p, &err);
    if (message) *message = err.message;
    return s;
  }
  void free(void* p) { api.deallocate(api.device_ctx, p); }
  axon_memory_info info() {
    axon_memory_info m{};
    m.struct_size = sizeof m;
    axon_error err{};
    check(api.memory_info(api.device_ctx, &m, &err), err, "memory_info");
    return m;
  }
};

// Calls a kernel directly and returns its status and message.
axon_status call_status(TestDevice& dev, const char* op, std::vector<const DeviceTensor*> in,
                        std::vector<DeviceTensor*> out, const void* attrs, std::string& message) {
  std::vector<axon_tensor> ins, outs;
  for (auto* t : in) ins.push_back(t->t);
  for (auto* t : out) outs.push_back(t->t);
  axon_kernel_fn fn = dev.api.get_kernel(dev.api.device_ctx, op, AXON_FLOAT32);
  REQUIRE(fn != nullptr);
  axon_kernel_call call{sizeof(axon_kernel_call), op, static_cast<int32_t>(ins.size()), ins.data(),
                        static_cast<int32_t>(outs.size()), outs.data(), attrs};
  axon_error err{};
  axon_status s = fn(dev.api.device_ctx, &call, &err);
  message = err.message;
  return s;
}

HostTensor random_tensor(std::mt19937& rng, std::vector<int64_t> dims) {
  return {dims, random_floats(rng, numel(dims))};
}

}  // namespace

TEST_CASE("TOY: the plugin table and the ops it has", "[toy]") {
  const axon_plugin_api& api = toy_plugin().api;
  CHECK(std::string(api.name) == "toy");
  CHECK(std::string(api.device_type) == "TOY");
  CHECK(api.priority == 150);
  CHECK(toy_plugin().device_count() == 1);
  std::vector<std::string> ops;
  for (const char* const* p = toy().api.list_ops(toy().api.device_ctx); *p; ++p) ops.emplace_back(*p);
  std::sort(ops.begin(), ops.end());
  CHECK(ops == std::vector<std::string>{"BiasAdd", "Fill", "Identity", "MatMul", "Relu", "ReluGrad", "Scale"});
  for (const std::string& op : ops) {
    CHECK(toy().has(op.c_str(), AXON_FLOAT32));
    CHECK_FALSE(toy().has(op.c_str(), AXON_INT32));  // float32 only: other dtypes fall back
  }
  CHECK_FALSE(toy().has("Conv2D"));
}

TEST_CASE("TOY: a caller's older, smaller struct is filled up to its struct_size and no further", "[toy]") {
  const axon_plugin_api& api = toy_plugin().api;
  axon_device_props props{};
  props.struct_size = AXON_STRUCT_SIZE(axon_device_props, description);  // a host from before host_memory
  props.host_memory = 7;
  axon_error err{};
  REQUIRE(api.get_device_props(api.plugin_ctx, 0, &props, &err) == AXON_OK);
  CHECK(props.struct_size == AXON_STRUCT_SIZE(axon_device_props, description));
  CHECK(props.host_memory == 7);  // untouched
  CHECK(std::string(props.name) == "axon toy device (host memory)");
  props.struct_size = sizeof props;
  REQUIRE(api.get_device_props(api.plugin_ctx, 0, &props, &err) == AXON_OK);
  CHECK(props.struct_size == sizeof props);
  CHECK(props.host_memory == 1);  // TOY hands out host memory
  axon_memory_info m{};
  m.struct_size = AXON_STRUCT_SIZE(axon_memory_info, in_use);
  m.total = 99;
  REQUIRE(toy().api.memory_info(toy().api.device_ctx, &m, &err) == AXON_OK);
  CHECK(m.struct_size == AXON_STRUCT_SIZE(axon_memory_info, in_use));
  CHECK(m.total == 99);
}

TEST_CASE("TOY: MatMul matches the reference with every transpose", "[toy]") {
  std::mt19937 rng(11);
  for (auto [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {7, 13, 5}, {64, 576, 64}, {3, 0, 4}})
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        axon_matmul_attrs at{sizeof(axon_matmul_attrs), ta, tb};
        HostTensor a = random_tensor(rng, ta ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k});
        HostTensor b = random_tensor(rng, tb ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n});
        auto want = run_host(ref(), "MatMul", {a, b}, {{m, n}}, &at)[0];
        auto bound = run_host(ref(), "MatMul", {{a.dims, abs_of(a.values)}, {b.dims, abs_of(b.values)}}, {{m, n}}, &at)[0];
        auto got = run_host(toy(), "MatMul", {a, b}, {{m, n}}, &at)[0];
        Comparison c = compare_sum(got, want, bound);
        INFO("m " << m << " k " << k << " n " << n << " transpose_a " << ta << " transpose_b " << tb << ": " << c.report);
        CHECK(c.ok);
      }
}

TEST_CASE("TOY: the elementwise ops equal the reference bit for bit", "[toy]") {
  std::mt19937 rng(12);
  const std::vector<int64_t> dims{4, 5, 6};
  HostTensor x = random_tensor(rng, dims), dy = random_tensor(rng, dims), bias = random_tensor(rng, {6});
  HostTensor y{dims, run_host(ref(), "Relu", {x}, {dims})[0]};  // zeros where x <= 0
  axon_scale_attrs scale{sizeof(axon_scale_attrs), -0.37f};
  axon_fill_attrs fill{sizeof(axon_fill_attrs), 3.25f};
  struct Case {
    const char* op;
    std::vector<HostTensor> in;
    const void* attrs;
  };
  for (const Case& c : {Case{"Relu", {x}, nullptr}, Case{"ReluGrad", {dy, y}, nullptr}, Case{"BiasAdd", {x, bias}, nullptr},
                        Case{"Scale", {x}, &scale}, Case{"Fill", {}, &fill}, Case{"Identity", {x}, nullptr}}) {
    Comparison r = compare_exact(run_host(toy(), c.op, c.in, {dims}, c.attrs)[0], run_host(ref(), c.op, c.in, {dims}, c.attrs)[0]);
    INFO(c.op << ": " << r.report);
    CHECK(r.ok);
  }
}

TEST_CASE("TOY: BiasAdd, Scale and Identity in place", "[toy]") {
  std::mt19937 rng(13);
  HostTensor x = random_tensor(rng, {3, 8}), bias = random_tensor(rng, {8});
  axon_scale_attrs scale{sizeof(axon_scale_attrs), 2.5f};
  struct Case {
    const char* op;
    std::vector<HostTensor> rest;
    const void* attrs;
  };
  for (const Case& c : {Case{"BiasAdd", {bias}, nullptr}, Case{"Scale", {}, &scale}, Case{"Identity", {}, nullptr}}) {
    std::vector<HostTensor> in{x};
    in.insert(in.end(), c.rest.begin(), c.rest.end());
    const std::vector<float> want = run_host(ref(), c.op, in, {x.dims}, c.attrs)[0];
    DeviceTensor t(toy(), AXON_FLOAT32, x.dims);
    t.upload(x.values);
    std::vector<std::unique_ptr<DeviceTensor>> others;
    std::vector<const DeviceTensor*> ins{&t};
    for (const HostTensor& h : c.rest) {
      others.push_back(std::make_unique<DeviceTensor>(toy(), AXON_FLOAT32, h.dims));
      others.back()->upload(h.values);
      ins.push_back(others.back().get());
    }
    run_op(toy(), c.op, ins, {&t}, c.attrs);
    Comparison r = compare_exact(t.download<float>(), want);
    INFO(c.op << ": " << r.report);
    CHECK(r.ok);
  }
}

// The kernels run the SDK's validator (KernelCall::validate), so a call that
// bypasses the host gets the host's own messages.
TEST_CASE("TOY: bad calls fail with AXON_INVALID_ARGUMENT and the validator's message naming op and tensor", "[toy]") {
  DeviceTensor a(toy(), AXON_FLOAT32, {2, 3}), b(toy(), AXON_FLOAT32, {4, 5}), c(toy(), AXON_FLOAT32, {2, 5});
  DeviceTensor bias(toy(), AXON_FLOAT32, {2}), ints(toy(), AXON_INT32, {2, 3}), v(toy(), AXON_FLOAT32, {3});
  axon_matmul_attrs at{sizeof(axon_matmul_attrs), 0, 0};
  axon_scale_attrs small{AXON_STRUCT_SIZE(axon_scale_attrs, alpha) - 1, 1.0f};
  struct Case {
    const char* op;
    std::vector<const DeviceTensor*> in;
    std::vector<DeviceTensor*> out;
    const void* attrs;
    const char* message;
  };
  for (const Case& k : {
           Case{"MatMul", {&a, &b}, {&c}, &at, "MatMul: inner dimensions differ: a [2,3], b [4,5]"},
           Case{"MatMul", {&a, &v}, {&c}, &at, "MatMul: b must have rank 2, got shape [3]"},
           Case{"MatMul", {&a, &b}, {&c}, nullptr, "MatMul: attributes missing (axon_matmul_attrs)"},
           Case{"BiasAdd", {&a, &bias}, {&a}, nullptr, "BiasAdd: bias has shape [2], expected [3]"},
           Case{"BiasAdd", {&v, &v}, {&v}, nullptr, "BiasAdd: x must have rank >= 2, got shape [3]"},
           Case{"Relu", {&a}, {&ints}, nullptr, "Relu: y must be float32, got int32"},
           Case{"Relu", {&a}, {&c}, nullptr, "Relu: y has shape [2,5], expected x's [2,3]"},
           Case{"ReluGrad", {&a, &c}, {&a}, nullptr, "ReluGrad: y has shape [2,5], expected dy's [2,3]"},
           Case{"Scale", {&a}, {&a}, &small, "Scale: attribute struct too small (axon_scale_attrs: 11 < 12 bytes)"},
           Case{"Identity", {&a, &a}, {&c}, nullptr, "Identity: expected 1 inputs and 1 outputs, got 2 and 1"},
           Case{"Identity", {&a}, {&ints}, nullptr, "Identity: y must be float32, got int32"},
       }) {
    std::string m;
    INFO(k.op << ": " << k.message);
    CHECK(call_status(toy(), k.op, k.in, k.out, k.attrs, m) == AXON_INVALID_ARGUMENT);
    CHECK(m == k.message);
  }
}

// The op table lets Identity take any dtype, and the validator admits any
// matching pair, so its kernel copies by the dtype's size, never past the end.
TEST_CASE("TOY: Identity's kernel copies exactly the bytes of a uint8 tensor", "[toy]") {
  DeviceTensor x(toy(), AXON_UINT8, {5}), y(toy(), AXON_UINT8, {5});
  x.upload(std::vector<uint8_t>{1, 2, 3, 4, 5});
  std::string m;
  REQUIRE(call_status(toy(), "Identity", {&x}, {&y}, nullptr, m) == AXON_OK);
  CHECK(y.download<uint8_t>() == std::vector<uint8_t>{1, 2, 3, 4, 5});
}

TEST_CASE("TOY: memory_info counts exactly and the limit refuses what would exceed it", "[toy][memory]") {
  constexpr uint64_t kLimit = 1 << 20;
  RawDevice dev(AXON_MEMORY_LIMIT, kLimit);
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  REQUIRE(dev.allocate(1000, &a) == AXON_OK);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  axon_memory_info m = dev.info();
  CHECK(m.in_use == 1000);
  CHECK(m.peak_in_use == 1000);
  CHECK(m.limit == kLimit);

  std::string message;
  CHECK(dev.allocate(kLimit, &c, &message) == AXON_OUT_OF_MEMORY);
  CHECK(message == "/device:TOY:0: out of memory: requested 1048576 bytes, limit 1048576 bytes, in use 1000 bytes");
  REQUIRE(dev.allocate(kLimit - 1000, &b) == AXON_OK);  // exactly up to the limit
  CHECK(dev.allocate(1, &c, &message) == AXON_OUT_OF_MEMORY);
  CHECK(message == "/device:TOY:0: out of memory: requested 1 bytes, limit 1048576 bytes, in use 1048576 bytes");
  CHECK(dev.info().in_use == kLimit);

  dev.free(a);
  m = dev.info();
  CHECK(m.in_use == kLimit - 1000);
  CHECK(m.peak_in_use == kLimit);
  dev.free(b);
  dev.free(nullptr);
  CHECK(dev.info().in_use == 0);
  CHECK(dev.info().peak_in_use == kLimit);
}

TEST_CASE("TOY: reserve and growth allocate on demand without a limit", "[toy][memory]") {
  for (axon_memory_mode mode : {AXON_MEMORY_RESERVE, AXON_MEMORY_GROWTH}) {
    RawDevice dev(mode, 1024);  // the limit field is only read in AXON_MEMORY_LIMIT
    CHECK(dev.info().in_use == 0);
    void* p = nullptr;
    REQUIRE(dev.allocate(4 << 20, &p) == AXON_OK);
    std::memset(p, 1, 4 << 20);
    CHECK(dev.info().in_use == 4u << 20);
#ifdef AXON_HOST_HUGE_BLOCKS
    CHECK(reinterpret_cast<uintptr_t>(p) % axon::sdk::kHugePageBytes == 0);  // a host block on huge pages
#endif
    CHECK(dev.info().limit == 0);
    void* empty = nullptr;
    REQUIRE(dev.allocate(0, &empty) == AXON_OK);  // a distinct, freeable pointer
    CHECK((empty != nullptr && empty != p));
    dev.free(empty);
    dev.free(p);
    CHECK(dev.info().in_use == 0);
  }
}

TEST_CASE("TOY: medium blocks share huge-page chunks, whose free bytes count as reserved", "[toy][memory]") {
  RawDevice dev(AXON_MEMORY_GROWTH, 0);
  constexpr size_t kBlock = 802816;  // a 7x7x64 activation at batch 64
  void *a = nullptr, *b = nullptr;
  REQUIRE(dev.allocate(kBlock, &a) == AXON_OK);
  REQUIRE(dev.allocate(kBlock, &b) == AXON_OK);
  std::memset(a, 1, kBlock);
  std::memset(b, 2, kBlock);
  CHECK(static_cast<unsigned char*>(a)[kBlock - 1] == 1);
  CHECK(dev.info().in_use == 2 * kBlock);
#ifdef AXON_HOST_HUGE_BLOCKS
  CHECK(reinterpret_cast<uintptr_t>(a) % axon::sdk::kHugePageBytes == 0);  // one chunk's start
  CHECK(static_cast<char*>(b) == static_cast<char*>(a) + kBlock);             // and the next block of it
  CHECK(dev.info().reserved == axon::sdk::kHugePageBytes);
#else
  CHECK(dev.info().reserved == 2 * kBlock);
#endif
  dev.free(a);
  dev.free(b);
  CHECK(dev.info().in_use == 0);
#ifdef AXON_HOST_HUGE_BLOCKS
  CHECK(dev.info().reserved == axon::sdk::kHugePageBytes);  // the empty chunk is kept for the next block
#endif
}

TEST_CASE("TOY: allocate and deallocate from several threads at once", "[toy][memory]") {
  RawDevice dev(AXON_MEMORY_GROWTH, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&dev, t] {
      for (int i = 0; i < 2000; ++i) {
        void* p = nullptr;
        const size_t small = static_cast<size_t>(64 + t + i % 7), medium = (size_t{64} << 10) + small;
        if (dev.allocate(i % 2 == 0 ? small : medium, &p) == AXON_OK) dev.free(p);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(dev.info().in_use == 0);
  CHECK(dev.info().peak_in_use >= 64);
}
