// Random tensors, TensorFlow's numbers for the same shape and seed
// (tf.random.stateless_normal, stateless_uniform: Philox-4x32-10, its
// Box-Muller transform and float conversion), bit for bit on the CPU and
// reference devices. They are the op table's StatelessRandomNormalV2 and
// StatelessRandomUniformV2, computed on the device the op is placed on (the
// scope's, soft placement's fallback logged); the seed pair's key and
// counter are derived on the host.
#pragma once

#include <axon/tensor.hpp>

#include <array>
#include <cstdint>

namespace axon::random {

// tf.random.stateless_normal(shape, seed=[s0, s1]): float32 standard normals
// times stddev plus mean (TensorFlow's order of operations).
Tensor stateless_normal(const Shape& shape, std::array<int64_t, 2> seed, float mean = 0.0f, float stddev = 1.0f);
// tf.random.stateless_uniform(shape, seed=[s0, s1], minval, maxval): float32
// in [0, 1) times (maxval - minval) plus minval.
Tensor stateless_uniform(const Shape& shape, std::array<int64_t, 2> seed, float minval = 0.0f, float maxval = 1.0f);
// tf.random.normal(shape, mean, stddev, seed): the stateless numbers of seed
// {seed, 0}, so the same seed gives the same tensor on every device and in
// every call. (TensorFlow's stateful op draws other numbers for an op seed,
// and new ones on each call; a generator's state is left to the caller,
// who passes another seed.)
Tensor normal(const Shape& shape, float mean = 0.0f, float stddev = 1.0f, int64_t seed = 0);

}  // namespace axon::random
