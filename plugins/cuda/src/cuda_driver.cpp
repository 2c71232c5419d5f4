#include "cuda_driver.hpp"

#include <dlfcn.h>

#include <mutex>

namespace axon::cuda {

std::string Driver::error_text(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName) cuGetErrorName(r, &name);
  if (cuGetErrorString) cuGetErrorString(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(static_cast<int>(r));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

namespace {

template <class F>
bool bind(void* lib, F& fn, const char* symbol, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
  if (fn == nullptr && missing.empty()) missing = symbol;
  return fn != nullptr;
}

}  // namespace

const Driver* load_driver(std::string& reason) {
  static Driver driver;
  static std::string load_error;
  static bool ok = false;
  static std::once_flag once;
  std::call_once(once, [] {
    // RTLD_LOCAL: the kernel library's cudart opens the driver again itself.
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* e = dlerror();
      load_error = std::string("CUDA driver not found (") + (e ? e : "libcuda.so.1: unknown error") + ")";
      return;
    }
    std::string missing;
    // The _v2 names are what cuda.h maps the plain names to since CUDA 3.2/4.0.
    bind(lib, driver.cuInit, "cuInit", missing);
    bind(lib, driver.cuDriverGetVersion, "cuDriverGetVersion", missing);
    bind(lib, driver.cuDeviceGetCount, "cuDeviceGetCount", missing);
    bind(lib, driver.cuDeviceGet, "cuDeviceGet", missing);
    bind(lib, driver.cuDeviceGetName, "cuDeviceGetName", missing);
    bind(lib, driver.cuDeviceGetAttribute, "cuDeviceGetAttribute", missing);
    bind(lib, driver.cuDeviceTotalMem, "cuDeviceTotalMem_v2", missing);
    bind(lib, driver.cuDeviceGetPCIBusId, "cuDeviceGetPCIBusId", missing);
    bind(lib, driver.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", missing);
    bind(lib, driver.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", missing);
    bind(lib, driver.cuCtxPushCurrent, "cuCtxPushCurrent_v2", missing);
    bind(lib, driver.cuCtxPopCurrent, "cuCtxPopCurrent_v2", missing);
    bind(lib, driver.cuMemGetInfo, "cuMemGetInfo_v2", missing);
    bind(lib, driver.cuGetErrorName, "cuGetErrorName", missing);
    bind(lib, driver.cuGetErrorString, "cuGetErrorString", missing);
    if (!missing.empty()) {
      load_error = "CUDA driver libcuda.so.1 is too old: it lacks " + missing;
      return;
    }
    // Optional: the UUID (older drivers only have the unversioned symbol).
    std::string ignored;
    if (!bind(lib, driver.cuDeviceGetUuid, "cuDeviceGetUuid_v2", ignored))
      bind(lib, driver.cuDeviceGetUuid, "cuDeviceGetUuid", ignored);
    ok = true;
  });
  if (!ok) {
    reason = load_error;
    return nullptr;
  }
  return &driver;
}

}  // namespace axon::cuda
