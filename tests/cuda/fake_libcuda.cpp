// A stand-in for the NVIDIA driver (built as libcuda.so.1 in its own folder)
// so the CUDA plugin's probing, exclusion and kernel-library paths run on
// machines without a GPU. Devices come from FAKE_CUDA_DEVICES:
//   "NAME:MAJOR.MINOR:BYTES;NAME:MAJOR.MINOR:BYTES"   ("" = cuInit reports no device)
// and CUDA_VISIBLE_DEVICES selects and orders them as NVIDIA's driver does
// with indices: the listed ones in the order given, up to the first entry
// that is not a valid index ("" or an invalid first entry: none).
// Only the entry points the plugin's probe uses exist; cudart, which wants
// many more, finds this driver unusable, which is itself a path under test.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct FakeDevice {
  std::string name;
  int major = 0, minor = 0;
  size_t bytes = 0;
};

const std::vector<FakeDevice>& devices() {
  static const std::vector<FakeDevice> list = [] {
    std::vector<FakeDevice> out;
    const char* spec = std::getenv("FAKE_CUDA_DEVICES");
    std::string s = spec ? spec : "";
    size_t pos = 0;
    while (pos < s.size()) {
      size_t end = s.find(';', pos);
      if (end == std::string::npos) end = s.size();
      std::string item = s.substr(pos, end - pos);
      pos = end + 1;
      size_t a = item.find(':'), b = item.rfind(':');
      if (a == std::string::npos || a == b) continue;
      FakeDevice d;
      d.name = item.substr(0, a);
      std::sscanf(item.c_str() + a + 1, "%d.%d", &d.major, &d.minor);
      d.bytes = std::strtoull(item.c_str() + b + 1, nullptr, 10);
      out.push_back(d);
    }
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (visible == nullptr) return out;
    std::vector<FakeDevice> shown;
    std::vector<bool> taken(out.size(), false);
    const std::string v = visible;
    for (size_t p = 0; p <= v.size();) {
      size_t end = v.find(',', p);
      if (end == std::string::npos) end = v.size();
      const std::string entry = v.substr(p, end - p);
      char* rest = nullptr;
      const long i = std::strtol(entry.c_str(), &rest, 10);
      if (entry.empty() || *rest != '\0' || i < 0 || i >= static_cast<long>(out.size()) || taken[static_cast<size_t>(i)])
        break;
      taken[static_cast<size_t>(i)] = true;
      shown.push_back(out[static_cast<size_t>(i)]);
      p = end + 1;
    }
    return shown;
  }();
  return list;
}

constexpr int kSuccess = 0, kInvalidValue = 1, kNotInitialized = 3, kNoDevice = 100, kInvalidDevice = 101;
bool initialised = false;

bool valid(int dev) { return dev >= 0 && dev < static_cast<int>(devices().size()); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuInit(unsigned) {
  if (devices().empty()) return kNoDevice;
  initialised = true;
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDriverGetVersion(int* v) {
  *v = 13000;
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceGetCount(int* n) {
  if (!initialised) return kNotInitialized;
  *n = static_cast<int>(devices().size());
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceGet(int* dev, int ordinal) {
  if (!valid(ordinal)) return kInvalidDevice;
  *dev = ordinal;
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceGetName(char* name, int len, int dev) {
  if (!valid(dev)) return kInvalidDevice;
  std::snprintf(name, static_cast<size_t>(len), "%s", devices()[dev].name.c_str());
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceGetAttribute(int* v, int attr, int dev) {
  if (!valid(dev)) return kInvalidDevice;
  switch (attr) {
    case 75: *v = devices()[dev].major; break;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
    case 76: *v = devices()[dev].minor; break;  // ..._MINOR
    case 16: *v = 132; break;                   // MULTIPROCESSOR_COUNT
    case 13: *v = 1980000; break;               // CLOCK_RATE (kHz)
    default: return kInvalidValue;
  }
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceTotalMem_v2(size_t* bytes, int dev) {
  if (!valid(dev)) return kInvalidDevice;
  *bytes = devices()[dev].bytes;
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceGetPCIBusId(char* id, int len, int dev) {
  if (!valid(dev)) return kInvalidDevice;
  std::snprintf(id, static_cast<size_t>(len), "0000:%02X:00.0", 0x10 + dev);
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDeviceGetUuid_v2(unsigned char* uuid, int dev) {
  if (!valid(dev)) return kInvalidDevice;
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(0x10 * dev + i);
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  if (!valid(dev)) return kInvalidDevice;
  *ctx = reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 + dev));
  return kSuccess;
}
__attribute__((visibility("default"))) int cuDevicePrimaryCtxRelease_v2(int dev) { return valid(dev) ? kSuccess : kInvalidDevice; }
static int current = -1;
__attribute__((visibility("default"))) int cuCtxPushCurrent_v2(void* ctx) {
  current = static_cast<int>(reinterpret_cast<uintptr_t>(ctx) - 0x1000);
  return kSuccess;
}
__attribute__((visibility("default"))) int cuCtxPopCurrent_v2(void** ctx) {
  if (ctx) *ctx = reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 + current));
  current = -1;
  return kSuccess;
}
__attribute__((visibility("default"))) int cuMemGetInfo_v2(size_t* free, size_t* total) {
  if (!valid(current)) return kInvalidValue;
  *total = devices()[current].bytes;
  *free = *total - *total / 100;
  return kSuccess;
}
__attribute__((visibility("default"))) int cuGetErrorName(int e, const char** s) {
  *s = e == kNoDevice ? "CUDA_ERROR_NO_DEVICE" : e == kInvalidDevice ? "CUDA_ERROR_INVALID_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return kSuccess;
}
__attribute__((visibility("default"))) int cuGetErrorString(int e, const char** s) {
  *s = e == kNoDevice ? "no CUDA-capable device is detected" : "fake driver error";
  return kSuccess;
}

}  // extern "C"
