// A caching, best-fit allocator over large device segments, with TensorFlow's
// three policies: reserve most free memory up front, grow on demand, or grow
// up to a limit. Freed blocks are cached and reused; neighbours coalesce.
//
// All device work of one device runs on one stream and the host frees a block
// only after enqueuing its last use, so reusing a freed block for later work on
// that stream is ordered correctly without events (stream-ordered reuse).
//
// The allocator is plain host code over a SegmentSource, so its bookkeeping is
// tested on machines without a GPU (tests/cuda/allocator_test.cpp).
#pragma once

#include <axon/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace axon::cuda {

// Where segments come from (cudaMalloc/cudaFree on a GPU).
class SegmentSource {
 public:
  virtual ~SegmentSource() = default;
  virtual void* acquire(size_t bytes) noexcept = 0;  // nullptr when out of memory
  virtual void release(void* p) noexcept = 0;
};

class CachingAllocator {
 public:
  static constexpr size_t kAlignment = 512;           // >= cuDNN's and cuBLAS's needs
  static constexpr size_t kSegmentGranule = 2u << 20;  // growth segments are multiples of 2 MiB

  // `limit` is used by AXON_MEMORY_LIMIT (and caps the reservation in
  // AXON_MEMORY_RESERVE when non-zero); `total` is the device capacity.
  CachingAllocator(SegmentSource& source, axon_memory_mode mode, uint64_t limit, uint64_t total, std::string label);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Reserve mode: takes one segment of `bytes` now. Throws Error on failure.
  void reserve(size_t bytes);

  // Throws axon::sdk::Error(AXON_OUT_OF_MEMORY) with requested, device, limit,
  // in use, reserved and largest free block. Returns nullptr for 0 bytes.
  void* allocate(size_t bytes);
  void deallocate(void* p) noexcept;

  // Returns cached segments that hold no allocation to the source.
  void release_cached() noexcept;

  axon_memory_info info() const;
  axon_memory_mode mode() const { return mode_; }

  static std::string human(uint64_t bytes);  // "1.50 GiB"

 private:
  struct Segment;
  struct Block {
    char* ptr;
    size_t size;
    bool free;
    Segment* segment;
    Block* prev;  // neighbours inside the segment, by address
    Block* next;
  };
  struct Segment {
    char* base;
    size_t size;
    Block* first;
  };

  Block* take_free(size_t size);        // best fit or nullptr
  Block* add_segment(size_t size);      // one free block spanning a new segment, or nullptr
  void release_segment_if_empty(Segment* s);
  void insert_free(Block* b);
  void erase_free(Block* b);
  uint64_t largest_free() const;
  std::string oom_message(size_t requested) const;

  SegmentSource& source_;
  const axon_memory_mode mode_;
  const uint64_t limit_;
  const uint64_t total_;
  const std::string label_;

  mutable std::mutex mu_;
  std::set<std::pair<size_t, char*>> free_;  // (size, address): best fit by lower_bound
  std::unordered_map<char*, Block*> blocks_;  // every block, free or not, by address
  std::vector<Segment*> segments_;
  uint64_t in_use_ = 0, peak_ = 0, reserved_ = 0;
};

}  // namespace axon::cuda
