// A seeded random source whose output is the same on every platform and
// standard library (std::uniform_*_distribution and std::shuffle are not), so
// initial weights and the shuffle order depend only on the seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace axon::nn {

// SplitMix64: tiny, fast, full-period, and good enough for weights and shuffles.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  // Derives an independent stream (e.g. one per epoch or per layer).
  static Rng derive(uint64_t seed, uint64_t stream) { return Rng(seed ^ (0x9e3779b97f4a7c15ull * (stream + 1))); }

  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 random bits (exact in float).
  float uniform01() { return static_cast<float>(next_u64() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform01(); }
  // Uniform integer in [0, n), n > 0, without modulo bias (rejects the short tail).
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      uint64_t r = next_u64();
      if (r >= threshold) return r % n;
    }
  }
  // Fisher-Yates shuffle.
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      auto j = static_cast<std::size_t>(below(i));
      std::swap(v[i - 1], v[j]);
    }
  }

 private:
  uint64_t state_;
};

}  // namespace axon::nn
