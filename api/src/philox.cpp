#include "philox.hpp"

#include <cmath>
#include <cstring>
#include <numbers>

namespace axon::api_detail {
namespace {

constexpr uint32_t kW32A = 0x9E3779B9, kW32B = 0xBB67AE85;  // key schedule
constexpr uint32_t kM4x32A = 0xD2511F53, kM4x32B = 0xCD9E8D57;

Philox4x32::Block round(const Philox4x32::Block& c, const Philox4x32::Key& k) {
  const uint64_t p0 = uint64_t{kM4x32A} * c[0], p1 = uint64_t{kM4x32B} * c[2];
  const auto lo0 = static_cast<uint32_t>(p0), hi0 = static_cast<uint32_t>(p0 >> 32);
  const auto lo1 = static_cast<uint32_t>(p1), hi1 = static_cast<uint32_t>(p1 >> 32);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

// A float in [0, 1) from the low 23 bits, as TensorFlow's Uint32ToFloat.
float uint32_to_float(uint32_t x) {
  const uint32_t bits = (127u << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}

// TensorFlow's BoxMullerFloat: the same float operations in the same order
// (sincosf on Linux, as TensorFlow calls it there).
void box_muller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  const float epsilon = 1.0e-7f;
  float u1 = uint32_to_float(x0);
  if (u1 < epsilon) u1 = epsilon;
  // In double, then rounded: TensorFlow writes 2.0f * M_PI * ..., and M_PI is a double.
  const auto v1 = static_cast<float>(2.0 * std::numbers::pi * uint32_to_float(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  ::sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

}  // namespace

Philox4x32::Block Philox4x32::next() {
  Block c = counter_;
  Key k = key_;
  for (int r = 0; r < 9; ++r) {
    c = round(c, k);
    k[0] += kW32A;
    k[1] += kW32B;
  }
  c = round(c, k);
  for (uint32_t& word : counter_)  // a 128-bit increment
    if (++word != 0) break;
  return c;
}

Philox4x32 stateless_generator(int64_t seed0, int64_t seed1) {
  const auto s0 = static_cast<uint64_t>(seed0), s1 = static_cast<uint64_t>(seed1);
  // GenerateKey: the seeds are the counter of one draw under a fixed key,
  // whose result becomes the key and the high half of the counter.
  Philox4x32 scramble({static_cast<uint32_t>(s0), static_cast<uint32_t>(s0 >> 32), static_cast<uint32_t>(s1),
                       static_cast<uint32_t>(s1 >> 32)},
                      {0x3ec8f720, 0x02461e29});
  const Philox4x32::Block mix = scramble.next();
  return Philox4x32({0, 0, mix[2], mix[3]}, {mix[0], mix[1]});
}

std::vector<float> normal_floats(Philox4x32 gen, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; i += 4) {
    const Philox4x32::Block b = gen.next();
    float v[4];
    box_muller(b[0], b[1], &v[0], &v[1]);
    box_muller(b[2], b[3], &v[2], &v[3]);
    for (int64_t j = 0; j < 4 && i + j < count; ++j) out[static_cast<size_t>(i + j)] = v[j];
  }
  return out;
}

}  // namespace axon::api_detail
