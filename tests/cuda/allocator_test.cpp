// The CUDA plugin's caching allocator, on host memory: its bookkeeping (best
// fit, splitting, coalescing, reuse, the three memory modes, the numbers in
// memory_info and in the out-of-memory message) needs no GPU.
#include <catch2/catch.hpp>

#include "allocator.hpp"

#include <axon/plugin.hpp>

#include <cstdlib>
#include <map>
#include <vector>
#include <set>
#include <string>

using axon::cuda::CachingAllocator;

namespace {

constexpr size_t MiB = 1u << 20;

// Host memory with a capacity, standing in for cudaMalloc/cudaFree.
class FakeDevice : public axon::cuda::SegmentSource {
 public:
  explicit FakeDevice(size_t capacity) : capacity_(capacity) {}
  ~FakeDevice() override { CHECK(live_.empty()); }
  void* acquire(size_t bytes) noexcept override {
    if (used_ + bytes > capacity_) return nullptr;
    void* p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (p) {
      used_ += bytes;
      live_.insert(p);
      sizes_[p] = bytes;
      ++acquires;
    }
    return p;
  }
  void release(void* p) noexcept override {
    used_ -= sizes_[p];
    live_.erase(p);
    std::free(p);
    ++releases;
  }
  size_t used() const { return used_; }
  int acquires = 0, releases = 0;

 private:
  size_t capacity_, used_ = 0;
  std::set<void*> live_;
  std::map<void*, size_t> sizes_;
};

std::string oom_message(CachingAllocator& a, size_t bytes) {
  try {
    a.allocate(bytes);
  } catch (const axon::sdk::Error& e) {
    CHECK(e.code() == AXON_OUT_OF_MEMORY);
    return e.what();
  }
  FAIL("no out-of-memory error for " << bytes << " bytes");
  return {};
}

}  // namespace

TEST_CASE("growth: blocks are cached, reused, split and coalesced", "[cuda][allocator]") {
  FakeDevice dev(64 * MiB);
  {
    CachingAllocator a(dev, AXON_MEMORY_GROWTH, 0, 64 * MiB, "/device:GPU:0 (fake)");
    CHECK(a.allocate(0) == nullptr);
    void* p = a.allocate(1000);
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % CachingAllocator::kAlignment == 0);
    auto m = a.info();
    CHECK(m.in_use == 1024);  // rounded to the 512-byte alignment
    CHECK(m.reserved == 2 * MiB);
    void* q = a.allocate(1000);
    CHECK(q == static_cast<char*>(p) + 1024);  // split from the same segment
    CHECK(dev.acquires == 1);
    a.deallocate(p);
    a.deallocate(q);
    m = a.info();
    CHECK(m.in_use == 0);
    CHECK(m.peak_in_use == 2048);
    CHECK(m.largest_free_block == 2 * MiB);  // coalesced back into one block
    void* r = a.allocate(2 * MiB);
    CHECK(r == p);  // the whole cached segment is reused
    CHECK(dev.acquires == 1);
    a.deallocate(r);
    a.release_cached();
    CHECK(a.info().reserved == 0);
    CHECK(dev.releases == 1);
  }
  CHECK(dev.used() == 0);
}

TEST_CASE("growth: cached segments are given back before reporting out of memory", "[cuda][allocator]") {
  FakeDevice dev(10 * MiB);
  CachingAllocator a(dev, AXON_MEMORY_GROWTH, 0, 10 * MiB, "gpu");
  void* p = a.allocate(6 * MiB);
  a.deallocate(p);  // cached: 6 MiB held, 4 MiB left on the device
  void* q = a.allocate(8 * MiB);  // needs the cache released first
  CHECK(q != nullptr);
  CHECK(a.info().reserved == 8 * MiB);
  a.deallocate(q);
}

TEST_CASE("limit: never holds more than the limit; the message has the numbers", "[cuda][allocator]") {
  FakeDevice dev(100 * MiB);
  CachingAllocator a(dev, AXON_MEMORY_LIMIT, 10 * MiB, 100 * MiB, "/device:GPU:0 (fake)");
  void* p = a.allocate(6 * MiB);
  const std::string msg = oom_message(a, 6 * MiB);
  CHECK(a.info().reserved <= 10 * MiB);
  CHECK(msg.find("requested 6.00 MiB (6291456 bytes)") != std::string::npos);
  CHECK(msg.find("/device:GPU:0 (fake)") != std::string::npos);
  CHECK(msg.find("limit 10.00 MiB") != std::string::npos);
  CHECK(msg.find("in use 6.00 MiB") != std::string::npos);
  CHECK(msg.find("reserved 6.00 MiB") != std::string::npos);
  CHECK(msg.find("largest free block") != std::string::npos);
  CHECK(a.info().limit == 10 * MiB);
  // A request that fits the limit only without the 2 MiB rounding still fits.
  void* q = a.allocate(3 * MiB + 512);
  CHECK(q != nullptr);
  CHECK(a.info().reserved <= 10 * MiB);
  a.deallocate(p);
  a.deallocate(q);
  void* r = a.allocate(9 * MiB);  // after releasing the cache
  CHECK(r != nullptr);
  a.deallocate(r);
}

TEST_CASE("reserve: one segment at start, no growth beyond it", "[cuda][allocator]") {
  FakeDevice dev(100 * MiB);
  CachingAllocator a(dev, AXON_MEMORY_RESERVE, 0, 100 * MiB, "gpu");
  a.reserve(20 * MiB);
  CHECK(a.info().reserved == 20 * MiB);
  std::vector<void*> ps;
  for (int i = 0; i < 19; ++i) ps.push_back(a.allocate(MiB));
  CHECK(dev.acquires == 1);
  const std::string msg = oom_message(a, 2 * MiB);
  CHECK(msg.find("reserved 20.00 MiB") != std::string::npos);
  CHECK(msg.find("largest free block 1.00 MiB") != std::string::npos);
  // Free every other block: only the last one joins the free 1 MiB tail, so
  // 3 MiB does not fit although 11 MiB are free...
  for (size_t i = 0; i < ps.size(); i += 2) a.deallocate(ps[i]);
  CHECK(a.info().largest_free_block == 2 * MiB);
  CHECK(a.info().in_use == 9 * MiB);
  oom_message(a, 3 * MiB);
  // ...until the neighbours are freed too and blocks coalesce.
  for (size_t i = 1; i < ps.size(); i += 2) a.deallocate(ps[i]);
  CHECK(a.info().largest_free_block == 20 * MiB);
  CHECK(a.info().in_use == 0);
  a.deallocate(nullptr);
}

TEST_CASE("reserve: a reservation the device cannot give is an error", "[cuda][allocator]") {
  FakeDevice dev(10 * MiB);
  CachingAllocator a(dev, AXON_MEMORY_RESERVE, 0, 10 * MiB, "gpu");
  CHECK_THROWS_AS(a.reserve(20 * MiB), axon::sdk::Error);
}
