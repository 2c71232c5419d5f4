// A test backend built against the SDK alone: device type given by
// FAKE_TYPE, host memory, and kernels for only a few ops, so the runtime's
// placement and fallback can be tested. Its Relu declines calls of more than
// kMaxRelu elements up front (supports) and, as a kernel library without an
// algorithm for a shape would, calls of exactly kNoAlgorithm elements when
// it runs (AXON_UNIMPLEMENTED). One source, many variants: the
// FAKE_* macros below turn it into the faulty plugins the loader must skip
// (wrong ABI major, a required function missing, init failing) or into one
// built against an older, smaller plugin table.
#include <axon/host_memory_device.hpp>
#include <axon/plugin.hpp>

#include <cstring>
#include <deque>

#ifndef FAKE_NAME
#define FAKE_NAME "fake"
#endif
#ifndef FAKE_TABLE_NAME  // the plugin name in its table; differs from the file's to test duplicates
#define FAKE_TABLE_NAME FAKE_NAME
#endif
#ifndef FAKE_TYPE
#define FAKE_TYPE "FAKE"
#endif
#ifndef FAKE_PRIORITY
#define FAKE_PRIORITY 300
#endif

namespace fake {

using namespace axon::sdk;

void relu(struct FakeDevice&, const KernelCall& call);

constexpr int64_t kMaxRelu = 1024, kNoAlgorithm = 7;

struct FakeDevice final : HostMemoryDevice {
  FakeDevice() : HostMemoryDevice("/device:" FAKE_TYPE ":0") {}
  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override { return table().find(op, dtype); }
  const char* const* list_ops() override { return table().list(); }
  bool supports(const axon_kernel_call& call) override {
    if (std::strcmp(call.op, "Relu") != 0 || call.num_inputs < 1) return true;
    int64_t n = 1;
    for (int i = 0; i < call.inputs[0].rank; ++i) n *= call.inputs[0].dims[i];
    return n <= kMaxRelu;
  }

  static KernelTable& table() {
    static KernelTable t = [] {
      KernelTable k;
      k.add("Relu", AXON_FLOAT32, kernel<FakeDevice, relu>);
      return k;
    }();
    return t;
  }
};

void relu(FakeDevice&, const KernelCall& call) {
  call.expect_arity(1, 1);
  TensorRef x = call.input(0), y = call.output(0);
  require(x.numel() == y.numel(), "Relu: x and y differ in size");
  if (x.numel() == kNoAlgorithm) fail(AXON_UNIMPLEMENTED, "Relu: no algorithm for 7 elements");
  for (int64_t i = 0; i < x.numel(); ++i) y.data<float>()[i] = x.data<float>()[i] > 0 ? x.data<float>()[i] : 0.0f;
}

struct FakePlugin final : Plugin {
  int device_count() noexcept override { return 1; }
  axon_device_props device_props(int id) override {
    axon_device_props p{};
    copy_string(p.name, "fake test device (" FAKE_NAME ")");
    p.physical_id = id;
    copy_string(p.description, "test=1");
    return p;
  }
  std::unique_ptr<Device> open_device(int id, const axon_device_config& c) override {
    // Reports what the host passed, through the host's logger (tests read it).
    const char* threads = config("threads");
    log(AXON_LOG_INFO, format("opening device %d: logical index %d, memory mode %d, limit %llu, threads %d, "
                              "get_config(threads)=%s",
                              id, c.logical_index, static_cast<int>(c.memory_mode),
                              static_cast<unsigned long long>(c.memory_limit_bytes), c.threads,
                              threads ? threads : "(null)"));
    return std::make_unique<FakeDevice>();
  }
};

}  // namespace fake

extern "C" AXON_PLUGIN_EXPORT axon_status axon_plugin_get_api(const axon_host_api* host,
                                                              const axon_plugin_api** api, axon_error* err) {
#ifdef FAKE_INIT_FAILS
  (void)host;
  (void)api;
  axon::sdk::set_error(err, "fake: the test device is switched off");
  return AXON_UNAVAILABLE;
#else
  return axon::sdk::guarded(err, [&] {
    static fake::FakePlugin* instance = new fake::FakePlugin();
    static axon_plugin_api table{};
    axon_plugin_api* out = &table;
    axon::sdk::fill_plugin_api(instance, host, FAKE_TABLE_NAME, "0.0.1", FAKE_TYPE, FAKE_PRIORITY, out);
#ifdef FAKE_ABI_MAJOR
    out->abi_major = FAKE_ABI_MAJOR;
#endif
#ifdef FAKE_NO_OPEN_DEVICE
    out->open_device = nullptr;
#endif
#ifdef FAKE_OLD_TABLE
    // As if built against a header whose table ended at open_device: the
    // optional fields after it do not exist (their bytes hold garbage here,
    // which the host must not read).
    out->struct_size = AXON_STRUCT_SIZE(axon_plugin_api, open_device);
    std::memset(reinterpret_cast<char*>(out) + out->struct_size, 0xAB, sizeof *out - out->struct_size);
    // Its device tables likewise end at list_ops (no memory_info, no close).
    static decltype(out->open_device) full_open = out->open_device;
    out->open_device = [](void* ctx, int32_t id, const axon_device_config* cfg, const axon_device_api** device,
                          axon_error* e) {
      axon_status st = full_open(ctx, id, cfg, device, e);
      if (st == AXON_OK) {
        // Lives as long as the device, which is never closed (kept reachable).
        static std::deque<axon_device_api> tables;
        axon_device_api& old = tables.emplace_back(**device);
        old.struct_size = AXON_STRUCT_SIZE(axon_device_api, list_ops);
        std::memset(reinterpret_cast<char*>(&old) + old.struct_size, 0xAB, sizeof old - old.struct_size);
        *device = &old;
      }
      return st;
    };
#endif
    *api = out;
  });
#endif
}
