// Medium host blocks (64 KiB up to host_blocks.hpp's megabyte) packed into
// chunks of one 2 MiB huge page each, so that they too are mapped by few TLB
// entries without each taking a whole huge page. A ResNet's 7x7x64
// activations (784 KiB at batch 64) sat on 4 KiB pages, and its step reads
// tens of megabytes between two uses of one: the kernels on them ran at a
// third to a half of their speed on the same data alone, as the page walks
// missed (in the ResNet's step on 2 cores of a Xeon VM, its 7x7x64 batch
// norms 81-155 -> 41-81 us a call). Blocks a megabyte or more keep their own
// mappings (host_blocks.hpp); smaller ones are the C allocator's.
//
// First fit over the chunks in address order, freed ranges merged with
// their neighbours; a chunk left empty is unmapped unless it is the only
// empty one (a block freed and taken again, step after step, would
// otherwise fault in a fresh huge page each time). Not thread-safe: the
// owner locks (HostMemoryDevice's mutex).
#pragma once

#include <axon/host_blocks.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

namespace axon::sdk {

class HostArena {
 public:
  static constexpr size_t kChunkBytes = kHugePageBytes;
  static constexpr size_t kFrom = size_t{64} << 10;
  static constexpr size_t kAlign = 64;  // every block's offset and length: a cache line

  // Whether blocks of `bytes` come from the arena (never under
  // AddressSanitizer, nor where the host has no huge-page advice).
  static constexpr bool serves(size_t bytes) {
#ifdef AXON_HOST_HUGE_BLOCKS
    return bytes >= kFrom && bytes < kHugeBlockFrom;
#else
    (void)bytes;
    return false;
#endif
  }

  HostArena() = default;
  HostArena(const HostArena&) = delete;
  HostArena& operator=(const HostArena&) = delete;
  ~HostArena() {
    for (auto& [base, chunk] : chunks_) free_host_block(base, kChunkBytes, kChunkBytes);
  }

  // A block of `bytes` (serves(bytes)) aligned to kAlign, or nullptr when
  // the host has no chunk left to give.
  void* allocate(size_t bytes) {
    const size_t length = rounded(bytes);
    for (auto& [base, chunk] : chunks_)
      if (void* p = take(base, chunk, length)) return p;
    char* base = static_cast<char*>(allocate_host_block(kChunkBytes, kChunkBytes));
    if (base == nullptr) return nullptr;
    Chunk& chunk = chunks_[base];
    chunk.free.emplace(0, kChunkBytes);
    return take(base, chunk, length);
  }

  // Whether p is a block of this arena; if so, it goes back (bytes as
  // allocated).
  bool free(void* p, size_t bytes) {
    char* at = static_cast<char*>(p);
    auto it = chunks_.upper_bound(at);
    if (it == chunks_.begin()) return false;
    --it;
    if (at >= it->first + kChunkBytes) return false;
    Chunk& chunk = it->second;
    size_t offset = static_cast<size_t>(at - it->first), length = rounded(bytes);
    chunk.used -= length;
    auto next = chunk.free.lower_bound(offset);
    if (next != chunk.free.end() && offset + length == next->first) {  // merge with the range after
      length += next->second;
      next = chunk.free.erase(next);
    }
    if (next != chunk.free.begin()) {
      auto before = std::prev(next);
      if (before->first + before->second == offset) {  // and with the range before
        before->second += length;
        return release_if_empty(it), true;
      }
    }
    chunk.free.emplace(offset, length);
    release_if_empty(it);
    return true;
  }

  // Chunks held from the host, and the bytes of them no block uses.
  size_t chunks() const { return chunks_.size(); }
  size_t idle_bytes() const {
    size_t idle = 0;
    for (const auto& [base, chunk] : chunks_) idle += kChunkBytes - chunk.used;
    return idle;
  }

 private:
  struct Chunk {
    std::map<size_t, size_t> free;  // offset -> length, disjoint and never adjacent
    size_t used = 0;
  };

  static size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

  // The first free range of the chunk that holds `length` bytes, or nullptr.
  static void* take(char* base, Chunk& chunk, size_t length) {
    for (auto it = chunk.free.begin(); it != chunk.free.end(); ++it) {
      if (it->second < length) continue;
      const size_t offset = it->first, left = it->second - length;
      chunk.free.erase(it);
      if (left > 0) chunk.free.emplace(offset + length, left);
      chunk.used += length;
      return base + offset;
    }
    return nullptr;
  }

  void release_if_empty(std::map<char*, Chunk>::iterator it) {
    if (it->second.used != 0) return;
    for (const auto& [base, chunk] : chunks_)
      if (base != it->first && chunk.used == 0) {  // another one stays for the next block
        free_host_block(it->first, kChunkBytes, kChunkBytes);
        chunks_.erase(it);
        return;
      }
  }

  std::map<char*, Chunk> chunks_;
};

}  // namespace axon::sdk
