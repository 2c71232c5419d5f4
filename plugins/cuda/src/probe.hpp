// Enumerates the CUDA devices the driver shows (it applies CUDA_VISIBLE_DEVICES
// and CUDA_DEVICE_ORDER itself) and splits them into usable and excluded.
#pragma once

#include <axon/plugin_abi.h>

#include "cuda_driver.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace axon::cuda {

struct GpuInfo {
  int ordinal = 0;  // the driver's ordinal, also cudart's
  std::string name;
  int cc_major = 0, cc_minor = 0;
  uint64_t memory_total = 0;
  std::string pci_bus_id;
  std::string uuid;
  int multiprocessors = 0;
  int clock_mhz = 0;
};

struct ProbeResult {
  const Driver* driver = nullptr;
  int driver_version = 0;  // 13000 for 13.0
  std::vector<GpuInfo> usable;
  std::vector<axon_excluded_device> excluded;
  std::string reason;  // why `usable` is empty, else ""
};

// Minimum compute capability, as major*10+minor (60 = 6.0, or the lowest architecture
// the kernel library is built for when higher). AXON_CUDA_MIN_COMPUTE
// ("9.1") raises it, which lets a test exercise the exclusion path on any GPU.
int minimum_compute_capability();

ProbeResult probe_devices();

// "GPU-6f1b2c3d-..." from the driver's 16 bytes.
std::string format_uuid(const unsigned char (&bytes)[16]);

}  // namespace axon::cuda
