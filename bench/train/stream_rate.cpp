// STREAM-style copy and triad (see stream_rate.hpp).
#include "stream_rate.hpp"

#include <axon/host_blocks.hpp>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace axon::bench {
namespace {

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

// Runs body(begin, end) over [0, n) split into `threads` slices, each on its
// own thread (the caller takes the first); returns the wall seconds.
template <class Body>
double run_split(int threads, size_t n, const Body& body) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  const size_t per = (n + static_cast<size_t>(threads) - 1) / static_cast<size_t>(threads);
  for (int t = 1; t < threads; ++t) {
    const size_t b = std::min(n, per * static_cast<size_t>(t)), e = std::min(n, b + per);
    pool.emplace_back([&body, b, e] { body(b, e); });
  }
  body(0, std::min(n, per));
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The fastest of passes made until `seconds` passed (at least three).
template <class Body>
double best_pass(int threads, size_t n, double seconds, const Body& body) {
  double best = 1e30, spent = 0;
  for (int pass = 0; pass < 3 || spent < seconds; ++pass) {
    const double s = run_split(threads, n, body);
    best = std::min(best, s);
    spent += s;
  }
  return best;
}

int64_t sysfs_cache_bytes(const std::string& index) {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/" + index + "/size");
  int64_t v = 0;
  std::string unit;
  if (!(in >> v)) return 0;
  in >> unit;  // "32768K" reads as 32768 then "K"
  if (!unit.empty() && (unit[0] == 'K' || unit[0] == 'k')) return v << 10;
  if (!unit.empty() && (unit[0] == 'M' || unit[0] == 'm')) return v << 20;
  return v;
}

// n floats from sdk::allocate_host_block, as a host-memory device allocates.
struct HostArray {
  float* p;
  size_t bytes;
  explicit HostArray(size_t n) : bytes(n * sizeof(float)) {
    p = static_cast<float*>(sdk::allocate_host_block(bytes, 64));
    if (p == nullptr) throw std::bad_alloc();
  }
  ~HostArray() { sdk::free_host_block(p, bytes, 64); }
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
};

}  // namespace

// sysfs gives one cache instance (what a core's working set competes for);
// glibc's sysconf may give a whole socket's (384 MiB for 32 MiB per CCD on
// an EPYC), so it is only the fallback.
int64_t last_level_cache_bytes() {
  int64_t best = 0;
  for (const char* index : {"index2", "index3", "index4"}) best = std::max(best, sysfs_cache_bytes(index));
#ifdef _SC_LEVEL3_CACHE_SIZE
  if (best == 0) best = std::max<int64_t>({0, sysconf(_SC_LEVEL2_CACHE_SIZE), sysconf(_SC_LEVEL3_CACHE_SIZE)});
#endif
  return best;
}

StreamRates stream_rates(int threads, int64_t array_bytes, double seconds) {
  StreamRates r;
  r.threads = threads > 0 ? threads : usable_cpus();
  r.array_bytes = array_bytes > 0 ? array_bytes : std::max<int64_t>(4 * last_level_cache_bytes(), int64_t{64} << 20);
  const size_t n = static_cast<size_t>(r.array_bytes) / sizeof(float);
  // Left uninitialised here, so each thread's first touch places its slice;
  // on the pages the CPU plugin's tensors get (huge pages: on one 2-core
  // EPYC this copy ran 35-55 GB/s on 4 KiB pages, 61-73 on huge pages).
  HostArray a(n), b(n), c(n);
  float* pa = a.p;
  float* pb = b.p;
  float* pc = c.p;
  run_split(r.threads, n, [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) pa[i] = 1.0f, pb[i] = 2.0f, pc[i] = 0.0f;
  });
  const double copy = best_pass(r.threads, n, seconds / 2, [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) pc[i] = pa[i];
  });
  const float s = 3.0f;
  const double triad = best_pass(r.threads, n, seconds / 2, [=](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; ++i) pa[i] = pb[i] + s * pc[i];
  });
  const double elements = static_cast<double>(n);
  r.copy_gbs = 2 * sizeof(float) * elements / copy / 1e9;
  r.triad_gbs = 3 * sizeof(float) * elements / triad / 1e9;
  return r;
}

}  // namespace axon::bench
