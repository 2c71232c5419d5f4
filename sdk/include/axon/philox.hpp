// TensorFlow's counter-based generator, as the random ops of ABI 1.9 use it
// (plugin_abi.h, axon_random_attrs): Philox-4x32-10 (Salmon et al.,
// "Parallel random numbers: as easy as 1, 2, 3";
// tensorflow/core/lib/random/philox_random.h), the seed scrambling of
// tf.random.stateless_* (GenerateKey in stateless_random_ops.cc) and
// TensorFlow's Uint32ToFloat. Header only, plain C++ that nvcc compiles for the
// device too (AXON_PHILOX_HD).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define AXON_PHILOX_HD __host__ __device__
#else
#define AXON_PHILOX_HD
#endif

namespace axon::philox {

struct Block {
  uint32_t w[4];
};
struct Key {
  uint32_t w[2];
};

// One Philox-4x32-10 block: ten rounds of the counter under the key schedule.
AXON_PHILOX_HD inline Block generate(Block c, Key k) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k.w[0] += 0x9E3779B9u;
      k.w[1] += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * c.w[0], p1 = uint64_t{0xCD9E8D57u} * c.w[2];
    const auto lo0 = static_cast<uint32_t>(p0), hi0 = static_cast<uint32_t>(p0 >> 32);
    const auto lo1 = static_cast<uint32_t>(p1), hi1 = static_cast<uint32_t>(p1 >> 32);
    c = Block{{hi1 ^ c.w[1] ^ k.w[0], lo1, hi0 ^ c.w[3] ^ k.w[1], lo0}};
  }
  return c;
}

// counter + n as 128-bit numbers, word 0 lowest (PhiloxRandom::Skip).
AXON_PHILOX_HD inline Block advance(Block c, uint64_t n) {
  uint64_t carry = n;
  for (int i = 0; i < 4 && carry != 0; ++i) {
    const uint64_t sum = uint64_t{c.w[i]} + (carry & 0xFFFFFFFFu);
    c.w[i] = static_cast<uint32_t>(sum);
    carry = (carry >> 32) + (sum >> 32);
  }
  return c;
}

// A float in [0, 1) from the low 23 bits of x (TensorFlow's Uint32ToFloat).
AXON_PHILOX_HD inline float uint32_to_float(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}

// The key and counter tf.random.stateless_*(seed=[seed0, seed1]) start from:
// the seeds are the counter of one block under a fixed key, whose words
// become the key and the counter's high half.
struct KeyCounter {
  Key key;
  Block counter;
};
inline KeyCounter stateless_key_counter(int64_t seed0, int64_t seed1) {
  const auto s0 = static_cast<uint64_t>(seed0), s1 = static_cast<uint64_t>(seed1);
  const Block mix = generate(Block{{static_cast<uint32_t>(s0), static_cast<uint32_t>(s0 >> 32),
                                    static_cast<uint32_t>(s1), static_cast<uint32_t>(s1 >> 32)}},
                             Key{{0x3ec8f720u, 0x02461e29u}});
  return {Key{{mix.w[0], mix.w[1]}}, Block{{0, 0, mix.w[2], mix.w[3]}}};
}

}  // namespace axon::philox
