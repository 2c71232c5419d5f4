// The reference backend: one "REF" device backed by ordinary host memory.
// Written against the SDK alone; the kernels live in kernels.cpp.
#include "kernels.hpp"

#include <axon/host_memory_device.hpp>

#include <memory>

namespace ref {

using namespace axon::sdk;

// Host memory (HostMemoryDevice) and the reference kernels.
class RefDevice final : public HostMemoryDevice {
 public:
  RefDevice() : HostMemoryDevice("/device:REF:0") {}
  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override { return kernel_table().find(op, dtype); }
  const char* const* list_ops() override { return kernel_table().list(); }
};

class RefPlugin final : public Plugin {
 public:
  int device_count() noexcept override { return 1; }
  axon_device_props device_props(int physical_id) override {
    require(physical_id == 0, format("reference: no device %d (it has one)", physical_id));
    axon_device_props p{};
    copy_string(p.name, "axon reference device (naive loops)");
    p.physical_id = 0;
    p.threads = 1;
    copy_string(p.description, "purpose=numerical oracle, memory=host");
    p.host_memory = 1;
    return p;
  }
  std::unique_ptr<Device> open_device(int physical_id, const axon_device_config&) override {
    require(physical_id == 0, format("reference: no device %d (it has one)", physical_id));
    return std::make_unique<RefDevice>();
  }
};

}  // namespace ref

AXON_DEFINE_PLUGIN(new ref::RefPlugin(), "reference", "0.1.0", "REF", 10)
