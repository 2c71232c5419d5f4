// Naive kernels of ABI 1.9's stateless random ops (plugin_abi.h gives the
// recipe): element by element, each from the Philox block of its index, with
// the float operations and libm calls TensorFlow's CPU kernel makes, so the
// values are TensorFlow's bit for bit.
#include "kernels.hpp"

#include <axon/philox.hpp>

#include <cmath>
#include <numbers>

namespace ref {
namespace {

using namespace axon::sdk;
namespace philox = axon::philox;

philox::Block block_of(const axon_random_attrs& a, int64_t element) {
  const philox::Block counter{{a.counter[0], a.counter[1], a.counter[2], a.counter[3]}};
  return philox::generate(philox::advance(counter, static_cast<uint64_t>(element / 4)), {{a.key[0], a.key[1]}});
}

// TensorFlow's BoxMullerFloat: the value of word `which` (0 or 1) of a pair.
float box_muller(uint32_t x0, uint32_t x1, int which) {
  float u1 = philox::uint32_to_float(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  // In double, then rounded: TensorFlow writes 2.0f * M_PI * ..., and M_PI is a double.
  const auto v1 = static_cast<float>(2.0 * std::numbers::pi * philox::uint32_to_float(x1));
  const float u2 = std::sqrt(-2.0f * std::log(u1));
  float s, c;
  ::sincosf(v1, &s, &c);
  return (which == 0 ? s : c) * u2;
}

// y = value * scale + offset, rounded after each operation.
float scaled(float value, const axon_random_attrs& a) {
  const float product = value * a.scale;
  return product + a.offset;
}

void normal(Device&, const KernelCall& c) {
  const auto& a = c.attrs<axon_random_attrs>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.output(0).numel(); ++i) {
    const philox::Block b = block_of(a, i);
    const int pair = static_cast<int>(i % 4) / 2;
    y[i] = scaled(box_muller(b.w[2 * pair], b.w[2 * pair + 1], static_cast<int>(i % 2)), a);
  }
}

void uniform(Device&, const KernelCall& c) {
  const auto& a = c.attrs<axon_random_attrs>();
  float* y = c.output(0).data<float>();
  for (int64_t i = 0; i < c.output(0).numel(); ++i)
    y[i] = scaled(philox::uint32_to_float(block_of(a, i).w[i % 4]), a);
}

}  // namespace

void add_random_kernels(KernelTable& t) {
  using axon::OpId;
  add<OpId::StatelessRandomNormalV2, normal>(t);
  add<OpId::StatelessRandomUniformV2, uniform>(t);
}

}  // namespace ref
