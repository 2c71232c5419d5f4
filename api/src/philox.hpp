// TensorFlow's counter-based generator and its normal distribution, on the
// host, so that axon::random::stateless_normal gives TensorFlow's numbers:
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3"; tensorflow/core/lib/random/philox_random.h), the seed scrambling of
// tf.random.stateless_* (GenerateKey in stateless_random_ops.cc) and the
// Box-Muller transform of NormalDistribution (random_distributions.h).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace axon::api_detail {

class Philox4x32 {
 public:
  using Block = std::array<uint32_t, 4>;
  using Key = std::array<uint32_t, 2>;
  Philox4x32(Block counter, Key key) : counter_(counter), key_(key) {}
  // The next block of four words; the counter then moves on by one.
  Block next();

 private:
  Block counter_;
  Key key_;
};

// The generator tf.random.stateless_normal(shape, seed=[s0, s1]) starts from.
Philox4x32 stateless_generator(int64_t seed0, int64_t seed1);

// `count` standard normal floats, as TensorFlow's NormalDistribution<Philox,
// float> draws them: each block of four words gives four values (two
// Box-Muller pairs); a partial last block is cut.
std::vector<float> normal_floats(Philox4x32 gen, int64_t count);

}  // namespace axon::api_detail
