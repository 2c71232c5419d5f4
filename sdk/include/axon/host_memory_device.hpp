// A device whose memory is the host's, written once for every such plugin
// (a CPU backend, the reference and minimal plugins, test plugins): blocks
// aligned to AXON_ALLOCATION_ALIGNMENT (large ones on huge pages:
// host_blocks.hpp; medium ones packed into huge pages: host_arena.hpp),
// counted (in use, peak: the bytes asked for, not the rounding) and held to
// an optional limit (AXON_MEMORY_LIMIT, --gpu-memory-limit), each freed at
// once (reserved = in use, plus the arena's free ranges); copies are memmove, done when they return, so synchronize() has
// nothing to wait for; streams are tokens (work on any of them is done when
// its call returns) and events are points that are always reached: querying
// or waiting for one reports what synchronize() would (a deferred error of a
// device that queues its validation). Reserving
// host memory up front would only take it
// from the rest of the machine: reserve and growth both allocate on demand.
// A plugin derives from it and adds its kernels (get_kernel, list_ops).
#pragma once

#include <axon/host_arena.hpp>
#include <axon/host_blocks.hpp>
#include <axon/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

namespace axon::sdk {

class HostMemoryDevice : public Device {
 public:
  // name: the device as messages name it ("/device:TOY:0"); limit: the most
  // bytes in use at once (0: none); total: the capacity memory_info reports
  // (0: unknown).
  explicit HostMemoryDevice(std::string name, uint64_t limit = 0, uint64_t total = 0)
      : name_(std::move(name)), limit_(limit), total_(total) {}

  // Called from any host thread: the mutex guards the counts.
  void* allocate(size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (limit_ != 0 && bytes > limit_ - std::min(limit_, in_use_))
      fail(AXON_OUT_OF_MEMORY, format("%s: out of memory: requested %zu bytes, limit %llu bytes, in use %llu bytes",
                                      name_.c_str(), bytes, static_cast<unsigned long long>(limit_),
                                      static_cast<unsigned long long>(in_use_)));
    void* p = HostArena::serves(bytes) ? arena_.allocate(bytes) : allocate_host_block(bytes, kAlign);
    if (p == nullptr)
      fail(AXON_OUT_OF_MEMORY, format("%s: out of memory: requested %zu bytes, the host has none left (in use %llu "
                                      "bytes)", name_.c_str(), bytes, static_cast<unsigned long long>(in_use_)));
    sizes_.emplace(p, bytes);
    in_use_ += bytes;
    peak_ = std::max(peak_, in_use_);
    return p;
  }

  // The host frees a buffer once the last kernel that uses it was called;
  // kernels on host memory are done when they return, so it goes back at once.
  void deallocate(void* p) noexcept override {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return;  // not ours: never free what we did not hand out
    in_use_ -= it->second;
    if (HostArena::serves(it->second))
      arena_.free(p, it->second);
    else
      free_host_block(p, it->second, kAlign);
    sizes_.erase(it);
  }

  bool has_events() const override { return true; }
  axon_stream stream_create() override { return reinterpret_cast<axon_stream>(new Stream()); }
  void stream_destroy(axon_stream stream) noexcept override { delete reinterpret_cast<Stream*>(stream); }
  axon_event event_create() override { return reinterpret_cast<axon_event>(new Event()); }
  void event_destroy(axon_event event) noexcept override { delete reinterpret_cast<Event*>(event); }
  bool event_query(axon_event) override {
    synchronize();
    return true;
  }
  void event_synchronize(axon_event) override { synchronize(); }

  void copy_host_to_device(void* dst, const void* src, size_t n) override { copy(dst, src, n); }
  void copy_device_to_host(void* dst, const void* src, size_t n) override { copy(dst, src, n); }
  void copy_device_to_device(void* dst, const void* src, size_t n) override { copy(dst, src, n); }

  axon_memory_info memory_info() override {
    std::lock_guard<std::mutex> lock(mu_);
    axon_memory_info m{};
    m.struct_size = sizeof m;
    m.in_use = in_use_;
    m.peak_in_use = peak_;
    m.reserved = in_use_ + arena_.idle_bytes();  // no cache but the arena's free ranges
    m.limit = limit_;
    m.total = total_;
    return m;
  }

 private:
  struct Event {};   // work is done when its call returns: nothing to mark
  struct Stream {};  // nor anything to queue
  static constexpr size_t kAlign = AXON_ALLOCATION_ALIGNMENT;  // a cache line: any SIMD load
  static_assert(HostArena::kAlign % kAlign == 0);

  void copy(void* dst, const void* src, size_t n) const {
    if (n == 0) return;
    require(dst != nullptr && src != nullptr, name_ + ": copy with a null pointer");
    std::memmove(dst, src, n);
  }

  const std::string name_;
  const uint64_t limit_, total_;
  std::mutex mu_;
  std::unordered_map<void*, size_t> sizes_;
  HostArena arena_;
  uint64_t in_use_ = 0, peak_ = 0;
};

}  // namespace axon::sdk
