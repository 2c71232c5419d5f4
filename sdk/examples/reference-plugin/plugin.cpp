// The reference backend: one "REF" device backed by ordinary host memory.
// Written against the SDK alone; the kernels live in kernels.cpp.
#include "kernels.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace ref {

using namespace axon::sdk;

class RefDevice final : public Device {
 public:
  void* allocate(size_t bytes) override {
    // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes.
    size_t rounded = (bytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    void* p = std::aligned_alloc(64, rounded);
    if (p == nullptr)
      fail(AXON_OUT_OF_MEMORY, format("REF:0: cannot allocate %zu bytes (in use %llu)", bytes,
                                      static_cast<unsigned long long>(in_use_)));
    std::lock_guard<std::mutex> lock(mu_);
    sizes_[p] = bytes;
    in_use_ += bytes;
    if (in_use_ > peak_) peak_ = in_use_;
    return p;
  }
  void deallocate(void* p) noexcept override {
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
    m.reserved = in_use_;
    return m;
  }

 private:
  static void copy(void* dst, const void* src, size_t n) {
    if (n == 0) return;
    require(dst != nullptr && src != nullptr, "REF: copy with a null pointer");
    std::memmove(dst, src, n);
  }
  std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  uint64_t in_use_ = 0, peak_ = 0;
};

class RefPlugin final : public Plugin {
 public:
  int device_count() noexcept override { return 1; }
  axon_device_props device_props(int physical_id) override {
    require(physical_id == 0, format("reference: no device %d (it has one)", physical_id));
    axon_device_props p{};
    p.struct_size = sizeof p;
    copy_string(p.name, "axon reference device (naive loops)");
    p.physical_id = 0;
    p.threads = 1;
    copy_string(p.description, "purpose=numerical oracle, memory=host");
    return p;
  }
  std::unique_ptr<Device> open_device(int physical_id, const axon_device_config&) override {
    require(physical_id == 0, format("reference: no device %d (it has one)", physical_id));
    return std::make_unique<RefDevice>();
  }
};

}  // namespace ref

AXON_DEFINE_PLUGIN(new ref::RefPlugin(), "reference", "0.1.0", "REF", 10)
