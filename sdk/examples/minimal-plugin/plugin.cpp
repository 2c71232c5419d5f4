// A minimal axon backend: one "TOY" device whose memory is host memory, with
// the few float32 kernels of kernels.cpp. Every other op runs on the CPU
// device through axon's soft placement.
#include "kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace toy {

using namespace axon::sdk;

class ToyDevice final : public Device {
 public:
  // Host memory is shared with the rest of the machine, so reserving it up
  // front would only take it from others: reserve and growth both allocate on
  // demand. A limit (--gpu-memory-limit) is enforced.
  explicit ToyDevice(const axon_device_config& config)
      : index_(config.logical_index),
        limit_(config.memory_mode == AXON_MEMORY_LIMIT ? config.memory_limit_bytes : 0) {}

  // Called from any host thread: the mutex guards the counts.
  void* allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_ != 0 && bytes > limit_ - in_use_)
      fail(AXON_OUT_OF_MEMORY, format("/device:TOY:%d: out of memory: requested %zu bytes, limit %llu bytes, "
                                      "in use %llu bytes", index_, bytes, static_cast<unsigned long long>(limit_),
                                      static_cast<unsigned long long>(in_use_)));
    // aligned_alloc wants a multiple of the alignment, and never 0 bytes.
    const size_t rounded = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
    std::unique_ptr<void, decltype(&std::free)> block(std::aligned_alloc(kAlign, rounded), &std::free);
    if (block == nullptr)
      fail(AXON_OUT_OF_MEMORY, format("/device:TOY:%d: out of memory: requested %zu bytes, the host has none left "
                                      "(in use %llu bytes)", index_, bytes, static_cast<unsigned long long>(in_use_)));
    sizes_.emplace(block.get(), bytes);
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
    return block.release();
  }

  // The host frees a buffer once the last kernel that uses it has been
  // enqueued. Kernels here are done when they return, so the memory can go
  // back at once; a device with a queue would free it when that work is done.
  void deallocate(void* p) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return;
    in_use_ -= it->second;
    sizes_.erase(it);
    std::free(p);
  }

  // Nothing is queued, so each copy is done when it returns and has no
  // earlier error to report; synchronize() keeps the SDK's empty default.
  void copy_host_to_device(void* dst, const void* src, size_t n) override { copy(dst, src, n); }
  void copy_device_to_host(void* dst, const void* src, size_t n) override { copy(dst, src, n); }
  void copy_device_to_device(void* dst, const void* src, size_t n) override { copy(dst, src, n); }

  axon_kernel_fn get_kernel(const char* op, axon_dtype dtype) override { return kernel_table().find(op, dtype); }
  const char* const* list_ops() override { return kernel_table().list(); }

  axon_memory_info memory_info() override {
    std::lock_guard<std::mutex> lock(mu_);
    axon_memory_info m{};
    m.struct_size = sizeof m;
    m.in_use = in_use_;
    m.peak_in_use = peak_;
    m.reserved = in_use_;  // no cache: every freed byte goes back to the host
    m.limit = limit_;
    return m;
  }

 private:
  static constexpr size_t kAlign = 64;  // a cache line; enough for any SIMD load

  static void copy(void* dst, const void* src, size_t n) {
    if (n == 0) return;
    require(dst != nullptr && src != nullptr, "TOY: copy with a null pointer");
    std::memmove(dst, src, n);
  }

  const int index_;
  const uint64_t limit_;  // 0: none
  std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  uint64_t in_use_ = 0, peak_ = 0;
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
