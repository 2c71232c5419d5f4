// Test-only harness that talks to a plugin through the C ABI alone (dlopen +
// axon_plugin_get_api), with no core library in between. Kernel tests use it to
// run the same op on two plugins (e.g. cpu vs reference) and compare.
#pragma once

#include <axon/client.hpp>
#include <axon/plugin_abi.h>

#include <dlfcn.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace axon::test {

inline const char* harness_config(void*, const char* key) {
  // Tests configure plugins through AXON_TEST_<KEY> variables, e.g.
  // AXON_TEST_THREADS=1; keys use '-' which becomes '_'.
  static thread_local std::string name;
  name = "AXON_TEST_";
  for (const char* p = key; *p; ++p) name += (*p == '-') ? '_' : static_cast<char>(std::toupper(*p));
  return std::getenv(name.c_str());
}

inline void harness_log(void*, axon_log_level, const char*, const char*) {}

inline const axon_host_api& harness_host() {
  static const axon_host_api host = [] {
    axon_host_api h{};
    h.struct_size = sizeof h;
    h.abi_major = AXON_ABI_MAJOR;
    h.abi_minor = AXON_ABI_MINOR;
    h.log = harness_log;
    h.get_config = harness_config;
    return h;
  }();
  return host;
}

// A failed call throws client::CallFailed (a std::runtime_error) naming it,
// with the status and the plugin's message.
using client::check;

// A plugin loaded from a file (never unloaded, like the runtime does).
struct LoadedPlugin {
  axon_plugin_api api{};

  explicit LoadedPlugin(const std::string& path) {
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) throw std::runtime_error("dlopen " + path + ": " + dlerror());
    auto entry = reinterpret_cast<axon_plugin_get_api_fn>(dlsym(h, AXON_PLUGIN_ENTRY_SYMBOL));
    if (entry == nullptr) throw std::runtime_error(path + ": no " AXON_PLUGIN_ENTRY_SYMBOL);
    api = client::get_plugin_api(entry, harness_host());
  }
  int device_count() const { return api.device_count(api.plugin_ctx); }
};

// One opened device with helpers to move float/int data and run kernels.
struct TestDevice {
  axon_device_api api{};

  TestDevice(const LoadedPlugin& plugin, int physical_id, int threads = 0) {
    axon_device_config cfg{};
    cfg.struct_size = sizeof cfg;
    cfg.logical_index = physical_id;
    cfg.memory_mode = AXON_MEMORY_GROWTH;
    cfg.threads = threads;
    api = client::open_device(plugin.api, physical_id, cfg);
  }
  ~TestDevice() {
    if (api.close) api.close(api.device_ctx);
  }
  TestDevice(const TestDevice&) = delete;
  TestDevice& operator=(const TestDevice&) = delete;

  bool has(const char* op, axon_dtype t = AXON_FLOAT32) const {
    return api.get_kernel(api.device_ctx, op, t) != nullptr;
  }
  void sync() {
    axon_error err{};
    check(api.synchronize(api.device_ctx, &err), err, "synchronize");
  }
};

// A tensor in a TestDevice's memory, freed on destruction.
struct DeviceTensor {
  TestDevice* dev;
  axon_tensor t{};

  DeviceTensor(TestDevice& d, axon_dtype dtype, std::vector<int64_t> dims) : dev(&d) {
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) t.dims[i] = dims[i];
    size_t bytes = this->bytes();
    if (bytes > 0) {
      axon_error err{};
      check(d.api.allocate(d.api.device_ctx, bytes, &t.data, &err), err, "allocate");
    }
  }
  ~DeviceTensor() {
    if (t.data) dev->api.deallocate(dev->api.device_ctx, t.data);
  }
  DeviceTensor(const DeviceTensor&) = delete;
  DeviceTensor& operator=(const DeviceTensor&) = delete;

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(numel()) * (t.dtype == AXON_UINT8 ? 1 : t.dtype == AXON_INT64 ? 8 : 4); }

  template <class T>
  void upload(const std::vector<T>& v) {
    if (v.size() * sizeof(T) != bytes()) throw std::runtime_error("upload: size mismatch");
    axon_error err{};
    if (bytes() > 0) check(dev->api.copy_host_to_device(dev->api.device_ctx, t.data, v.data(), bytes(), &err), err, "h2d");
  }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> v(bytes() / sizeof(T));
    axon_error err{};
    if (bytes() > 0) check(dev->api.copy_device_to_host(dev->api.device_ctx, v.data(), t.data, bytes(), &err), err, "d2h");
    return v;
  }
};

// Runs `op` on `dev`; throws with the plugin's message on failure.
inline void run_op(TestDevice& dev, const char* op, std::vector<const DeviceTensor*> in, std::vector<DeviceTensor*> out,
                   const void* attrs = nullptr) {
  std::vector<axon_tensor> ins, outs;
  for (auto* t : in) ins.push_back(t->t);
  for (auto* t : out) outs.push_back(t->t);
  axon_dtype dt = !ins.empty() ? ins[0].dtype : outs.at(0).dtype;
  axon_kernel_fn fn = dev.api.get_kernel(dev.api.device_ctx, op, dt);
  if (fn == nullptr) throw std::runtime_error(std::string("no kernel for ") + op);
  client::call_kernel(dev.api, fn, op, ins, outs, attrs, op);
}

}  // namespace axon::test
