// The CUDA plugin as the runtime sees it: counts and describes devices through
// the driver alone, and hands device opening and collectives to the kernel
// library, which it loads only when the driver shows a usable device.
#include <axon/plugin.hpp>

#include "axon_cuda_kernels.h"
#include "kernel_library.hpp"
#include "probe.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>

namespace axon::cuda {

namespace {

constexpr const char* kPluginName = "cuda";
constexpr const char* kVersion = "0.1.0";

std::string env_note(const char* name) {
  const char* v = std::getenv(name);
  return v ? sdk::format(", %s=%s", name, v) : std::string();
}

class CudaPlugin;
CudaPlugin& the_plugin();

class CudaPlugin : public sdk::Plugin {
 public:
  // Probes once, on first use; start-up with no driver costs one failed dlopen.
  const ProbeResult& state() {
    std::call_once(once_, [this] {
      probe_ = probe_devices();
      if (!probe_.usable.empty()) {
        kernels_ = load_kernel_library(kernels_error_);
        if (kernels_ == nullptr) {
          // The devices are there but cannot be used: list them as excluded.
          for (const auto& g : probe_.usable) {
            axon_excluded_device x{};
            x.struct_size = sizeof x;
            x.physical_id = g.ordinal;
            sdk::copy_string(x.name, g.name);
            sdk::copy_string(x.reason, kernels_error_);
            probe_.excluded.push_back(x);
          }
          unusable_ = std::move(probe_.usable);
          probe_.usable.clear();
          probe_.reason = sdk::format("%zu CUDA device(s) found but unusable: ", unusable_.size()) + kernels_error_;
          log(AXON_LOG_WARNING, probe_.reason);
        }
      }
      if (!probe_.reason.empty()) log(AXON_LOG_DEBUG, "no CUDA devices: " + probe_.reason);
      // The id -> CUDA ordinal -> PCI map, with the variables that shaped it.
      for (size_t i = 0; i < probe_.usable.size(); ++i) {
        const GpuInfo& g = probe_.usable[i];
        log(AXON_LOG_INFO, sdk::format("GPU physical id %zu = CUDA ordinal %d: %s, compute %d.%d, PCI %s%s%s", i, g.ordinal,
                                       g.name.c_str(), g.cc_major, g.cc_minor, g.pci_bus_id.c_str(),
                                       env_note("CUDA_VISIBLE_DEVICES").c_str(), env_note("CUDA_DEVICE_ORDER").c_str()));
      }
    });
    return probe_;
  }

  int device_count() noexcept override {
    try {
      return static_cast<int>(state().usable.size());
    } catch (...) {
      return 0;
    }
  }

  axon_device_props device_props(int id) override {
    const GpuInfo& g = gpu(id);
    axon_device_props p{};
    sdk::copy_string(p.name, g.name);
    p.physical_id = id;
    p.memory_total = g.memory_total;
    p.memory_free = free_memory(g.ordinal);
    p.compute_major = g.cc_major;
    p.compute_minor = g.cc_minor;
    sdk::copy_string(p.pci_bus_id, g.pci_bus_id);
    sdk::copy_string(p.uuid, g.uuid);
    const int dv = state().driver_version;
    sdk::copy_string(p.description,
                     sdk::format("cuda_ordinal=%d, multiprocessors=%d, clock_mhz=%d, driver=%d.%d, kernels=%s", g.ordinal,
                                 g.multiprocessors, g.clock_mhz, dv / 1000, (dv % 1000) / 10,
                                 kernels_ && kernels_->build_info ? kernels_->build_info : "?"));
    return p;
  }

  std::unique_ptr<sdk::Device> open_device(int, const axon_device_config&) override {
    // Never used: open() below fills the device table straight from the kernel
    // library, so that kernel functions receive the library's own device ctx.
    sdk::fail(AXON_INTERNAL, "CudaPlugin::open_device called");
  }

  const axon_device_api* open(int id, const axon_device_config& config) {
    const ProbeResult& s = state();
    if (kernels_ == nullptr && !unusable_.empty()) sdk::fail(AXON_UNAVAILABLE, probe_.reason);
    if (s.usable.empty()) sdk::fail(AXON_UNAVAILABLE, "no CUDA device: " + s.reason);
    const GpuInfo& g = gpu(id);
    axon_cuda_open_args a{};
    a.struct_size = sizeof a;
    a.host = host;
    a.plugin_name = kPluginName;
    a.cuda_ordinal = g.ordinal;
    std::string label = sdk::format("/device:GPU:%d (%s)", config.logical_index, g.name.c_str());
    a.label = label.c_str();
    a.allow_tf32 = config_flag("allow-tf32");
    a.deterministic = config_flag("deterministic");
    a.config = config;
    axon_error err{};
    const axon_device_api* table = nullptr;
    axon_status st = kernels_->open_device(&a, &table, &err);
    if (st != AXON_OK) throw sdk::Error(st, err.message);
    if (table == nullptr) sdk::fail(AXON_INTERNAL, "the kernel library's open_device returned no table");
    return table;
  }

  std::string unavailable_reason() override { return state().usable.empty() ? state().reason : std::string(); }

  std::vector<axon_excluded_device> excluded_devices() override { return state().excluded; }

  const axon_collective_api* collectives() override { return &forwarding_collectives(); }

  // axon.timing: CUDA events on the device's stream, from the kernel library
  // (loaded by then: timing needs an opened device).
  const void* extension(const char* name, uint32_t version) override {
    if (std::strcmp(name, AXON_EXTENSION_TIMING) != 0 || version != 1) return nullptr;
    static const axon_timing_extension timing = {
        sizeof(axon_timing_extension),
        [](void* device_ctx, void (*enqueue)(void*), void* arg, int32_t iters, float* ms, axon_error* err) {
          const axon_cuda_kernels_api* k = the_plugin().kernels();
          if (k == nullptr || k->struct_size < AXON_STRUCT_SIZE(axon_cuda_kernels_api, time_on_stream) ||
              k->time_on_stream == nullptr)
            return sdk::set_error(err, "time_on_stream: the CUDA kernel library is not loaded"), AXON_UNAVAILABLE;
          return k->time_on_stream(device_ctx, enqueue, arg, iters, ms, err);
        }};
    return &timing;
  }
  const axon_cuda_kernels_api* kernels() const { return kernels_; }

  // The kernel library's collectives, loading it if need be (comm_get_id may
  // come before any device is opened).
  const axon_collective_api* kernel_collectives() {
    state();
    if (kernels_ == nullptr) {
      std::string error;
      kernels_ = load_kernel_library(error);
      if (kernels_ == nullptr) sdk::fail(AXON_UNAVAILABLE, error);
    }
    if (kernels_->collectives == nullptr) sdk::fail(AXON_UNIMPLEMENTED, "the CUDA kernel library has no collectives");
    return kernels_->collectives;
  }

 private:
  // The host hands booleans over as "1"/"0".
  bool config_flag(const char* key) const {
    const char* v = config(key);
    return v != nullptr && (std::string(v) == "1" || std::string(v) == "true");
  }

  const GpuInfo& gpu(int id) {
    const auto& usable = state().usable;
    sdk::require(id >= 0 && id < static_cast<int>(usable.size()),
                 sdk::format("CUDA device %d does not exist (%zu usable)", id, usable.size()));
    return usable[id];
  }

  // Free memory needs a context; the primary one is what cudart uses later.
  uint64_t free_memory(int ordinal) {
    const Driver* d = state().driver;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    if (d == nullptr || d->cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS) return 0;
    if (d->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) return 0;
    size_t free = 0, total = 0;
    if (d->cuCtxPushCurrent(ctx) == CUDA_SUCCESS) {
      d->cuMemGetInfo(&free, &total);
      CUcontext popped = nullptr;
      d->cuCtxPopCurrent(&popped);
    }
    d->cuDevicePrimaryCtxRelease(dev);
    return free;
  }

  static const axon_collective_api& forwarding_collectives();

  std::once_flag once_;
  ProbeResult probe_;
  std::vector<GpuInfo> unusable_;
  const axon_cuda_kernels_api* kernels_ = nullptr;
  std::string kernels_error_;
};

CudaPlugin& the_plugin() {
  static CudaPlugin* p = new CudaPlugin;  // never deleted: plugins are never unloaded
  return *p;
}

const axon_collective_api& CudaPlugin::forwarding_collectives() {
  static const axon_collective_api api = [] {
    axon_collective_api c{};
    c.struct_size = sizeof c;
    c.all_reduce = [](void*, int32_t n, void* const* ctxs, void* const* bufs, int64_t count, axon_dtype t, axon_reduce_op op,
                      axon_error* err) -> axon_status {
      const axon_collective_api* k = nullptr;
      axon_status st = sdk::guarded(err, [&] { k = the_plugin().kernel_collectives(); });
      if (st != AXON_OK) return st;
      if (k->all_reduce == nullptr) return sdk::set_error(err, "all_reduce missing"), AXON_UNIMPLEMENTED;
      return k->all_reduce(nullptr, n, ctxs, bufs, count, t, op, err);
    };
    c.comm_get_id = [](void*, void* id, size_t* size, axon_error* err) -> axon_status {
      const axon_collective_api* k = nullptr;
      axon_status st = sdk::guarded(err, [&] { k = the_plugin().kernel_collectives(); });
      if (st != AXON_OK) return st;
      if (k->comm_get_id == nullptr) return sdk::set_error(err, "comm_get_id missing"), AXON_UNIMPLEMENTED;
      return k->comm_get_id(nullptr, id, size, err);
    };
    c.comm_create = [](void* dev, const void* id, size_t size, int32_t rank, int32_t world, void** comm,
                       axon_error* err) -> axon_status {
      const axon_collective_api* k = nullptr;
      axon_status st = sdk::guarded(err, [&] { k = the_plugin().kernel_collectives(); });
      if (st != AXON_OK) return st;
      if (k->comm_create == nullptr) return sdk::set_error(err, "comm_create missing"), AXON_UNIMPLEMENTED;
      return k->comm_create(dev, id, size, rank, world, comm, err);
    };
    c.comm_all_reduce = [](void* comm, void* buf, int64_t count, axon_dtype t, axon_reduce_op op, int32_t timeout_ms,
                           axon_error* err) -> axon_status {
      const axon_collective_api* k = nullptr;
      axon_status st = sdk::guarded(err, [&] { k = the_plugin().kernel_collectives(); });
      if (st != AXON_OK) return st;
      if (k->comm_all_reduce == nullptr) return sdk::set_error(err, "comm_all_reduce missing"), AXON_UNIMPLEMENTED;
      return k->comm_all_reduce(comm, buf, count, t, op, timeout_ms, err);
    };
    c.comm_destroy = [](void* comm) {
      const axon_collective_api* k = nullptr;
      axon_error err{};
      if (sdk::guarded(&err, [&] { k = the_plugin().kernel_collectives(); }) == AXON_OK && k->comm_destroy)
        k->comm_destroy(comm);
    };
    c.all_reduce_async = [](void*, int32_t n, void* const* ctxs, void* const* bufs, int64_t count, axon_dtype t,
                            axon_reduce_op op, const axon_event* wait_for, const axon_event* done,
                            axon_error* err) -> axon_status {
      const axon_collective_api* k = nullptr;
      axon_status st = sdk::guarded(err, [&] { k = the_plugin().kernel_collectives(); });
      if (st != AXON_OK) return st;
      if (k->all_reduce_async == nullptr) return sdk::set_error(err, "all_reduce_async missing"), AXON_UNIMPLEMENTED;
      return k->all_reduce_async(nullptr, n, ctxs, bufs, count, t, op, wait_for, done, err);
    };
    c.comm_all_reduce_async = [](void* comm, void* buf, int64_t count, axon_dtype t, axon_reduce_op op,
                                 axon_event wait_for, axon_event done, int32_t timeout_ms,
                                 axon_error* err) -> axon_status {
      const axon_collective_api* k = nullptr;
      axon_status st = sdk::guarded(err, [&] { k = the_plugin().kernel_collectives(); });
      if (st != AXON_OK) return st;
      if (k->comm_all_reduce_async == nullptr)
        return sdk::set_error(err, "comm_all_reduce_async missing"), AXON_UNIMPLEMENTED;
      return k->comm_all_reduce_async(comm, buf, count, t, op, wait_for, done, timeout_ms, err);
    };
    return c;
  }();
  return api;
}

}  // namespace

}  // namespace axon::cuda

// The entry point: the SDK fills the table, then open_device is pointed at the
// kernel library (see CudaPlugin::open).
extern "C" AXON_PLUGIN_EXPORT axon_status axon_plugin_get_api(const axon_host_api* host, const axon_plugin_api** api,
                                                              axon_error* err) {
  using namespace axon;
  return sdk::guarded(err, [&] {
    if (host == nullptr || api == nullptr) sdk::fail(AXON_INVALID_ARGUMENT, "null host or table");
    if (host->abi_major != AXON_ABI_MAJOR)
      sdk::fail(AXON_UNAVAILABLE, sdk::format("built for ABI major %d, this axon has %u", AXON_ABI_MAJOR, host->abi_major));
    cuda::CudaPlugin& p = cuda::the_plugin();
    static axon_plugin_api table{};
    sdk::fill_plugin_api(&p, host, cuda::kPluginName, cuda::kVersion, "GPU", 200, &table);
    table.open_device = [](void*, int32_t id, const axon_device_config* cfg, const axon_device_api** out,
                           axon_error* e) -> axon_status {
      return sdk::guarded(e, [&] {
        sdk::require(cfg != nullptr && out != nullptr, "open_device: null config or table");
        axon_device_config conf{};
        std::memcpy(&conf, cfg, std::min(cfg->struct_size, sizeof conf));  // older hosts send less
        conf.struct_size = sizeof conf;
        *out = cuda::the_plugin().open(id, conf);
      });
    };
    *api = &table;
  });
}
