// The loops of the elementwise kernels (activations, arithmetic, softmax):
// fixed chunks over the device's threads, and vector maps whose last partial
// vector goes through a padded buffer, so that every element sees the same
// operations whatever its position, the instruction set or the thread count.
#pragma once

#include "device.hpp"
#include "simd.hpp"

#include <cstdint>
#include <cstring>

namespace axon::cpu {

// Loops below kElementwiseSerial elements run on the calling thread (waking
// threads costs microseconds); larger ones go in chunks of kElementwiseChunk.
inline constexpr int64_t kElementwiseSerial = 1 << 15;
inline constexpr int64_t kElementwiseChunk = 1 << 14;

// f(begin, end) over [0, n) in fixed chunks, on the device's threads.
template <class F>
void for_elements(CpuDevice& d, int64_t n, F&& f) {
  d.pool().for_ranges(n, kElementwiseChunk, n >= kElementwiseSerial, [&](int, int64_t b, int64_t e) { f(b, e); });
}

// y[i] = fn(x[i]) for i in [0, n), W lanes at a time.
template <int W, class Fn>
__attribute__((always_inline)) inline void map_unary(const Fn& fn, const float* x, float* y, int64_t n) {
  using F = typename simd::Vec<W>::f;
  int64_t i = 0;
  for (; i + W <= n; i += W) simd::store(y + i, fn(simd::load<F>(x + i)));
  if (i == n) return;
  float buf[W] = {};
  std::memcpy(buf, x + i, sizeof(float) * static_cast<size_t>(n - i));
  simd::store(buf, fn(simd::load<F>(buf)));
  std::memcpy(y + i, buf, sizeof(float) * static_cast<size_t>(n - i));
}

// y[i] = fn(a[i], b[i]) for i in [0, n), W lanes at a time.
template <int W, class Fn>
__attribute__((always_inline)) inline void map_binary(const Fn& fn, const float* a, const float* b, float* y,
                                                      int64_t n) {
  using F = typename simd::Vec<W>::f;
  int64_t i = 0;
  for (; i + W <= n; i += W) simd::store(y + i, fn(simd::load<F>(a + i), simd::load<F>(b + i)));
  if (i == n) return;
  float ba[W] = {}, bb[W] = {};
  std::memcpy(ba, a + i, sizeof(float) * static_cast<size_t>(n - i));
  std::memcpy(bb, b + i, sizeof(float) * static_cast<size_t>(n - i));
  simd::store(ba, fn(simd::load<F>(ba), simd::load<F>(bb)));
  std::memcpy(y + i, ba, sizeof(float) * static_cast<size_t>(n - i));
}

}  // namespace axon::cpu
