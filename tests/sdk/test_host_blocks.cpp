// axon/host_blocks.hpp and host_arena.hpp: the host-memory blocks behind
// HostMemoryDevice and the CPU plugin's scratch.
#include <axon/host_arena.hpp>
#include <axon/host_blocks.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using axon::sdk::allocate_host_block;
using axon::sdk::free_host_block;
using axon::sdk::host_block_bytes;

bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

// The THPeligible field of /proc/self/smaps for the mapping holding p: 1 or
// 0, or -1 where the kernel does not report it.
int thp_eligible(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = at >= lo && at < hi;
      continue;
    }
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::stoi(line.substr(12));
  }
  return -1;
}

bool thp_never() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::stringstream s;
  s << in.rdbuf();
  return !in || s.str().find("[never]") != std::string::npos;
}

}  // namespace

TEST_CASE("host blocks below a megabyte are the C allocator's, 64-byte aligned") {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{1000}, (size_t{1} << 20) - 1}) {
    CAPTURE(bytes);
    CHECK(host_block_bytes(bytes, 64) == (bytes == 0 ? 64 : (bytes + 63) / 64 * 64));
    void* p = allocate_host_block(bytes, 64);
    REQUIRE(p != nullptr);
    CHECK(aligned(p, 64));
    std::memset(p, 0xab, bytes);
    free_host_block(p, bytes, 64);
  }
}

TEST_CASE("host blocks of a megabyte or more are whole, writable and, on Linux, on huge pages") {
  for (size_t bytes : {size_t{1} << 20, size_t{3211264}, size_t{4} << 20}) {
    CAPTURE(bytes);
    unsigned char* p = static_cast<unsigned char*>(allocate_host_block(bytes, 64));
    REQUIRE(p != nullptr);
    std::memset(p, 0x5a, bytes);
    CHECK(p[0] == 0x5a);
    CHECK(p[bytes - 1] == 0x5a);
#ifdef AXON_HOST_HUGE_BLOCKS
    CHECK(host_block_bytes(bytes, 64) == (bytes + (size_t{2} << 20) - 1) / (size_t{2} << 20) * (size_t{2} << 20));
    CHECK(aligned(p, size_t{2} << 20));
    const int eligible = thp_eligible(p);
    if (eligible >= 0 && !thp_never()) CHECK(eligible == 1);  // madvise(MADV_HUGEPAGE) took
#else
    CHECK(aligned(p, 64));
#endif
    free_host_block(p, bytes, 64);
  }
}

TEST_CASE("host blocks the host cannot give are null, never a crash") {
  CHECK(allocate_host_block(SIZE_MAX - 8, 64) == nullptr);  // the rounding would overflow
#ifdef AXON_HOST_HUGE_BLOCKS  // (AddressSanitizer aborts on such a request unless told otherwise)
  CHECK(allocate_host_block(size_t{1} << 60, 64) == nullptr);
#endif
  free_host_block(nullptr, 0, 64);
  free_host_block(nullptr, size_t{1} << 20, 64);
}

// axon/host_arena.hpp: medium blocks packed into 2 MiB huge-page chunks.
using axon::sdk::HostArena;

TEST_CASE("the arena serves medium blocks only, where huge pages can be asked for") {
#ifdef AXON_HOST_HUGE_BLOCKS
  CHECK_FALSE(HostArena::serves((size_t{64} << 10) - 1));
  CHECK(HostArena::serves(size_t{64} << 10));
  CHECK(HostArena::serves(802816));  // a 7x7x64 activation at batch 64
  CHECK(HostArena::serves((size_t{1} << 20) - 1));
  CHECK_FALSE(HostArena::serves(size_t{1} << 20));  // its own mapping (host_blocks.hpp)
#else
  CHECK_FALSE(HostArena::serves(802816));
#endif
}

TEST_CASE("arena blocks are aligned, disjoint and packed into as few chunks as fit them") {
  HostArena arena;
  constexpr size_t kBlock = 802816;  // two fit a chunk, three do not
  unsigned char* b[3];
  for (int i = 0; i < 3; ++i) {
    b[i] = static_cast<unsigned char*>(arena.allocate(kBlock));
    REQUIRE(b[i] != nullptr);
    CHECK(aligned(b[i], HostArena::kAlign));
    std::memset(b[i], 0x10 + i, kBlock);
  }
  for (int i = 0; i < 3; ++i) {  // no block overwrote another
    CAPTURE(i);
    CHECK(b[i][0] == 0x10 + i);
    CHECK(b[i][kBlock - 1] == 0x10 + i);
  }
  CHECK(arena.chunks() == 2);
  CHECK(b[1] == b[0] + kBlock);  // first fit: the second block follows the first
  CHECK(aligned(b[0], HostArena::kChunkBytes));
  CHECK(arena.idle_bytes() == 2 * HostArena::kChunkBytes - 3 * kBlock);
#ifdef AXON_HOST_HUGE_BLOCKS
  const int eligible = thp_eligible(b[0]);
  if (eligible >= 0 && !thp_never()) CHECK(eligible == 1);
#endif
  for (unsigned char* p : b) CHECK(arena.free(p, kBlock));
}

TEST_CASE("freed arena ranges are merged and taken again, and one empty chunk is kept") {
  HostArena arena;
  constexpr size_t kSmall = 100000, kLarge = (size_t{1} << 20) - 64;  // kSmall rounds up to 100032
  void* a = arena.allocate(kSmall);
  void* b = arena.allocate(kSmall);
  void* c = arena.allocate(kSmall);
  REQUIRE((a && b && c));
  CHECK(arena.free(b, kSmall));
  CHECK(arena.allocate(kSmall) == b);  // the hole is taken again
  CHECK(arena.free(a, kSmall));
  CHECK(arena.free(b, kSmall));  // merged with the range before it
  void* big = arena.allocate(2 * 100032);
  CHECK(big == a);  // a and b's ranges as one
  CHECK(arena.free(big, 2 * 100032));
  CHECK(arena.free(c, kSmall));  // and with the rest of the chunk: the chunk is whole again
  CHECK(arena.chunks() == 1);   // the only empty chunk stays
  CHECK(arena.idle_bytes() == HostArena::kChunkBytes);
  void* l1 = arena.allocate(kLarge);
  void* l2 = arena.allocate(kLarge);
  CHECK(l1 == a);  // the whole chunk served again
  CHECK(l2 == static_cast<char*>(l1) + kLarge);
  CHECK(arena.chunks() == 1);
  void* l3 = arena.allocate(kLarge);  // a second chunk
  CHECK(arena.chunks() == 2);
  for (void* p : {l1, l2, l3}) CHECK(arena.free(p, kLarge));
  CHECK(arena.chunks() == 1);  // of two empty chunks, one goes back to the host
  int outside = 0;
  CHECK_FALSE(arena.free(&outside, sizeof outside));  // not the arena's
}
