// Random tensors. stateless_normal gives TensorFlow's numbers for the same
// shape and seed (tf.random.stateless_normal: Philox-4x32-10 and its
// Box-Muller transform), bit for bit. They are computed on the host and
// copied to the scope's device.
#pragma once

#include <axon/tensor.hpp>

#include <array>
#include <cstdint>

namespace axon::random {

// tf.random.stateless_normal(shape, seed=[s0, s1]): float32 standard normals
// times stddev plus mean (TensorFlow's order of operations).
Tensor stateless_normal(const Shape& shape, std::array<int64_t, 2> seed, float mean = 0.0f, float stddev = 1.0f);
// tf.random.normal(shape, mean, stddev, seed): the stateless numbers of seed
// {seed, 0}, so the same seed gives the same tensor on every device.
// (TensorFlow's stateful op draws other numbers for an op seed.)
Tensor normal(const Shape& shape, float mean = 0.0f, float stddev = 1.0f, int64_t seed = 0);

}  // namespace axon::random
