// STREAM-style memory bandwidth (McCalpin's copy and triad) on a given
// number of threads, over arrays much larger than the last-level cache: the
// memory roof of the roofline report, measured in the same run as the sgemm
// rate it is set beside.
#pragma once

#include <cstdint>

namespace axon::bench {

struct StreamRates {
  double copy_gbs = 0;   // c[i] = a[i]: 8 bytes moved per element
  double triad_gbs = 0;  // a[i] = b[i] + s * c[i]: 12 bytes moved per element
  int64_t array_bytes = 0;
  int threads = 0;
};

// The last-level cache in bytes (0 when the system does not say).
int64_t last_level_cache_bytes();

// The best pass of each kernel within about `seconds`, on `threads` threads
// (0: every CPU this process may use), each thread working on the slice it
// first touched. array_bytes 0: 4 x the last-level cache, at least 64 MiB.
StreamRates stream_rates(int threads, int64_t array_bytes, double seconds);

}  // namespace axon::bench
