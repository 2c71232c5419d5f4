#include "device.hpp"

#include "kernels.hpp"

namespace axon::cpu {

using axon::sdk::fail;
using axon::sdk::format;

void Scratch::release() noexcept {
  sdk::free_host_block(p_, cap_ * sizeof(float), 64);
  p_ = nullptr;
  cap_ = 0;
}

float* Scratch::get(size_t floats) {
  if (floats > cap_) {
    const size_t bytes = floats * sizeof(float);
    void* p = sdk::allocate_host_block(bytes, 64);
    if (p == nullptr) fail(AXON_OUT_OF_MEMORY, format("CPU: cannot allocate %zu bytes of scratch", bytes));
    release();
    p_ = static_cast<float*>(p);
    cap_ = floats;
  }
  return p_;
}

CpuDevice::CpuDevice(int logical_index, int threads, uint64_t memory_total)
    : HostMemoryDevice(format("/device:CPU:%d", logical_index), 0, memory_total),
      pool_(threads, ThreadPool::wait_from_environment()),
      scratch_(static_cast<size_t>(pool_.size())), tiles_(static_cast<size_t>(pool_.size())) {}

axon_kernel_fn CpuDevice::get_kernel(const char* op, axon_dtype dtype) { return kernel_table().find(op, dtype); }
const char* const* CpuDevice::list_ops() { return kernel_table().list(); }

}  // namespace axon::cpu
