// axon/host_blocks.hpp: the host-memory blocks behind HostMemoryDevice and
// the CPU plugin's scratch.
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
