// Random tensors on the op table's stateless random ops: the seed pair's key
// and counter are derived here (TensorFlow's scrambling, axon/philox.hpp),
// the numbers on the device dispatch places the op on.
#include "context.hpp"

#include <axon/api/random.hpp>
#include <axon/error.hpp>
#include <axon/ops.hpp>
#include <axon/philox.hpp>

namespace axon::random {
namespace {

using api_detail::runtime;

axon_random_attrs attrs_of(std::array<int64_t, 2> seed, float scale, float offset) {
  const philox::KeyCounter kc = philox::stateless_key_counter(seed[0], seed[1]);
  axon_random_attrs a{};
  a.struct_size = sizeof a;
  for (int i = 0; i < 2; ++i) a.key[i] = kc.key.w[i];
  for (int i = 0; i < 4; ++i) a.counter[i] = kc.counter.w[i];
  a.scale = scale;
  a.offset = offset;
  return a;
}

// The output on the device dispatch chooses for `op` (scope, priority, fallback).
Tensor output_for(OpId op, const Shape& shape) {
  runtime();
  (void)numel(shape);  // UsageError for a negative dimension
  OpCall call;
  call.op = op;
  return Tensor(place(call), AXON_FLOAT32, shape);
}

}  // namespace

Tensor stateless_normal(const Shape& shape, std::array<int64_t, 2> seed, float mean, float stddev) {
  Tensor y = output_for(OpId::StatelessRandomNormalV2, shape);
  // TensorFlow: add(multiply(rnd, stddev), mean), each rounded to float.
  ops::stateless_random_normal(y, attrs_of(seed, stddev, mean));
  return y;
}

Tensor stateless_uniform(const Shape& shape, std::array<int64_t, 2> seed, float minval, float maxval) {
  Tensor y = output_for(OpId::StatelessRandomUniformV2, shape);
  // TensorFlow: add(multiply(rnd, maxval - minval), minval), each rounded to float.
  ops::stateless_random_uniform(y, attrs_of(seed, maxval - minval, minval));
  return y;
}

Tensor normal(const Shape& shape, float mean, float stddev, int64_t seed) {
  return stateless_normal(shape, {seed, 0}, mean, stddev);
}

}  // namespace axon::random
