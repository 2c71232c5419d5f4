#include "probe.hpp"

#include <axon/plugin.hpp>

#include <cstdio>
#include <cstdlib>

namespace axon::cuda {

#ifndef AXON_CUDA_MIN_ARCH
#define AXON_CUDA_MIN_ARCH 60
#endif

int minimum_compute_capability() {
  const char* v = std::getenv("AXON_CUDA_MIN_COMPUTE");
  int major = 0, minor = 0;
  if (v != nullptr && std::sscanf(v, "%d.%d", &major, &minor) >= 1 && major > 0) return major * 10 + minor;
  // axon's minimum is 6.0; the kernel library may be built for newer devices
  // only (CUDA 13 compiles for 7.5 and up).
  return AXON_CUDA_MIN_ARCH > 60 ? AXON_CUDA_MIN_ARCH : 60;
}

std::string format_uuid(const unsigned char (&b)[16]) {
  char s[64];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
                b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

namespace {

// Says which CUDA variables shaped what the driver shows, for reasons.
std::string visibility_note() {
  std::string note;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) note += std::string("; CUDA_VISIBLE_DEVICES=\"") + v + "\"";
  return note;
}

}  // namespace

ProbeResult probe_devices() {
  ProbeResult r;
  r.driver = load_driver(r.reason);
  if (r.driver == nullptr) return r;
  const Driver& d = *r.driver;
  if (CUresult e = d.cuInit(0); e != CUDA_SUCCESS) {
    r.reason = "cuInit failed: " + d.error_text(e) + visibility_note();
    return r;
  }
  d.cuDriverGetVersion(&r.driver_version);
  int count = 0;
  if (CUresult e = d.cuDeviceGetCount(&count); e != CUDA_SUCCESS) {
    r.reason = "cuDeviceGetCount failed: " + d.error_text(e);
    return r;
  }
  const int min_cc = minimum_compute_capability();
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (CUresult e = d.cuDeviceGet(&dev, i); e != CUDA_SUCCESS) {
      axon_excluded_device x{};
      x.struct_size = sizeof x;
      x.physical_id = i;
      sdk::copy_string(x.name, "CUDA device " + std::to_string(i));
      sdk::copy_string(x.reason, "cuDeviceGet failed: " + d.error_text(e));
      r.excluded.push_back(x);
      continue;
    }
    GpuInfo g;
    g.ordinal = i;
    char name[256] = {};
    d.cuDeviceGetName(name, sizeof name, dev);
    g.name = name;
    d.cuDeviceGetAttribute(&g.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    d.cuDeviceGetAttribute(&g.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    d.cuDeviceGetAttribute(&g.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    int khz = 0;
    d.cuDeviceGetAttribute(&khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
    g.clock_mhz = khz / 1000;
    size_t total = 0;
    d.cuDeviceTotalMem(&total, dev);
    g.memory_total = total;
    char pci[64] = {};
    if (d.cuDeviceGetPCIBusId(pci, sizeof pci, dev) == CUDA_SUCCESS) g.pci_bus_id = pci;
    CUuuid uuid{};
    if (d.cuDeviceGetUuid && d.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
      unsigned char bytes[16];
      for (int k = 0; k < 16; ++k) bytes[k] = static_cast<unsigned char>(uuid.bytes[k]);
      g.uuid = format_uuid(bytes);
    }
    const int cc = g.cc_major * 10 + g.cc_minor;
    if (cc < min_cc) {
      axon_excluded_device x{};
      x.struct_size = sizeof x;
      x.physical_id = i;
      sdk::copy_string(x.name, g.name);
      sdk::copy_string(x.reason, sdk::format("compute capability %d.%d is below the minimum %d.%d of this build (CUDA ordinal %d, %s)",
                                             g.cc_major, g.cc_minor, min_cc / 10, min_cc % 10, i, g.pci_bus_id.c_str()));
      r.excluded.push_back(x);
      continue;
    }
    r.usable.push_back(std::move(g));
  }
  if (r.usable.empty()) {
    if (count == 0)
      r.reason = "the CUDA driver reports no devices" + visibility_note();
    else
      r.reason = sdk::format("no usable CUDA device: %d found, all excluded", count);
  }
  return r;
}

}  // namespace axon::cuda
