#include "device.hpp"

#include "kernels.hpp"

#include <cstring>

namespace axon::cpu {

using axon::sdk::fail;
using axon::sdk::format;

float* Scratch::get(size_t floats) {
  if (floats > cap_) {
    size_t bytes = (floats * sizeof(float) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) fail(AXON_OUT_OF_MEMORY, format("CPU: cannot allocate %zu bytes of scratch", bytes));
    std::free(p_);
    p_ = static_cast<float*>(p);
    cap_ = floats;
  }
  return p_;
}

CpuDevice::CpuDevice(int logical_index, int threads, uint64_t memory_total)
    : index_(logical_index), pool_(threads), scratch_(static_cast<size_t>(pool_.size())),
      tiles_(static_cast<size_t>(pool_.size())), total_(memory_total) {}

void* CpuDevice::allocate(size_t bytes) {
  size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  std::lock_guard<std::mutex> lock(mu_);
  if (p == nullptr)
    fail(AXON_OUT_OF_MEMORY, format("/device:CPU:%d: cannot allocate %zu bytes (in use %llu bytes)", index_, bytes,
                                    static_cast<unsigned long long>(in_use_)));
  sizes_[p] = bytes;
  in_use_ += bytes;
  if (in_use_ > peak_) peak_ = in_use_;
  return p;
}

void CpuDevice::deallocate(void* p) noexcept {
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(p);
    if (it != sizes_.end()) {
      in_use_ -= it->second;
      sizes_.erase(it);
    }
  }
  std::free(p);
}

namespace {
void copy_bytes(void* dst, const void* src, size_t n) {
  if (n == 0) return;
  if (dst == nullptr || src == nullptr) fail(AXON_INVALID_ARGUMENT, "CPU: copy with a null pointer");
  std::memmove(dst, src, n);
}
}  // namespace

void CpuDevice::copy_host_to_device(void* dst, const void* src, size_t n) { copy_bytes(dst, src, n); }
void CpuDevice::copy_device_to_host(void* dst, const void* src, size_t n) { copy_bytes(dst, src, n); }
void CpuDevice::copy_device_to_device(void* dst, const void* src, size_t n) { copy_bytes(dst, src, n); }

axon_kernel_fn CpuDevice::get_kernel(const char* op, axon_dtype dtype) { return kernel_table().find(op, dtype); }
const char* const* CpuDevice::list_ops() { return kernel_table().list(); }

axon_memory_info CpuDevice::memory_info() {
  std::lock_guard<std::mutex> lock(mu_);
  axon_memory_info m{};
  m.struct_size = sizeof m;
  m.in_use = in_use_;
  m.peak_in_use = peak_;
  m.reserved = in_use_;
  m.total = total_;
  return m;
}

}  // namespace axon::cpu
