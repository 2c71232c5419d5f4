// ABI 1.9's stateless random ops (plugin_abi.h gives the recipe): each Philox
// block gives four consecutive elements, computed from its index alone, so
// the threads' chunks (fixed by the size) cannot change a value. The float
// operations and libm calls are TensorFlow's CPU kernel's (compiled without
// FMA contraction), so the values are TensorFlow's bit for bit.
#include "device.hpp"
#include "kernels.hpp"

#include <axon/philox.hpp>

#include <cmath>
#include <numbers>

namespace axon::cpu {
namespace {

// Blocks of four elements per chunk; below kSerialBlocks on the calling thread.
constexpr int64_t kChunkBlocks = 1 << 12;
constexpr int64_t kSerialBlocks = 1 << 13;

// TensorFlow's BoxMullerFloat on one pair of words: sin then cos, times r.
void box_muller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = philox::uint32_to_float(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  // In double, then rounded: TensorFlow writes 2.0f * M_PI * ..., and M_PI is a double.
  const auto v1 = static_cast<float>(2.0 * std::numbers::pi * philox::uint32_to_float(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  ::sincosf(v1, f0, f1);
  *f0 *= u2;
  *f1 *= u2;
}

// Runs block(counter of block i, four values out) over y's blocks; a partial
// last block is cut.
template <class F>
void by_blocks(CpuDevice& d, const KernelCall& c, F&& block) {
  const auto& a = c.attrs<axon_random_attrs>();
  float* y = c.output(0).data<float>();
  const int64_t n = c.output(0).numel(), blocks = (n + 3) / 4;
  const philox::Block counter{{a.counter[0], a.counter[1], a.counter[2], a.counter[3]}};
  const philox::Key key{{a.key[0], a.key[1]}};
  d.pool().for_ranges(blocks, kChunkBlocks, blocks >= kSerialBlocks, [&](int, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      float v[4];
      block(philox::generate(philox::advance(counter, static_cast<uint64_t>(i)), key), v);
      for (int64_t j = 0; j < 4 && 4 * i + j < n; ++j) {
        const float product = v[j] * a.scale;  // rounded, then the offset added (TensorFlow's two ops)
        y[4 * i + j] = product + a.offset;
      }
    }
  });
}

void normal(CpuDevice& d, const KernelCall& c) {
  by_blocks(d, c, [](const philox::Block& b, float* v) {
    box_muller(b.w[0], b.w[1], &v[0], &v[1]);
    box_muller(b.w[2], b.w[3], &v[2], &v[3]);
  });
}

void uniform(CpuDevice& d, const KernelCall& c) {
  by_blocks(d, c, [](const philox::Block& b, float* v) {
    for (int j = 0; j < 4; ++j) v[j] = philox::uint32_to_float(b.w[j]);
  });
}

}  // namespace

void add_random_kernels(sdk::KernelTable& t) {
  add<OpId::StatelessRandomNormalV2, normal>(t);
  add<OpId::StatelessRandomUniformV2, uniform>(t);
}

}  // namespace axon::cpu
