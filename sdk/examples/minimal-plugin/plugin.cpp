// A minimal axon backend: one "TOY" device whose memory is host memory, with
// the few float32 kernels of kernels.cpp. Every other op runs on the CPU
// device through axon's soft placement.
#include "kernels.hpp"

#include <axon/host_memory_device.hpp>

#include <memory>

namespace toy {

using namespace axon::sdk;

// TOY's memory is the host's, so its device is the SDK's HostMemoryDevice
// (aligned blocks, counted, the limit of --gpu-memory-limit enforced; copies
// done when they return) plus this plugin's kernels. A device with memory
// of its own implements allocate, deallocate, the copies and memory_info
// itself (docs/plugin-guide.md, "Memory").
class ToyDevice final : public HostMemoryDevice {
 public:
  explicit ToyDevice(const axon_device_config& config)
      : HostMemoryDevice(format("/device:TOY:%d", config.logical_index),
                         config.memory_mode == AXON_MEMORY_LIMIT ? config.memory_limit_bytes : 0) {}

  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override { return kernel_table().find(op, dtype); }
  const char* const* list_ops() override { return kernel_table().list(); }
};

class ToyPlugin final : public Plugin {
 public:
  // Called for every listing: cheap, and never fails.
  int device_count() noexcept override { return 1; }

  axon_device_props device_props(int physical_id) override {
    require(physical_id == 0, format("toy: no device %d (it has one)", physical_id));
    axon_device_props p{};
    copy_string(p.name, "axon toy device (host memory)");
    p.physical_id = 0;
    p.threads = 1;
    p.host_memory = 1;  // allocate() hands out host memory (HostMemoryDevice)
    copy_string(p.description, "memory=host");
    return p;
  }

  // Called once, on the device's first use.
  std::unique_ptr<Device> open_device(int physical_id, const axon_device_config& config) override {
    require(physical_id == 0, format("toy: no device %d (it has one)", physical_id));
    log(AXON_LOG_DEBUG, format("opening /device:TOY:%d, memory limit %llu bytes (0: none)", config.logical_index,
                               static_cast<unsigned long long>(
                                   config.memory_mode == AXON_MEMORY_LIMIT ? config.memory_limit_bytes : 0)));
    return std::make_unique<ToyDevice>(config);
  }
};

}  // namespace toy

// The entry point: plugin object, name (log tag), version, device type (the
// TYPE of /device:TYPE:N), priority (GPU 200 > TOY 150 > CPU 100).
AXON_DEFINE_PLUGIN(new toy::ToyPlugin(), "toy", "0.1.0", "TOY", 150)
