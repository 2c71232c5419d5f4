// Host memory blocks for a host-memory device's tensors and a plugin's
// scratch. Small blocks come from the C allocator, aligned to `align`; blocks
// of a megabyte or more get their own mapping, aligned and rounded to 2 MiB,
// with transparent huge pages asked for (Linux's madvise mode; elsewhere, or
// where the kernel declines, they are ordinary pages). A training step reads
// tens of megabytes of activations, more than the TLB maps in 4 KiB pages:
// page walks were a large part of memory-bound kernels on cold data (in a
// ResNet's step on 2 cores of an EPYC, its batch-normalization gradients
// 0.28-0.31 -> 0.21-0.27 ms a call; its epoch 4-7% faster).
// Rounding costs less than 2 MiB a block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#if defined(__linux__)
#include <sys/mman.h>
#endif

// Under AddressSanitizer every block comes from the C allocator, so that its
// redzones guard large tensors too.
#if defined(__SANITIZE_ADDRESS__)
#define AXON_HOST_BLOCKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AXON_HOST_BLOCKS_ASAN 1
#endif
#endif
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(AXON_HOST_BLOCKS_ASAN)
#define AXON_HOST_HUGE_BLOCKS 1
#endif

namespace axon::sdk {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kHugeBlockFrom = size_t{1} << 20;  // blocks this large get huge pages

// The bytes a block of `bytes` takes from the host: what free_host_block
// needs to be told.
inline size_t host_block_bytes(size_t bytes, size_t align) {
#ifdef AXON_HOST_HUGE_BLOCKS
  if (bytes >= kHugeBlockFrom) return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
#endif
  return bytes == 0 ? align : (bytes + align - 1) / align * align;
}

// A block of at least `bytes` (0 allowed) aligned to `align` (a power of two
// up to 2 MiB), or nullptr when the host has none.
inline void* allocate_host_block(size_t bytes, size_t align) {
  const size_t length = host_block_bytes(bytes, align);
  if (length < bytes) return nullptr;  // overflow
#ifdef AXON_HOST_HUGE_BLOCKS
  if (bytes >= kHugeBlockFrom) {
    if (length > SIZE_MAX - kHugePageBytes) return nullptr;
    // A mapping one page longer, trimmed to a 2 MiB-aligned range.
    void* raw = mmap(nullptr, length + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    if (aligned > start) munmap(raw, aligned - start);
    if (const uintptr_t tail = start + length + kHugePageBytes - (aligned + length); tail > 0)
      munmap(reinterpret_cast<void*>(aligned + length), tail);
    void* p = reinterpret_cast<void*>(aligned);
    madvise(p, length, MADV_HUGEPAGE);  // advice: ordinary pages if declined
    return p;
  }
#endif
  return std::aligned_alloc(align, length);
}

// Frees a block of allocate_host_block(bytes, align).
inline void free_host_block(void* p, size_t bytes, size_t align) noexcept {
  if (p == nullptr) return;
#ifdef AXON_HOST_HUGE_BLOCKS
  if (bytes >= kHugeBlockFrom) {
    munmap(p, host_block_bytes(bytes, align));
    return;
  }
#endif
  (void)bytes, (void)align;
  std::free(p);
}

}  // namespace axon::sdk
